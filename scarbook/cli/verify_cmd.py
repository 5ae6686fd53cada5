"""`scarbook verify`: does each case catch its own scar? `scarbook import` ends with the same certification
(verify_judge, say_verification)."""

from __future__ import annotations

import asyncio

import click

from scarbook.cases.io import save_case
from scarbook.cases.verifications import CATCHES, ERROR, UNVERIFIED, ItemCertification, Verification
from scarbook.cli.common import examples, friendly_errors, get_project, report_case_problems, say, style, warn
from scarbook.cli.drive import Progress, connect_executor, drive_session, prepare_or_say
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error, unwritable_why
from scarbook.models import ItemFinding
from scarbook.run.outcome import EXIT_NO_VERDICT, EXIT_USAGE
from scarbook.run.plan import SessionSite
from scarbook.session.certify import verify_cases
from scarbook.session.plan import EvalRequest, plan_eval, select_cases
from scarbook.text import plural
from scarbook.tools.verify import JUDGED_TIMES, reproduced


@click.command("verify", epilog=examples("scarbook verify", "scarbook verify write-one-line --judged 5 --reproduce 10"))
@click.argument("case_ids", metavar="[CASE]...", nargs=-1)
@click.option("--skip-judge", is_flag=True, help="Verify with rule checks only (as when no judge key is set): a scar "
              "that only an llm_judge check would catch stays unverified.")
@click.option("--judged", "times", type=click.IntRange(1), default=JUDGED_TIMES, show_default=True,
              help="Judge each artifact this many times (cases with an llm_judge check): differing verdicts "
              "are shown as 'judge unstable on this case' instead of certifying.")
@click.option("--reproduce", "reproduce", type=click.IntRange(1), default=None, metavar="N",
              help="Also run the agent N times on each case and record in case.yaml how often the incident "
              "reproduced (scar.reproduced: runs, fails, date, agent).")
@click.pass_context
@friendly_errors
def verify_command(ctx: click.Context, case_ids: tuple[str, ...], skip_judge: bool, times: int,
                   reproduce: int | None) -> None:
    """Certify each case's scar: (a) the failed artifact must FAIL the checks, (b) the good one PASS,
    both judged --judged times so an unstable judge shows; with --reproduce N, (c) how often the agent
    reproduces the incident. Badges: certified (a, b, judge stable), verified (a), misses, rejects
    good, judge unstable, unverified.

    Exit 1 when a case misses its scar, rejects its good artifact or its judge is unstable, 3 on errors.
    """
    project = get_project(ctx)
    found = project.load_cases()
    report_case_problems(found.problems)
    cases = select_cases(project, found, case_ids, (), command="verify")
    if reproduce:
        _refuse_unwritable_scars(project, cases)
    verified = asyncio.run(verify_cases(project, cases, skip_judge=skip_judge, times=times))
    if verified.judge_missing:  # rule checks still decide every scar they can
        say(f"verify: {verified.judge_missing}: llm_judge checks are skipped; a scar only the judge can catch "
            "stays unverified", err=True)
    results = verified.results
    width = max(len(c.id) for c in cases)
    for v in results:
        say_verification(v, width)
    if reproduce:
        _reproduce(ctx, project, found, cases, reproduce, width)
    bad = [v for v in results if v.outcome not in (CATCHES, UNVERIFIED, ERROR)]
    if bad:
        ctx.exit(1)
    if any(v.outcome == ERROR for v in results):
        ctx.exit(3)


def _refuse_unwritable_scars(project, cases) -> None:
    """verify --reproduce writes scar.reproduced to each case.yaml: a folder it cannot write is said before
    anything runs (the agent's runs would be spent on a count that cannot be kept)."""
    for case in cases:
        folder = project.cases_dir / case.id
        why = unwritable_why(folder) if case.scar is not None else None
        if why:
            raise ScarbookError(f"cannot record scar.reproduced in {folder / 'case.yaml'}: {why} — make {folder} "
                                "a writable folder, or point cases_dir in scarbook.yaml at one; nothing ran")


def _reproduce(ctx: click.Context, project, found, cases, n: int, width: int) -> None:
    """verify --reproduce N: run the agent N times per case — planned, prepared and driven as `scarbook eval`
    runs a session (session/, cli/drive.py) — and write scar.reproduced to its case.yaml."""
    for case in cases:
        if case.scar is None:
            say(f"{case.id:<{width}}  reproduce: no scar to reproduce")
            continue
        folder = project.cases_dir / case.id
        request = EvalRequest(SessionSite.of(project), found, case_ids=(case.id,), runs=str(n),
                              label=f"reproduce {case.id}", fixed_runs=True)
        planned = plan_eval(request)
        prep = prepare_or_say(planned.site, planned.plan)
        if prep is None or prep.session is None:
            ctx.exit(EXIT_USAGE)
        for note in prep.notes:
            warn(note)
        finished = drive_session(prep.session, Progress(quiet=False), connect_executor(prep.session))
        counts = reproduced(prep.session, finished)
        if counts is None:
            say(f"{case.id:<{width}}  reproduce: the session did not finish — nothing recorded", err=True)
            ctx.exit(EXIT_NO_VERDICT)
        case.scar.reproduced = counts
        try:
            save_case(case, project.cases_dir)
        except OSError as exc:
            raise ScarbookError(f"could not record scar.reproduced in {folder / 'case.yaml'}: {describe_os_error(exc)} "
                                f"— make {folder} a writable folder; the runs are kept in session "
                                f"{counts['session']}") from None
        say(f"{case.id:<{width}}  reproduced the incident in {counts['fails']} of {plural(counts['runs'], 'run')} "
            f"(session {counts['session']}; recorded as scar.reproduced)")


def say_verification(v: Verification, width: int) -> None:
    colour = {CATCHES: "green", UNVERIFIED: "yellow", ERROR: "magenta"}.get(v.outcome, "red")
    say(f"{v.case_id:<{width}}  {style(v.outcome, fg=colour)}: {v.detail}")
    if v.certified:
        how = (f"the judge gave the case the same verdict all {v.judged} times" if v.judge_stable
               else "rule checks only, no judge to disagree")
        say(f"{'':<{width}}  {style('certified', fg='green')}: the failed artifact fails, the good one "
            f"passes; {how}")
    for line in item_lines(v):
        say(f"{'':<{width}}  {line}")


def item_lines(v: Verification) -> list[str]:
    """Which items and rule checks catch the incident, and why each other rubric item does not (issue 35.2)."""
    if not v.items:
        return []
    names = [_name(i) for i in v.catching]  # (none: the verification's own line says so)
    lines = [f"catch the incident: {', '.join(names)}"] if names else []
    lines += [f"{_name(i)} {style(i.finding, fg='yellow')}: {i.why}" for i in v.items
              if i.is_item and i.finding not in (ItemFinding.CATCHING, ItemFinding.UNDECIDED)]
    return lines


def _name(item: ItemCertification) -> str:
    return f"item {item.item_id}" if item.is_item else f"check {item.check_index + 1} ({item.kind})"


COMMANDS = [verify_command]
