"""Commands about the scar collection itself: init, list, show, import-cases."""

from __future__ import annotations

import json
from pathlib import Path

import click

from scarbook.cases.admin import new_case_id
from scarbook.cases.io import save_case, validate_case_data
from scarbook.cases.lineage import CaseIdLog, counts_session
from scarbook.cli.common import friendly_errors, get_project, report_case_problems, report_history_problems, say
from scarbook.config import CONFIG_FILE, STARTER_CONFIG
from scarbook.errors import CaseError, ScarbookError
from scarbook.models import Case, RunStatus
from scarbook.reports.table import strip_of
from scarbook.text import interval_beside, pct_beside, plural
from scarbook.views.library_rows import (
    LibraryRow,
    build_rows,
    correct_rows,
    corrected_line,
    human_age,
    notes_of,
)
from scarbook.views.trends import project_trends


@click.command("init")
@click.argument("folder", type=click.Path(file_okay=False), default=".")
@friendly_errors
def init_command(folder: str) -> None:
    """Start a scar collection here: a commented scarbook.yaml, cases/, and workspaces/ in .gitignore."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    cfg = root / CONFIG_FILE
    if cfg.exists():
        click.echo(f"{cfg} already exists; left as it is")
    else:
        cfg.write_text(STARTER_CONFIG, encoding="utf-8")
        click.echo(f"wrote {cfg}")
    (root / "cases").mkdir(exist_ok=True)
    gi = root / ".gitignore"
    lines = gi.read_text(encoding="utf-8").splitlines() if gi.exists() else []
    if not any(line.strip().strip("/") == "workspaces" for line in lines):
        with open(gi, "a", encoding="utf-8") as fh:
            if lines and lines[-1] != "":
                fh.write("\n")
            fh.write("# scarbook: run scratch dirs and history\n/workspaces/\n")
        click.echo(f"added /workspaces/ to {gi}")
    click.echo("next: file your first scar with `scarbook` (the TUI) or `scarbook import TRANSCRIPT`")


@click.command("list")
@click.pass_context
@friendly_errors
def list_command(ctx: click.Context) -> None:
    """The cases with their latest pass rate, as the TUI library shows them; notes say when that
    session was cancelled, partial, interrupted or stale, and "regressed since S" when `scarbook diff S`
    against it calls the case regressed. Invalid cases are reported (exit 2 if any)."""
    project = get_project(ctx)
    found = project.load_cases()
    rows = build_rows(project, found)
    trends = project_trends(project, found.cases)
    for row in rows:
        row.trend = trends.cases.get(row.key)
    report_history_problems([*rows.problems, *trends.problems])
    say(f"{'case':<24} {'rate':>5} {'95% CI':<10} {'p/f/e':<9} {'last run':<12} {'latest runs':<12} "
               f"{'notes':<16} title")
    for row in rows:
        if row.case is not None:
            say(format_list_row(row))
    judge_line = correct_rows(project, rows)  # the library's ≈ rates: corrected for the judge's measured error
    if judge_line:
        say("\n" + judge_line)
        for row in rows:
            if row.stats is not None and row.stats.corrected is not None:
                say(f"  {row.key}: {corrected_line(row.stats)}")
    noted = [r for r in rows if r.case is not None and r.history_note]
    if noted:  # why a case with runs under its id shows "never"
        say("\nnotes:")
        for row in noted:
            say(f"  {row.key}: {row.history_note}")
    report_case_problems(found.problems)
    if found.problems:
        ctx.exit(2)


def format_list_row(row: LibraryRow) -> str:
    """One line of `scarbook list`: the library row's figures, coloured by band."""
    s = row.stats
    if s is None or (not row.runs and not row.damaged):
        notes = f"{row.history_mark} (note)" if row.history_mark else ""
        return f"{row.key[:24]:<24} {'–':>5} {'':<10} {'':<9} {'never':<12} {'':<12} {notes:<16} {row.title}"
    rate = pct_beside(s.rate, s.threshold)
    ci = "" if s.rate is None else interval_beside(s.lo, s.hi, s.threshold)
    notes = ",".join(notes_of(row)) or "-"
    colour = {"green": "green", "yellow": "yellow", "red": "red"}.get(s.band)
    return (f"{row.key[:24]:<24} {click.style(f'{rate:>5}', fg=colour)} {ci:<10} "
            f"{f'{s.passes}/{s.fails}/{s.errors}':<9} {human_age(row.age_s):<12} {strip_of(row.runs, 12):<12} "
            f"{notes:<16} {row.title}")


