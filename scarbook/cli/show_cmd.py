"""`scarbook show CASE`: the runs of a case in a session, with every check's detail and judge verdicts."""

from __future__ import annotations

import click

from scarbook.cases.ids import no_such_cases
from scarbook.cases.lineage import CaseIdLog, counts_session
from scarbook.cli.common import examples, friendly_errors, get_project, report_history_problems, say, style
from scarbook.errors import ScarbookError
from scarbook.models import RunRecord, RunStatus
from scarbook.models.run import KEPT_NAMES
from scarbook.run.causes import whose_word
from scarbook.session.plan import case_id_of_arg
from scarbook.text import names_left_out, plural


@click.command("show", epilog=examples(
    "scarbook show write-one-line",
    "scarbook show write-one-line --session prompt-v2"))
@click.argument("case_id")
@click.option("--session", "session_ref", default=None, help="Session id or label (default: the latest that ran the case).")
@click.option("--agent", "agent_name", default=None,
              help="In a session of several agents (eval --agents): only this agent's runs.")
@click.pass_context
@friendly_errors
def show_command(ctx: click.Context, case_id: str, session_ref: str | None, agent_name: str | None) -> None:
    """The runs of CASE in its latest session, with every check's detail and judge verdicts."""
    project = get_project(ctx)
    case_id = case_id_of_arg(project, case_id)
    history = project.history
    # ('', '.' and '..' lead to cases/ itself or above it: no case's folder)
    has_folder = case_id not in ("", ".", "..") and (project.cases_dir / case_id).is_dir()
    entry = CaseIdLog(project.workspaces_dir).load().get(case_id) if has_folder else None
    earlier = ""
    listed = history.sessions()
    problems = list(listed.problems)  # said after the runs, with what reading them met
    if session_ref is not None:
        info = history.resolve(session_ref, listed)
        runs = history.runs(info.id, case_id, info)
        problems += runs.problems
        if case_id not in info.case_ids and not runs:  # (it printed the session's line over nothing, exit 0)
            raise ScarbookError(f"session {info.id} did not run {case_id} (it ran {', '.join(info.case_ids) or 'no case'})"
                                f" — `scarbook show {case_id}` shows the latest session that did")
        if entry is not None and not counts_session(entry, info.id, info.started_at):  # shown, but said whose
            earlier = (f"note: these runs are not the present case {case_id}'s: session {info.id} ran the case "
                       f"that had the id before ({entry.note(case_id)})")
    else:
        hit = history.latest_by_case([case_id], listed).get(case_id)
        problems += hit.problems if hit is not None else []
        if hit is not None and not counts_session(entry, hit.session.id, hit.session.started_at):
            hit = None  # those runs are another case's, recorded before this one got the id
        if hit is None:
            if not has_folder:
                raise no_such_cases(project.cases_dir, [case_id])  # (nor runs of a case removed since)
            raise ScarbookError(f"case {case_id!r} has no recorded runs — run `scarbook eval {case_id}`"
                                + (f" ({entry.note(case_id)})" if entry else ""))
        info, runs = hit.session, hit.runs
        if info.agent_names:  # hit.runs are the baseline's alone (the library's one rate); show shows every agent
            runs = history.runs(info.id, case_id, info)  # (its problems are hit's, said once)
    say(f"{case_id} in session {info.id}{f' [{info.label}]' if info.label else ''} ({info.state}), "
               f"{'agents' if info.agent_names else 'agent'} {info.agent}")
    if earlier:
        say(earlier)
    if agent_name is not None:
        names = info.agent_names
        if agent_name not in names:
            raise ScarbookError(f"--agent {agent_name}: session {info.id} ran "
                                + (f"the agents {', '.join(names)}" if names else "one agent, unnamed"))
        runs = [r for r in runs if r.agent == agent_name]
    for r in runs:
        _say_run(r)
    report_history_problems(problems)


def _say_run(r: RunRecord) -> None:
    """One run: its status and why, cause, attempts, checks and judge items, usage, where it ran, output."""
    mark = {RunStatus.PASS: style("PASS", fg="green"), RunStatus.FAIL: style("FAIL", fg="red"),
            RunStatus.ERROR: style("ERROR", fg="magenta"),
            RunStatus.UNJUDGED: style("UNJUDGED", fg="yellow")}.get(r.status, r.status)
    say(f"\nrun {r.k}{f', agent {r.agent}' if r.agent else ''}: {mark} — {r.reason}  ({r.duration_s:.2f}s)")
    if r.cause:
        say(f"  cause: {r.cause.kind} ({r.cause.rule}) — {r.cause.evidence}")
    for a in r.attempts[:-1]:  # the last attempt is this record
        why = a.cause
        word = whose_word(why)
        say(f"  attempt {a.attempt}: {a.status} — {why.kind if why else '?'} ({why.rule if why else '?'}"
            f"{', ' + word if word else ''}): {a.reason}; workspace {a.workspace}")
    for c in r.checks:
        say(f"  [{c.status:>7}] {c.index + 1}. {c.type}: {c.detail}")
        for item in c.judge.items if c.judge is not None else ():
            say(f"            item {item.item}: {item.verdict} — {item.text}: {item.reason}")
    if r.diff.changed or r.diff.left_out:
        more = names_left_out(r.diff.left_out, KEPT_NAMES)
        kinds = [f"{kind} {', '.join(names)}" for kind, names in (("created", r.diff.created),
                                                                   ("modified", r.diff.modified),
                                                                   ("deleted", r.diff.deleted)) if names]
        say(f"  diff: {'; '.join(kinds + ([f'and {more}'] if more else []))}")
    if r.judge_usage.total_tokens:
        u = r.judge_usage
        cached = (f", prompt cache {u.cache_write_tokens} written / {u.cache_read_tokens} read"
                  if u.cache_write_tokens or u.cache_read_tokens else "")
        say(f"  judge usage: {u.input_tokens} in / {u.output_tokens} out tokens{cached}, ${u.cost_usd:.4f}")
    for c in r.checks:
        hit = c.judge.cache if c.judge is not None else None
        if hit is not None:
            say(f"  judge verdict from the cache: {plural(hit.hits, 'sample')} graded {hit.graded_at}, "
                f"saved ${hit.saved_usd:.4f}")
    if r.agent_usage.total_tokens:
        say(f"  agent usage: {r.agent_usage.total_tokens} tokens, ${r.agent_usage.cost_usd:.4f}")
    if r.node:
        say(f"  ran on node {r.node.get('id', '?')[:12]} ({r.node.get('host', '?')})"
                   + (f", retried {r.infra_retries}x after a lost worker" if r.infra_retries else ""))
    if r.workspace_note:
        say(f"  {r.workspace_note}")
    for note in r.notes:
        say(f"  note: {note}")
    if r.workspace_kept:
        say(f"  workspace: {r.workspace}")
    excerpt = r.output_excerpt.strip().replace("\n", "\n    ")
    if excerpt:
        say(f"  output: {excerpt[:400]}")


COMMANDS = [show_command]
