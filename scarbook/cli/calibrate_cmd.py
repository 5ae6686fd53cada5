"""`scarbook calibrate`: grade judged items yourself, in the terminal or in a spreadsheet
(--export / --import), and see the judge's measured error (--report, --json)."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections import Counter
from pathlib import Path

import click

from scarbook.cli.common import (
    NamedFile,
    examples,
    friendly_errors,
    get_project,
    refuse_own_files,
    report_history_problems,
    say,
)
from scarbook.errors import ScarbookError
from scarbook.fs.files import named_file_unwritable_why, write_named_file
from scarbook.history.judge_truth import (
    case_targets,
    current_labels,
    format_calibration,
    label_advice,
    limiting_strata,
    measure,
    next_items,
    recorded_report,
    sampled_from,
)
from scarbook.judge.calibrate import agreement, format_report, items_by_key, judged_items
from scarbook.judge.errors import KeyHint
from scarbook.judge.identity import judges_apart, same_judge
from scarbook.judge.label_files import file_format, read_labels, render_items
from scarbook.judge.label_store import CalibrationStore
from scarbook.judge.unjudged import never_judged_words, unjudged_reasons
from scarbook.models import CheckStatus
from scarbook.text import plural


@click.command("calibrate", epilog=examples(
    "scarbook calibrate --sample 20",
    "scarbook calibrate --export labels.csv --sample 40",
    "scarbook calibrate --import labels.csv",
    "scarbook calibrate --import labels.csv --relabel",
    "scarbook calibrate --report"))
@click.option("--sample", type=click.IntRange(1), default=20, show_default=True, help="Judged items to grade (or export).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for the stratified sample.")
@click.option("--rescore", is_flag=True, help="Score the current judge against the stored human labels (calls the judge; agreement only, "
              "not recorded as its calibration).")
@click.option("--report", "show_report", is_flag=True,
              help="Print the judge's measured error: sensitivity q1, specificity q0, agreement, kappa (95% intervals).")
@click.option("--json", "as_json", is_flag=True, help="With --report: as JSON.")
@click.option("--export", "export_to", type=NamedFile(no_dash="--export writes a file you fill in and import back, "
                                                               "so it needs a name, not standard output", path_type=Path),
              help="Write --sample items to label to FILE (.jsonl or .csv), with an empty `label` field.")
@click.option("--import", "import_from", type=NamedFile(no_dash="--import reads the labels from a file by name, not "
                                                                "from standard input", path_type=Path),
              help="Read labels (PASS/FAIL) back from FILE (.jsonl or .csv).")
@click.option("--relabel", is_flag=True,
              help="With --import: where FILE gives another label than yours stored, change yours (each is listed).")
@click.pass_context
@friendly_errors
def calibrate_command(ctx: click.Context, sample: int, seed: int, rescore: bool, show_report: bool, as_json: bool,
                      export_to: Path | None, import_from: Path | None, relabel: bool) -> None:
    """Grade judged rubric items yourself (the judge's verdict hidden), then see agreement, Cohen's kappa
    and the judge's error rates. Teams that label in a spreadsheet: --export FILE, fill `label`, --import FILE."""
    chosen = [name for name, on in (("--rescore", rescore), ("--report", show_report or as_json),
                                    ("--export", export_to), ("--import", import_from)) if on]
    if len(chosen) > 1:
        raise ScarbookError(f"{' and '.join(chosen)} do different things — give one of them")
    if relabel and import_from is None:
        raise ScarbookError("--relabel changes your labels to those of a file — give it with --import FILE")
    project = get_project(ctx)
    store = CalibrationStore(project.workspaces_dir / "history" / "calibration.json")
    settings = project.config.judge
    try:
        if show_report or as_json:
            runs = project.history.all_runs()
            labels = store.labels()
            cal = measure(labels, sampled_from(project.history, labels, settings), settings, _rubrics(project))
            targets = _targets(project)
            advice = limiting_strata(cal, targets, settings) + label_advice(cal, targets)
            report_history_problems(runs.problems)
            if as_json:
                say(json.dumps(cal.to_dict() | {"advice": advice}, indent=2))
            else:
                say(format_calibration(cal, settings)
                           + ("\n\nwhere labels help most:\n" + "\n".join(f"  {line}" for line in advice) if advice else ""))
            return
        if export_to is not None:
            _export(project, store, export_to, sample, seed)
            return
        if import_from is not None:
            _import(project, store, import_from, relabel)
            return
        if rescore:  # a new judge on labels drawn from the old one's verdicts: agreement only, unweighted
            say("\n" + format_report(agreement(_rescore(project, store))))
            say(f"\n{RESCORE_NOTE.format(model=settings.model)}")
            return
        labels = _grade_here(project, store, sample, seed)
        if not labels:
            say("no labels given")
            return
        _record_and_show(project, store, labels, judged_items(project.history.iter_all_runs()))
    finally:
        store.close()


def _rubrics(project) -> dict[str, set[str]]:
    return {c.id: set(c.rubric_items) for c in project.load_cases().cases}


def _targets(project) -> list:
    return case_targets(project.history, project.load_cases().by_id(), project.config.threshold)


def _pick(project, store, sample: int, seed: int) -> list:
    items, planned = next_items(store.labels(), project.history.iter_all_runs(), _targets(project),
                                project.config.judge, sample, seed)
    if planned:
        say("picked where labels shrink the corrected intervals most (cases near their threshold "
                   "first; at random within each case's judge-PASS and judge-FAIL items)")
    return items


def _pick_and_pair(project, store, sample: int, seed: int) -> tuple[list, list]:
    """The items drawn: those you labelled before paired with this judge's verdicts at once (said), the rest to ask."""
    drawn = _pick(project, store, sample, seed)
    if not drawn:
        runs = list(project.history.iter_all_runs())
        why = "" if judged_items(runs) else never_judged_words(unjudged_reasons(runs), project.config.judge.api_key_env)
        raise ScarbookError(f"no judged rubric items left to label — {why or 'run cases with llm_judge checks first'}")
    paired, ask = store.pair_known(drawn)
    _say_migrated(store)
    if paired:
        say(f"{plural(len(paired), 'item')} drawn you labelled before: your label now stands beside the verdict of "
            f"judge {project.config.judge.model} on {'it' if len(paired) == 1 else 'them'} too — not asked again")
    return paired, ask


def _say_migrated(store) -> None:
    if store.migrated:
        say(f"note: {store.migrated}", err=True)
        store.migrated = ""


def _grade_here(project, store, sample: int, seed: int) -> list:
    labels, items = _pick_and_pair(project, store, sample, seed)
    for n, item in enumerate(items, 1):
        say(f"\n[{n}/{len(items)}] case {item.case_id}\nrubric item: {item.item}\n"
                   f"--- artifact ---\n{item.artifact[:3000]}\n--- end ---")
        try:
            answer = click.prompt("PASS or FAIL? (p/f, s to skip, q to stop)",
                                  type=click.Choice(["p", "f", "s", "q"], case_sensitive=False))
        except click.Abort:  # Ctrl-C or the end of the input: as q — each label is stored as it is given
            say(f"\nstopped at item {n} of {len(items)}: {plural(len(labels), 'label')} kept")
            break
        if answer == "q":
            break
        if answer == "s":
            continue
        labels.append(store.save_label(item, "PASS" if answer == "p" else "FAIL"))
    return labels


def _export(project, store, path: Path, sample: int, seed: int) -> None:
    fmt = file_format(path)
    refuse_own_files(project, {"--export": path})
    why = named_file_unwritable_why(path)  # (before the items are drawn and recorded)
    if why:
        raise ScarbookError(f"--export {path} cannot be written: {why} — choose a writable path for --export")
    _refuse_unimported(project, store, path)
    paired, items = _pick_and_pair(project, store, sample, seed)
    if paired:
        _record_and_show(project, store, paired, judged_items(project.history.iter_all_runs()))
    if not items:
        say(f"nothing to label: every item drawn you labelled before — {path} not written")
        return
    write_named_file(path, render_items(items, fmt))
    say(f"wrote {plural(len(items), 'item')} to label to {path}: fill each `label` with PASS or FAIL "
               f"(leave it empty to skip), then `scarbook calibrate --import {path}`")


def _refuse_unimported(project, store, path: Path) -> None:
    """An export over a sheet holding labels history does not have yet would lose a person's work: refused."""
    if not path.is_file():
        return
    known = items_by_key(judged_items(project.history.iter_all_runs()))
    try:
        found = read_labels(path, known)
    except ScarbookError:  # not a labels file scarbook can read: nothing of a person's labels to keep
        return
    have = {(key, truth.human_verdict) for key, truth in store.truths().items()}
    pending = [item for item, verdict in found.labels if (item.key, verdict) not in have]
    if pending:
        raise ScarbookError(f"{path} holds {plural(len(pending), 'label')} not imported yet — `scarbook calibrate "
                            f"--import {shlex.quote(str(path))}` stores them first, or export to another file")


def _import(project, store, path: Path, relabel: bool = False) -> None:
    judged = judged_items(project.history.iter_all_runs())
    found = read_labels(path, items_by_key(judged))
    for line in found.skipped + found.notes:
        say(f"note: {line}", err=True)
    truths = store.truths()
    changed = [(item, verdict, truths[item.key]) for item, verdict in found.labels
               if item.key in truths and truths[item.key].human_verdict != verdict]
    if changed and not relabel:
        found.errors += [f"{path} line {found.lines[item.key]}: {truth.described()} is labelled {truth.human_verdict} "
                         f"in calibration.json ({truth.labeled_at[:10]}) and {verdict} here" for item, verdict, truth
                         in changed]
        found.errors.sort(key=lambda e: int(e[len(str(path)) + 6:].split(":", 1)[0]))
    if found.errors:
        fix = f"nothing imported from {path}: fix {'these lines' if len(found.errors) > 1 else 'this line'} and import it again"
        if changed and not relabel:
            fix += (f" — or, to change your labels to the file's, `scarbook calibrate --import {shlex.quote(str(path))} "
                    "--relabel`")
        raise ScarbookError("\n".join(found.errors) + "\n" + fix)
    for item, verdict, truth in changed:
        store.relabel(item.key, verdict)
        _say_migrated(store)
        say(f"relabelled {truth.described()}: {truth.human_verdict} → {verdict} (yours since {truth.labeled_at[:10]})")
    # a row you had given already adds nothing: a judge's verdict is paired with it only when a draw takes it
    fresh = [(item, verdict) for item, verdict in found.labels if item.key not in truths]
    labels = [store.save_label(item, verdict) for item, verdict in fresh if item.key not in found.unpaired]
    for item, verdict in fresh:
        if item.key in found.unpaired:
            store.save_truth(item, verdict)
    _say_migrated(store)
    new, again = len(fresh), len(found.labels) - len(fresh) - len(changed)
    pairing = _pairing_words(project.config.judge, labels, found, path)
    relabelled = {item.key for item, _, _ in changed}
    labels += [lab for lab in store.labels() if lab.key in relabelled]  # shown beside the new ones, as each judge's
    say(f"imported {plural(new, 'label')} from {path}"
               + (f"; {plural(len(changed), 'label')} changed" if changed else "")
               + (f"; {plural(again, 'label')} you had given already" if again else "")
               + (f"; {plural(found.unlabelled, 'row')} without a label left for later" if found.unlabelled else "")
               + (f"; {plural(len(found.skipped), 'unknown item')} skipped" if found.skipped else ""))
    for line in pairing:
        say(line)
    settings = project.config.judge
    if again and not pairing and not current_labels(store.labels(), settings) \
            and any(item.graded_by(settings) for item in judged):
        say(f"the judge in use, {settings.model}, has no labels yet: yours stand beside the verdicts of the judge whose "
            "draw held them — `scarbook calibrate` (or --export) draws its items and pairs the ones you labelled "
            "without asking again")
    if labels:
        _record_and_show(project, store, labels, judged)


def _pairing_words(settings, labels: list, found, path: Path) -> list[str]:
    """What the labels imported were paired with, where it is not the judge in use's verdicts: another judge's (the
    one whose draw the sheet holds), or none yet (a sheet older than its judge column, on items several judged)."""
    lines = []
    others = Counter(lab.judge_key for lab in labels
                     if not same_judge(lab.judge_model, lab.judge_prompt_digest, lab.judge_sampling, settings))
    for (model, prompt, sampling), n in sorted(others.items()):
        then, now = judges_apart(model, prompt, sampling, settings)
        lines.append(f"{plural(n, 'label')} paired with the verdicts of judge {then}, whose draw the sheet holds, not "
                     f"with those of the judge in use, {now}: a draw of `scarbook calibrate` pairs "
                     f"{'it' if n == 1 else 'them'} with its verdicts without asking you again")
    if found.unpaired:
        n = len(found.unpaired)
        rows = ", ".join(str(found.lines[key]) for key in found.unpaired)
        judges = sorted({f"{i.judge_model} (prompt {i.judge_prompt_digest[:8]})"
                         for items in found.unpaired.values() for i in items})
        lines.append(f"{plural(n, 'label')} kept beside no judge's verdict yet ({path} line{'s' * (n > 1)} {rows}): "
                     f"{'its item was' if n == 1 else 'their items were'} graded by {' and '.join(judges)}, and the "
                     "sheet, written before scarbook named the judge in it, does not say whose draw it holds — a draw "
                     f"of `scarbook calibrate` that takes {'it' if n == 1 else 'one'} pairs it with that judge's "
                     "verdict without asking you again")
    return lines


def _record_and_show(project, store, labels: list, judged) -> None:
    """After new labels: the judge's error weighted back from the stratified sample (what the library's
    calibration line then shows: agreement and kappa of the population, not of the sample), and the
    new labels the judge disagreed with. Recorded only when the judge in use has labels (recorded_report)."""
    settings = project.config.judge
    cal = measure(store.labels(), judged, settings, _rubrics(project))
    recorded = recorded_report(cal, agreement(labels))
    if recorded is not None:
        store.record_calibration(recorded, settings)
    say("\n" + format_calibration(cal, settings))
    naive = format_report(agreement(labels))
    if "\ndisagreements" in naive:
        say(naive[naive.index("\ndisagreements"):])


def _rescore(project, store):
    from scarbook.checks import CheckContext
    from scarbook.judge import Judge
    from scarbook.judge.calibrate import rescore
    from scarbook.models import Case, Check

    labels = list({lab.key: lab for lab in store.labels()}.values())  # each labelled item once, whatever judged it
    if not labels:
        raise ScarbookError("no stored human labels — run `scarbook calibrate` first")
    judge = Judge(project.config.judge, key_hint=RESCORE_KEY_HINT)
    judge.preflight()

    async def grade_all():
        verdicts = {}
        for lab in labels:
            check = Check("llm_judge", {"rubric": [lab.item], "artifact": "output"})
            case = Case(id=lab.case_id, task="", checks=[check])
            ctx = CheckContext(case=case, workspace=project.workspaces_dir, output=lab.artifact, judge=judge)
            result = await judge.grade(check, ctx)
            items = result.judge.items if result.judge is not None else ()
            if result.status != CheckStatus.ERROR and items:
                verdicts[lab.key] = items[0].verdict
        return verdicts

    verdicts = asyncio.run(grade_all())
    return rescore(labels, verdicts, project.config.judge.model, project.config.judge.prompt_digest)


# --rescore's verdicts are not stored, and its agreement is not recorded as the judge's calibration (the library's
# "calibrated" line reads it): a calibration weighs labels drawn from the judge's own verdicts in history, and the
# rescore grades each labelled artifact alone, whichever judge's draw it came from — agreement, not error rates
RESCORE_NOTE = ("agreement only — not recorded as judge {model}'s calibration: its calibration weighs labels drawn "
                "from its own verdicts in history; to calibrate it, `scarbook calibrate` draws items it graded and "
                "pairs the labels you gave without asking again")
# --rescore grades the labelled artifacts again: it has nothing to do without the judge (no --skip-judge)
RESCORE_KEY_HINT = KeyHint("the rescore stopped", " — --rescore grades the labelled artifacts with the judge: it needs the key")

COMMANDS = [calibrate_command]
