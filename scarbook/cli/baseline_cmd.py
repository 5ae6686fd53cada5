"""`scarbook baseline set`, `show` and `clear`: the blessed session CI gates against."""

from __future__ import annotations

import os
import stat

import click

from scarbook.cli.common import examples, friendly_errors, get_project, say
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error, kind_of
from scarbook.history.baseline import (
    BASELINE_FILE,
    COMPLETE_STATES,
    baseline_from_session,
    baseline_path,
    load_baseline,
    refuse_judging,
    write_baseline,
)
from scarbook.history.store import now_iso
from scarbook.text import plural


@click.group("baseline", epilog=examples("scarbook baseline set", "scarbook baseline show", "scarbook baseline clear"))
def baseline_group() -> None:
    """The blessed session CI gates against: scarbook-baseline.json at the project root.

    Commit the file: it carries each case's counts, so it travels with the branch (history under
    workspaces/ does not). `scarbook eval --against baseline` compares every case with it; `baseline
    clear` removes it.
    """


@baseline_group.command("set", epilog=examples("scarbook baseline set", "scarbook baseline set prompt-v2"))
@click.argument("session", default="latest")
@click.option("--force", is_flag=True, help="Record a session that did not finish (cancelled, stopped, aborted), or one shard of a session.")
@click.pass_context
@friendly_errors
def baseline_set(ctx: click.Context, session: str, force: bool) -> None:
    """Record SESSION (id, label, `latest`; default latest) as the baseline in scarbook-baseline.json."""
    project = get_project(ctx)
    info = project.history.resolve(session)
    refuse_judging(info)  # even with --force: it has no verdicts yet
    if info.state not in COMPLETE_STATES and not force:
        raise ScarbookError(f"session {info.id} is {info.state!r}, not finished: its runs are only part of what it "
                            "planned — bless a finished session, or pass --force")
    shard = info.shard
    if shard is not None and shard.merged is None and not force:  # one shard: its merge is the session
        raise ScarbookError(f"session {info.id} is shard {shard.index}/{shard.count} of session {shard.session}: its "
                            "runs are only part of what the session planned — merge the shards (`scarbook merge`) and "
                            f"bless {shard.session}, or pass --force")
    baseline = baseline_from_session(info, project.history.runs(info.id), now_iso())
    path = write_baseline(project.root, baseline)
    judged = sum(c.judged for c in baseline.cases.values())
    say(f"baseline: session {baseline.name}, {plural(len(baseline.cases), 'case')}, {plural(judged, 'judged run')} -> {path}")
    if baseline.partial:
        say("note: this session skipped its judge checks (--skip-judge): only sessions that skip them too "
                   "can be compared with it")
    say(f"commit {BASELINE_FILE} so CI gates against it: scarbook eval --against baseline")


@baseline_group.command("show", epilog=examples("scarbook baseline show"))
@click.pass_context
@friendly_errors
def baseline_show(ctx: click.Context) -> None:
    """Print the recorded baseline: its session and each case's counts."""
    baseline = load_baseline(get_project(ctx).root)
    say(f"baseline: session {baseline.name}, state {baseline.state}, recorded {baseline.recorded_at}, "
               f"git {baseline.git_revision or '-'}, agent {baseline.agent or '-'}"
               + (", partial (--skip-judge)" if baseline.partial else ""))
    say(f"{'case':<28} {'pass':>5} {'fail':>5} {'err':>4} {'rate':>5}")
    for cid, c in baseline.cases.items():
        rate = "  n/a" if c.rate is None else f"{c.rate:5.0%}"
        say(f"{cid[:28]:<28} {c.passes:>5} {c.fails:>5} {c.errors:>4} {rate}")


@baseline_group.command("clear", epilog=examples("scarbook baseline clear"))
@click.pass_context
@friendly_errors
def baseline_clear(ctx: click.Context) -> None:
    """Remove scarbook-baseline.json: `report` then compares with nothing, and `eval --against baseline`
    is refused until `baseline set` records another. Commit the removal so CI stops gating against it."""
    path = baseline_path(get_project(ctx).root)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise ScarbookError(f"no baseline to clear: {path} does not exist") from None
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # a folder or a FIFO there is not scarbook's to remove
        raise ScarbookError(f"{path} is {kind_of(mode)}, not the baseline file — move it aside yourself "
                            f"(mv {path} {path}.old)")
    try:
        old = load_baseline(path.parent).name
    except ScarbookError:  # a damaged file is cleared all the same: that is often why
        old = None
    try:
        os.unlink(path)  # a link goes, not what it leads to
    except OSError as exc:
        raise ScarbookError(f"cannot remove the baseline {path}: {describe_os_error(exc)}") from None
    say(f"removed {path}" + (f" (session {old})" if old else "")
        + f"; commit its removal (git rm {BASELINE_FILE}) so CI stops gating against it")


COMMANDS = [baseline_group]
