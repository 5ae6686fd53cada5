"""Issue 34 item 8: `scarbook import` on a corpus of real public agent logs (tests/transcripts/corpus/,
every log's source and licence in corpus.yaml). Each row says what a careful person reading the log
expects the draft to be — the task, the failed artifact, the seed files — or that the import should
refuse; this module imports every log the way `scarbook import LOG --id X --seed-suggested` does and
compares. The totals (correct / wrong / refused / traceback, by format) are printed at the end of the
run, and each wrong row is listed with what differs: the worklist of the transcript readers."""

from __future__ import annotations

import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scarbook.cases.transcript_draft import write_draft_case
from scarbook.cli import main
from scarbook.errors import ScarbookError
from scarbook.transcripts import load_transcript

CORPUS = Path(__file__).parent / "corpus"
TABLE = CORPUS / "corpus.yaml"
ROWS: list[dict[str, Any]] = yaml.safe_load(TABLE.read_text(encoding="utf-8"))["logs"]
CASE_ID = "corpus"
CORRECT, WRONG, REFUSED, TRACEBACK = "correct", "wrong", "refused", "traceback"
TARGET = 0.9  # the "done when": at least 90% correct drafts

pytestmark = pytest.mark.xdist_group("corpus")  # one worker imports the corpus once for every test here


@dataclass
class Draft:
    """What the import wrote: the case.yaml data, the failed artifact's text, the seed files."""

    format: str
    data: dict[str, Any]
    artifact: str
    seeds: dict[str, str]


@dataclass
class Result:
    row: dict[str, Any]
    outcome: str
    format: str | None = None
    problems: list[str] = field(default_factory=list)  # what differs from the row, or the refusal / traceback
    refusal: str | None = None  # the message, when the import refused


def import_log(path: Path, cases: Path) -> Draft:
    """`scarbook import PATH --id corpus --seed-suggested` without the certification that follows it."""
    t = load_transcript(path)
    folder = write_draft_case(t, cases, CASE_ID, seed_suggested=True, transcript_path=path)
    return read_draft(folder, t.format)


def read_draft(folder: Path, fmt: str) -> Draft:
    data = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
    artifact = (folder / data["scar"]["failed_artifact"]).read_text(encoding="utf-8", errors="replace")
    seed = folder / "seed"
    seeds = {p.relative_to(seed).as_posix(): p.read_text(encoding="utf-8", errors="replace")
             for p in sorted(seed.rglob("*")) if p.is_file()} if seed.is_dir() else {}
    return Draft(fmt, data, artifact, seeds)


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def task_problems(row: dict[str, Any], task: str) -> list[str]:
    expected = row.get("task")
    if expected is None:
        return [] if task.startswith("TODO") else [f"task should be TODO (the log holds no request), got {task[:120]!r}"]
    missing = [s for s in _as_list(expected) if s not in task]
    present = [s for s in row.get("task_not", []) if s in task]
    out = [f"task lacks {s!r}" for s in missing] + [f"task holds {s!r}" for s in present]
    return out + ([f"  (task is {task[:160]!r})"] if out else [])


def artifact_problems(row: dict[str, Any], draft: Draft) -> list[str]:
    at = draft.data["scar"].get("artifact_at")
    for want in _as_list(row["artifact"]):
        place = "output" if "output" in want else want["path"]
        text = want.get("output", want.get("contains", ""))
        if at == place and text in draft.artifact and not (want.get("lacks") and want["lacks"] in draft.artifact):
            return []
    wanted = " or ".join(f"{w.get('path', 'the answer')} holding {w.get('output', w.get('contains', ''))!r}"
                         for w in _as_list(row["artifact"]))
    return [f"artifact should be {wanted}; got {at} holding {draft.artifact[:120]!r}"]


def seed_problems(row: dict[str, Any], draft: Draft) -> list[str]:
    wanted = {s["path"]: s for s in row["seeds"]}
    out = [f"seed {p} missing" for p in wanted if p not in draft.seeds]
    out += [f"seed {p} should not be there" for p in draft.seeds if p not in wanted]
    for p, want in wanted.items():
        content = draft.seeds.get(p)
        if content is not None and want.get("contains", "") not in content:
            out.append(f"seed {p} lacks {want['contains']!r} (it holds {content[:80]!r})")
        if content is not None and want.get("lacks") and want["lacks"] in content:
            out.append(f"seed {p} holds {want['lacks']!r}: not the state before the task")
    return out


