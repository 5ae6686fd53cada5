"""`scarbook import`: an agent's transcript into a draft case, certified as `scarbook verify` would."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import click

from scarbook.cases.ids import check_case_id_form
from scarbook.cases.io import load_case
from scarbook.cases.verifications import badge_of, partial_note
from scarbook.cli.common import examples, friendly_errors, get_project, say, warn
from scarbook.cli.verify_cmd import say_verification
from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error, unwritable_why
from scarbook.session.certify import verify_cases
from scarbook.tools.verify import JUDGED_TIMES


@click.command("import", epilog=examples(
    "scarbook import session.jsonl --list",
    "scarbook import session.jsonl --id wrote-whole-readme --artifact 3 --seed-suggested",
    "scarbook import log.txt --format plain --id crash-log"))
@click.argument("transcript", type=click.Path(exists=True))  # a folder is said by load_transcript, with its files
@click.option("--list", "list_only", is_flag=True, help="Print the candidate artifacts and seed suggestions; write nothing.")
@click.option("--id", "case_id", default=None, help="Id of the draft case to write (cases/<id>/).")
@click.option("--artifact", "artifact_index", type=click.IntRange(1), default=None,
              help="Candidate number (from --list) that is the failed artifact: a file written, an answer, or a tool "
                   "call's input (a PR body sent through a tool; the case then reads that call's input each run); "
                   "default: the last file written, else the final answer.")
@click.option("--turn", "turn", type=click.IntRange(1), default=None, metavar="N",
              help="Which prompt of a multi-turn session is the task (--list numbers them); default: the turn "
                   "that produced the artifact.")
@click.option("--task", "task_text", default=None, metavar="TEXT",
              help="The instruction the agent was given, when the transcript holds no prompt (codex exec --json "
                   "logs none) or to replace the one it holds.")
@click.option("--seed-suggested", is_flag=True, help="Copy every suggested seed file whose content the transcript holds.")
@click.option("--format", "fmt", default=None, metavar="NAME",
              help="Transcript format, skipping detection: a name --list prints (claude-code, codex, openai-chat, "
                   "anthropic-messages, plain, ...; any other name is refused with the list of them all).")
@click.option("--trace", "trace", default=None, metavar="ID",
              help="OTel file with several traces, a ChatGPT / claude.ai export with several conversations, or an "
                   "OpenHands evaluation's output.jsonl (its instance ids): the one to import (--list shows them; "
                   "default: the latest, or the first instance not resolved).")
@click.option("--sample", "sample", default=None, metavar="ID[:EPOCH]",
              help="Inspect log: the sample to import (--list shows them; default: the first that did not pass).")
@click.option("--root", "root", default=None, metavar="DIR",
              help="Folder the transcript's absolute paths are made relative to (default: the agent's cwd, "
                   "else the common root of the files it touched; --list shows it).")
@click.option("--good", "good", default=None, metavar="N|PATH",
              help="The good artifact (scar.good_artifact, a result that must PASS): a candidate number from "
                   "--list (a later answer or file of the transcript), or a file. The draft is then certified.")
@click.option("--skip-judge", is_flag=True, help="Certify the draft with rule checks only.")
@click.option("--draft-rubric", is_flag=True, help="Draft the rubric from the incident as `scarbook rubric draft` "
              "does (one judge call; rule checks from the artifacts alone without a key or with --offline) and "
              "keep what catches it.")
@click.option("--note", default="", help="With --draft-rubric: what went wrong, in your words.")
@click.option("--offline", is_flag=True, help="With --draft-rubric: ask no judge, propose rule checks only.")
@click.option("--judged", "times", type=click.IntRange(1), default=JUDGED_TIMES, show_default=True,
              help="Judge each artifact this many times when certifying the draft (as verify --judged).")
@click.pass_context
@friendly_errors
def import_command(ctx: click.Context, transcript: str, list_only: bool, case_id: str | None,
                   artifact_index: int | None, seed_suggested: bool, fmt: str | None, trace: str | None,
                   root: str | None, turn: int | None, good: str | None, skip_judge: bool, times: int,
                   sample: str | None, draft_rubric: bool, note: str, offline: bool, task_text: str | None) -> None:
    """Turn an agent transcript (Claude Code log, Codex, Messages API JSON, OpenAI, OTel, an Inspect eval
    log's sample, text) into a draft case.

    The draft is then certified as `scarbook verify` does: with --good, fully (the failed artifact
    must fail, the good one pass); without, partially (the failed artifact only), and it says so.
    The exit code is 0 once the draft is written, whatever the certification says.

    What the transcript itself is unsure of (a line cut off by a crash, a dropped branch, a tool
    call with no result) is printed on stderr as a warning.
    """
    if (note or offline) and not draft_rubric:  # both only steer the rubric's draft: alone they would do nothing
        given = " and ".join(o for o, on in (("--note", note), ("--offline", offline)) if on)
        both = " and " in given
        raise ScarbookError(f"{given} only steer{'' if both else 's'} --draft-rubric: add --draft-rubric to draft the "
                            f"rubric from the incident, or leave {'them' if both else 'it'} out")
    if task_text is not None and not task_text.strip():
        raise ScarbookError("--task is empty: give the instruction the agent was given, or leave --task out to take "
                            "the transcript's prompt")
    from scarbook.cases.transcript_draft import pick_turn
    from scarbook.transcripts import (
        candidates,
        load_transcript,
        pick_task,
        suggest_seeds,
        task_start,
    )
    from scarbook.transcripts.text import group_warnings

    t = load_transcript(Path(transcript), fmt, trace=trace, sample=sample, root=root)
    for w in group_warnings(t.warnings):
        warn(w)
    if list_only or not case_id:
        _say_list(t, turn, artifact_index, task_text, list_only)
        return
    project = get_project(ctx)
    folder = _write_draft(project, t, case_id, artifact_index, seed_suggested, Path(transcript), turn=turn, good=good,
                          task=task_text)
    say(f"wrote draft case {folder}")
    chosen = pick_turn(t, candidates(t), turn, artifact_index)[0]
    picked = pick_task(t, chosen, exact=turn is not None)
    if not task_text and not picked.text:
        warn(_no_task(t, f"the draft's task is a TODO: write it as task: in {folder / 'case.yaml'}"))
    if picked.note and not task_text:
        say(picked.note)
    for seed in suggest_seeds(t, task_start(t, chosen, exact=turn is not None)):
        if seed.content is None:  # the state before the task that the log cannot give: the user adds it
            warn(f"not seeded: {seed.path} — {seed.reason}")
    _say_trajectory_hints(t, candidates(t), turn, artifact_index)
    try:
        certified = _certify_draft(project, folder, skip_judge, times, (note, offline) if draft_rubric else None)
    except (ScarbookError, OSError) as exc:  # the draft is written: say why it was not certified
        say(f"certification not run: {exc}", err=True)
        certified = False
    if not certified:
        say(f"next: add checks that the failed artifact must fail, then `scarbook verify {case_id}`")


def _draft_rubric(project, case, note: str, offline: bool, times: int) -> None:
    """import --draft-rubric: `scarbook rubric draft` on the case just written; a draft that fails leaves it as
    written (its certification follows either way)."""
    from scarbook.cli.rubric_cmd import say_draft
    from scarbook.session.rubric_draft import accept_draft, draft_rubric, kept_summary, plan_draft

    try:
        plan = plan_draft(project, case, note=note, offline=offline, times=times)
        say(plan.cost)
        draft = asyncio.run(draft_rubric(project, plan))
    except ScarbookError as exc:
        say(f"rubric not drafted: {exc}", err=True)
        return
    say_draft(draft)
    written = accept_draft(project, draft)
    say(f"wrote {kept_summary(draft)} into {written}" if written else
        "nothing proposed catches the incident: the draft's checks are unchanged")


def _certify_draft(project, folder: Path, skip_judge: bool, times: int, draft: tuple[str, bool] | None) -> bool:
    """The certification `verify` gives, on the draft just written (issue 24.4), its rubric drafted first when
    `draft` (--note, --offline) is given; True when certified."""
    if draft is not None:
        _draft_rubric(project, load_case(folder), *draft, times)
    case = load_case(folder)
    # no key: the verification's own line says the judge did not run (a warning on stderr would
    # follow every import of an answer, whose draft check is an llm_judge)
    [v] = asyncio.run(verify_cases(project, [case], skip_judge=skip_judge, times=times)).results
    say_verification(v, len(case.id))
    if case.scar is not None and case.scar.good_artifact:
        say(f"certification: {badge_of(v)}")
    else:
        say(f"{partial_note(v)} (badge: {badge_of(v)}) — import with --good N|PATH, or add "
            f"scar.good_artifact and run `scarbook verify {case.id}`")
    return v.certified


def _say_list(t, turn: int | None, artifact_index: int | None, task_text: str | None, list_only: bool) -> None:
    """What `import --list` prints (and import without --id): the format, the traces, turns, task, candidates and
    seed suggestions; nothing is written."""
    from scarbook.cases.transcript_draft import pick_turn
    from scarbook.transcripts import candidates, format_candidates, pick_task, preview, suggest_seeds, task_start, turns
    from scarbook.transcripts.detect import picked_word

    say(f"format: {t.format}")
    if t.traces:
        say("samples (pick one with --sample ID[:EPOCH]):" if t.format == "inspect" else
            f"{picked_word(t.format)}s (pick one with --trace ID):")
        for tid, summary in t.traces:
            say(f"  {'*' if tid == t.trace else ' '} {tid}  {summary}")
    if t.parent is not None:
        say(f"parent session: {t.parent} (this is one of its subagents; import it to file the session)")
    if t.root:
        say(f"root: {t.root} (paths are relative to it; change it with --root DIR)")
    cands = candidates(t)
    chosen, _ = pick_turn(t, cands, turn, artifact_index)
    all_turns = turns(t)
    if len(all_turns) > 1:
        say("turns (* = the one whose prompt is the task: the turn of the artifact, or --turn N):")
        for tn in all_turns:
            say(f"  {'*' if tn.number == chosen else ' '} {tn.number:>2}  {preview(tn.prompt, 70)}")
    task = pick_task(t, chosen, exact=turn is not None)
    if task_text:
        say(f"task (--task): {task_text}")
    else:
        say(f"task: {task.text or '(none found)'}")
        if not task.text and cands:  # (a log with nothing to draft says so under candidates)
            say(_no_task(t, "give the task with --task TEXT"))
    if task.note and not task_text:
        say(task.note)
    say("candidates:")
    say(format_candidates(cands))
    seeds = suggest_seeds(t, task_start(t, chosen, exact=turn is not None))
    if seeds:
        say("seed suggestions:")
        for s in seeds:
            say(f"  {s.path}{'' if s.content is not None else ' (content unknown)'} — {s.reason}")
    _say_trajectory_hints(t, cands, turn, artifact_index)
    if not list_only:
        say("\nto write a draft case: scarbook import PATH --id CASE-ID [--artifact N] [--turn N] [--seed-suggested]")


def _no_task(t, fix: str) -> str:
    """What import says of a transcript that holds no prompt: why (when the reader knows) and the fix."""
    why = f" ({t.task_hint})" if t.task_hint else ""
    return f"no prompt in the transcript{why}: {fix}"


def _say_trajectory_hints(t, cands, turn: int | None, artifact_index: int | None) -> None:
    """The trajectory checks the incident suggests (scarbook.cases.trajectory_hints), as case.yaml lines."""
    from scarbook.cases.trajectory_hints import suggest_trajectory_checks
    from scarbook.cases.transcript_draft import pick_turn
    from scarbook.transcripts import default_artifact

    _, number = pick_turn(t, cands, turn, artifact_index)
    number = number or (default_artifact(cands) if cands else None)
    artifact = cands[number - 1] if number and 1 <= number <= len(cands) else None
    hints = suggest_trajectory_checks(t, artifact)
    if hints:
        say("trajectory checks the incident suggests (add them under checks: — they read each run's transcript, "
            "so the agent needs record:, a preset, or transcript: true):")
        for h in hints:
            say(f"  - {h.yaml()}   # {h.why}")


def _write_draft(project, t, case_id: str, artifact_index: int | None, seed_suggested: bool, transcript: Path, *,
                 turn: int | None, good: str | None, task: str | None) -> Path:
    """cases/<case_id>/ written from the transcript, built in a hidden folder and renamed into place whole
    (cases/folder_save.new_case_folder): no reader sees a half-written draft."""
    from scarbook.cases.folder_save import new_case_folder, shown_path
    from scarbook.cases.transcript_draft import DraftPicks, write_draft_case

    why = unwritable_why(project.cases_dir)
    if why:
        raise ScarbookError(f"cannot write the draft case: {why} — make {project.cases_dir} a writable folder, "
                            "or point cases_dir in scarbook.yaml at one")
    check_case_id_form(case_id)  # '..' or a name longer than a folder's, said as such, not as taken or unwritable
    if os.path.lexists(project.cases_dir / case_id):  # said as the draft's writer says it, before the lock
        raise ScarbookError(f"{project.cases_dir / case_id} already exists; choose another --id")
    try:
        with new_case_folder(project, case_id) as staging:
            write_draft_case(t, staging, case_id, artifact_index, seed_suggested, transcript,
                             DraftPicks(turn=turn, good=good, task=task))
    except OSError as exc:
        raise ScarbookError(f"cannot write the draft case {case_id} in {project.cases_dir}: "
                            f"{describe_os_error(exc)}"
                            + (f" ({shown_path(exc.filename)})" if exc.filename else "")
                            + " — make that folder writable") from None
    return project.cases_dir / case_id


COMMANDS = [import_command]