@click.command("show")
@click.argument("case_id")
@click.option("--session", "session_ref", default=None, help="Session id or label (default: the latest that ran the case).")
@click.pass_context
@friendly_errors
def show_command(ctx: click.Context, case_id: str, session_ref: str | None) -> None:
    """The runs of CASE in its latest session, with every check's detail and judge verdicts."""
    project = get_project(ctx)
    history = project.history
    entry = CaseIdLog(project.workspaces_dir).load().get(case_id) if (project.cases_dir / case_id).is_dir() else None
    earlier = ""
    listed = history.sessions()
    problems = list(listed.problems)  # said after the runs, with what reading them met
    if session_ref:
        info = history.resolve(session_ref, listed)
        runs = history.runs(info.id, case_id, info)
        problems += runs.problems
        if entry is not None and not counts_session(entry, info.id, info.started_at):  # shown, but said whose
            earlier = (f"note: these runs are not the present case {case_id}'s: session {info.id} ran the case "
                       f"that had the id before ({entry.note(case_id)})")
    else:
        hit = history.latest_by_case([case_id], listed).get(case_id)
        problems += hit.problems if hit is not None else []
        if hit is not None and not counts_session(entry, hit.session.id, hit.session.started_at):
            hit = None  # those runs are another case's, recorded before this one got the id
        if hit is None:
            if not (project.cases_dir / case_id).is_dir():
                raise ScarbookError(f"no case {case_id!r} in {project.cases_dir} and no recorded runs of it — "
                                    "`scarbook list` shows the cases")
            raise ScarbookError(f"case {case_id!r} has no recorded runs — run `scarbook eval {case_id}`"
                                + (f" ({entry.note(case_id)})" if entry else ""))
        info, runs = hit.session, hit.runs
    say(f"{case_id} in session {info.id}{f' [{info.label}]' if info.label else ''} ({info.state}), "
               f"agent {info.agent}")
    if earlier:
        say(earlier)
    for r in runs:
        mark = {RunStatus.PASS: click.style("PASS", fg="green"), RunStatus.FAIL: click.style("FAIL", fg="red"),
                RunStatus.ERROR: click.style("ERROR", fg="magenta"),
                RunStatus.UNJUDGED: click.style("UNJUDGED", fg="yellow")}.get(r.status, r.status)
        say(f"\nrun {r.k}: {mark} — {r.reason}  ({r.duration_s:.2f}s)")
        if r.cause:
            say(f"  cause: {r.cause['kind']} ({r.cause['rule']}) — {r.cause['evidence']}")
        for a in r.attempts[:-1]:  # the last attempt is this record
            why = a.get("cause") or {}
            say(f"  attempt {a.get('attempt')}: {a.get('status')} — {why.get('kind', '?')} ({why.get('rule', '?')}): "
                f"{a.get('reason')}; workspace {a.get('workspace')}")
        for c in r.checks:
            say(f"  [{c.status:>7}] {c.index + 1}. {c.type}: {c.detail}")
            for item in (c.judge or {}).get("items", []):
                say(f"            item {item.get('item')}: {item.get('verdict')} — {item.get('text')}: "
                           f"{item.get('reason')}")
        if r.diff.changed:
            say(f"  diff: created {r.diff.created}, modified {r.diff.modified}, deleted {r.diff.deleted}")
        if r.judge_usage.total_tokens:
            u = r.judge_usage
            cached = (f", prompt cache {u.cache_write_tokens} written / {u.cache_read_tokens} read"
                      if u.cache_write_tokens or u.cache_read_tokens else "")
            say(f"  judge usage: {u.input_tokens} in / {u.output_tokens} out tokens{cached}, ${u.cost_usd:.4f}")
        for c in r.checks:
            hit = (c.judge or {}).get("cache")
            if isinstance(hit, dict):
                say(f"  judge verdict from the cache: {plural(int(hit.get('hits') or 0), 'sample')} graded "
                    f"{hit.get('graded_at')}, saved ${float(hit.get('saved_usd') or 0):.4f}")
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
    report_history_problems(problems)


def convert_json_case(entry: object, source: Path, index: int) -> Case:
    """One entry of the JSON case list (`id`, `task`, `checks`; paths prefixed `workspace/`)."""
    if not isinstance(entry, dict):
        raise CaseError(source, f"entry {index} is not an object", fix="each entry is {\"id\":..., \"task\":..., \"checks\": [...]}")
    checks = []
    for check in entry.get("checks", []) or []:
        if not isinstance(check, dict):
            raise CaseError(source, f"entry {index} ({entry.get('id')}): a check is not an object")
        check = dict(check)
        for key in ("path",):
            if isinstance(check.get(key), str) and check[key].startswith("workspace/"):
                check[key] = check[key][len("workspace/"):]
        checks.append(check)
    data = {k: v for k, v in entry.items() if k != "checks"}
    data["checks"] = checks
    try:
        return validate_case_data(data, source)
    except CaseError as exc:
        raise CaseError(source, f"entry {index} ({entry.get('id', '?')}): {exc.problem}", fix=exc.fix) from None


@click.command("import-cases")
@click.argument("json_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite case folders that already exist.")
@click.pass_context
@friendly_errors
def import_cases_command(ctx: click.Context, json_file: str, force: bool) -> None:
    """Convert a JSON case list (e.g. evals/cases.json) into case folders under cases/."""
    project = get_project(ctx)
    source = Path(json_file)
    try:
        entries = json.loads(source.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CaseError(source, f"not valid JSON: {exc.msg}", line=exc.lineno, fix="fix the JSON syntax") from None
    if not isinstance(entries, list):
        raise CaseError(source, "expected a JSON list of cases", fix="wrap the cases in [ ... ]")
    cases = [convert_json_case(e, source, i) for i, e in enumerate(entries)]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise CaseError(source, f"duplicate case id {c.id!r}", fix="give each case its own id")
        seen.add(c.id)
    existing = [c.id for c in cases if (project.cases_dir / c.id).exists()]
    if existing and not force:
        raise ScarbookError(f"these cases already exist in {project.cases_dir}: {', '.join(existing)} — "
                            "use --force to overwrite them")
    for c in cases:
        with new_case_id(project, c.id):
            path = save_case(c, project.cases_dir)
        click.echo(f"wrote {path}")
    click.echo(f"imported {plural(len(cases), 'case')}; cases that need files in the workspace need a seed/ folder")


COMMANDS = [init_command, list_command, show_command, import_cases_command]
