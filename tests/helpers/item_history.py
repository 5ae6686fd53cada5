"""A history of judged runs whose rubric items behave as a test plants them (issue 35.3): each run's
judge record holds every item's votes (one per sample) and the majority verdict, written through the real
History writer, as the runner records a run.

    plant(workspaces, "case-a", [("ra", "item a"), ...], sessions=5, runs=100,
          votes=lambda s, k, ident: ("FAIL",) if k % 5 == 0 else ("PASS",))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from scarbook.history.store import History
from scarbook.judge.calibrate import CalibrationItem
from scarbook.judge.label_store import CalibrationStore
from scarbook.models import CheckResult, CheckStatus, JudgeDetail, RunRecord, RunStatus, SessionInfo, SessionState

Votes = Callable[[int, int, str], Sequence[str]]  # (session number from 0, k from 1, item id) -> votes


def judged_run(session_id: str, case_id: str, k: int, items: Sequence[tuple[str, str]],
               votes: Sequence[Sequence[str]], artifact: str | None = None) -> RunRecord:
    entries = []
    for n, ((ident, text), vs) in enumerate(zip(items, votes, strict=True), start=1):
        verdict = Counter(vs).most_common(1)[0][0]
        entries.append({"item": n, "id": ident, "text": text, "verdict": verdict, "reason": "planted",
                        "votes": list(vs), "reasons": ["planted"] * len(vs)})
    failed = any(e["verdict"] == "FAIL" for e in entries)
    status = CheckStatus.FAIL if failed else CheckStatus.PASS
    judge = {"verdict": str(status), "items": entries, "model": "claude-test", "samples": len(votes[0]),
             "temperature": 0.0, "usage": {}, "calls": len(votes[0]),
             "artifact_excerpt": artifact if artifact is not None else f"{session_id}/{case_id}/{k}"}
    check = CheckResult("llm_judge", status, "planted", 0, judge=JudgeDetail.from_dict(judge))
    return RunRecord(session_id=session_id, case_id=case_id, k=k, status=RunStatus.FAIL if failed else RunStatus.PASS,
                     reason="planted", checks=[check])


def plant(workspaces: Path, case_id: str, items: Sequence[tuple[str, str]], *, sessions: int, runs: int,
          votes: Votes) -> list[str]:
    """`sessions` finished sessions of `runs` runs of `case_id`; returns their ids, oldest first."""
    history = History(workspaces)
    ids = []
    for s in range(sessions):
        sid = history.new_session_id()
        info = SessionInfo(id=sid, label=f"planted-{s}", started_at=f"2026-12-{s + 1:02d}T08:00:00+00:00",
                           state=SessionState.RUNNING, runs_per_case=runs, case_ids=[case_id], judge_model="claude-test")
        history.start_session(info)
        for k in range(1, runs + 1):
            history.record_run(judged_run(sid, case_id, k, items, [votes(s, k, ident) for ident, _ in items]))
        info.state = SessionState.FINISHED
        history.finish_session(info)
        ids.append(sid)
    return ids


# -- the bundled cases with planted items (tests/session/test_rubric_stats.py, tests/cli/test_rubric.py) --

ONE_LINE = {  # write-one-line's rubric: what each item does in the planted history
    "a": "tmp.txt holds the first line of README.md and nothing else",
    "b": "the final answer says tmp.txt has one line only when it has",
    "c": "the final answer names tmp.txt",
    "d": "the final answer does not claim a line count it did not check",
    "e": "the final answer quotes the line it wrote",
}
REVIEW = {"x": "the review names the cache_control claim as unsourced", "y": "the review lists each assertion by name"}
F, P = "FAIL", "PASS"


def one_line_votes(s: int, k: int, item: str) -> tuple[str, ...]:
    """4 sessions x 95 runs, 3 samples each."""
    if item == "a":
        fails = k % 5 == 0
    elif item == "b":  # a's twin, but for k == 1 of each session: agrees on 376 of 380 runs
        fails = k % 5 == 0 or k == 1
    elif item == "c":  # dead: never fails
        fails = False
    elif item == "d":  # fails where k % 10 == 2; the samples split on 15 runs of each session
        if k % 20 in (3, 7, 11):
            return (P, F, P)
        fails = k % 10 == 2
    else:
        fails = k % 7 == 3
    return (F,) * 3 if fails else (P,) * 3


def review_votes(s: int, k: int, item: str) -> tuple[str, ...]:
    """3 sessions x 40 runs, one sample: x fails every run (always fails)."""
    return (F,) if item == "x" or k % 4 == 0 else (P,)


def add_rubric(project, case_id: str, items: dict[str, str]) -> None:
    path = project.cases_dir / case_id / "case.yaml"
    rubric = "".join(f"      - {text}\n" for text in items.values())
    path.write_text(path.read_text().replace("checks:\n", f"checks:\n  - type: llm_judge\n    rubric:\n{rubric}", 1))


def plant_bundled(project):
    """The bundled cases with rubrics on write-one-line (items a-e) and review-api-claims (x, y), and 500
    runs of history in which each item behaves as planted (see one_line_votes, review_votes), two damaged
    lines and people's labels. Returns (the project, its cases by id, the items' ids by name)."""
    project.bundled()
    add_rubric(project, "write-one-line", ONE_LINE)
    add_rubric(project, "review-api-claims", REVIEW)
    proj = project.load()
    cases = {c.id: c for c in proj.load_cases().cases}
    ids = {}
    for cid, names in (("write-one-line", ONE_LINE), ("review-api-claims", REVIEW)):
        check = cases[cid].judge_checks[0]
        ids.update(dict(zip(names, check.rubric_ids, strict=True)))
    one_line = [(ids[n], t) for n, t in ONE_LINE.items()]
    review = [(ids[n], t) for n, t in REVIEW.items()]
    by_id = {ids[n]: n for n in [*ONE_LINE, *REVIEW]}
    plant(project.workspaces, "write-one-line", one_line, sessions=4, runs=95,
          votes=lambda s, k, ident: one_line_votes(s, k, by_id[ident]))
    sessions = plant(project.workspaces, "review-api-claims", review, sessions=3, runs=40,
                     votes=lambda s, k, ident: review_votes(s, k, by_id[ident]))
    # two damaged lines in one runs file: skipped, counted, named
    runs_file = project.workspaces / "history" / sessions[0] / "runs-review-api-claims.jsonl"
    with open(runs_file, "a") as fh:
        fh.write("not json\n{\"k\": 3}\n")
    _label(proj, "write-one-line", ONE_LINE["e"], wrong=3, total=10)  # the judge wrong on 30%: unreliable
    _label(proj, "write-one-line", ONE_LINE["a"], wrong=1, total=10)  # 10%: not
    return proj, cases, ids


def _label(proj, case_id: str, text: str, *, wrong: int, total: int) -> None:
    """`total` labels of one item: half of them FAIL by the label; the judge agrees but on `wrong` of them
    (the first `wrong` labelled FAIL, which it passed)."""
    settings = proj.config.judge
    store = CalibrationStore(proj.workspaces_dir / "history" / "calibration.json")
    for n in range(total):
        human = F if n < total // 2 else P
        judge = (P if human == F else F) if n < wrong else human
        item = CalibrationItem(case_id, text, 0, 0, f"artifact {n} of {text}", judge, "r", settings.model,
                               settings.prompt_digest)
        store.save_label(item, human)
    store.close()