def judge(row: dict[str, Any], tmp: Path) -> Result:
    path = CORPUS / row["file"]
    try:
        draft = import_log(path, tmp / "cases")
    except ScarbookError as exc:
        message = str(exc)
        if "refusal" not in row:
            return Result(row, REFUSED, problems=[message], refusal=message)
        named = path.name in message
        return Result(row, CORRECT if named else WRONG, refusal=message,
                      problems=[] if named else [f"the refusal does not name the file: {message}"])
    except Exception:  # noqa: BLE001 — any other exception is a traceback the user would see
        return Result(row, TRACEBACK, problems=[traceback.format_exc(limit=-4)])
    if "refusal" in row:
        return Result(row, WRONG, draft.format, [f"should refuse ({row['refusal']}); drafted task "
                                                 f"{draft.data['task'][:80]!r}"])
    tried = [expectation_problems(want, draft) for want in row.get("alternatives", [row])]
    problems = [] if [] in tried else [p for ps in tried for p in ps]
    return Result(row, WRONG if problems else CORRECT, draft.format, problems)


def expectation_problems(want: dict[str, Any], draft: Draft) -> list[str]:
    return task_problems(want, draft.data["task"]) + artifact_problems(want, draft) + seed_problems(want, draft)


def totals(results: list[Result]) -> str:
    """The table the run prints: outcomes by expected format, then every row that is not correct."""
    by_format: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        by_format[r.row["format"]][r.outcome] += 1
    cols = (CORRECT, WRONG, REFUSED, TRACEBACK)
    lines = [f"{'format':<20}{'logs':>6}" + "".join(f"{c:>11}" for c in cols)]
    for fmt, counts in sorted(by_format.items()) + [("total", sum(by_format.values(), Counter()))]:
        lines.append(f"{fmt:<20}{sum(counts.values()):>6}" + "".join(f"{counts[c]:>11}" for c in cols))
    for r in results:
        if r.outcome != CORRECT:
            lines.append(f"{r.outcome.upper():<10} {r.row['file']}")
            lines += [f"    {p}" for p in "\n".join(r.problems).splitlines()]
    misnamed = [f"{r.row['file']}: {r.format}" for r in results if r.format and r.format != r.row["format"]]
    if misnamed:
        lines.append("format named otherwise than the table expects: " + "; ".join(misnamed))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> list[Result]:
    return [judge(row, tmp_path_factory.mktemp("corpus")) for row in ROWS]


def test_the_table_covers_every_log_and_names_its_source():
    files = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file() and p != TABLE}
    listed = [row["file"] for row in ROWS]
    assert sorted(set(listed)) == sorted(listed), "a log is listed twice"
    assert files == set(listed), "every log in the folder has one row, every row a log"
    for row in ROWS:
        source = row["source"]
        assert {"repo", "path", "commit", "licence"} <= set(source), row["file"]
        expectations = row.get("alternatives", [row])
        assert ("refusal" in row) != all({"task", "artifact", "seeds"} <= set(e) for e in expectations), row["file"]


def test_no_log_crashes_the_import(results, record_property):
    record_property("terminal_summary", "transcript corpus (issue 34)\n" + totals(results))
    crashed = [f"{r.row['file']}:\n{r.problems[0]}" for r in results if r.outcome == TRACEBACK]
    assert not crashed, "\n".join(crashed)


def test_at_least_nine_in_ten_logs_draft_right(results):
    correct = sum(r.outcome == CORRECT for r in results)
    assert correct >= TARGET * len(results), f"{correct}/{len(results)} correct\n{totals(results)}"


def _first_of_each_format() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for row in ROWS:
        seen.setdefault(row["format"], row)
    return list(seen.values())


@pytest.mark.parametrize("row", _first_of_each_format(), ids=lambda row: row["file"])
def test_the_cli_drafts_what_the_table_test_drafts(row, tmp_path):
    """The table test calls the functions `scarbook import` calls; the CLI itself, on one log of each
    format, must write the same draft (or refuse with the same message)."""
    path = CORPUS / row["file"]
    direct = judge(row, tmp_path / "direct")
    if direct.outcome == TRACEBACK:
        pytest.skip("a traceback: test_no_log_crashes_the_import names it")
    (tmp_path / "scarbook.yaml").write_text("")
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "import", str(path), "--id", CASE_ID, "--seed-suggested",
                                    "--skip-judge"])
    if direct.refusal is not None:
        assert res.exit_code == 2, res.output
        assert direct.refusal in res.stderr
        return
    assert res.exit_code == 0, res.output
    cli = read_draft(tmp_path / "cases" / CASE_ID, direct.format or "")
    ref = import_log(path, tmp_path / "again")
    assert (cli.data, cli.artifact, cli.seeds) == (ref.data, ref.artifact, ref.seeds)
