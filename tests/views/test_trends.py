"""Per-case trends (scarbook/stats/trends.py) read from real history files written through the History API:
a stable case, one that regressed at a known session, one that flips, a partial session, a case never
run, damaged lines; "regressed since" agrees with what `scarbook diff` prints."""

from __future__ import annotations

import json

import pytest

from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo
from scarbook.stats.compare import Counts
from scarbook.stats.trends import CHANGED, DAMAGED, NO_VERDICT
from scarbook.views.trends import build_trends

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

# session label -> case -> statuses of its runs (p pass, f fail, e error, u unjudged), oldest first
STABLE = "p" * 10
GOOD, BAD = "p" * 10, "pp" + "f" * 8


def sid(n: int) -> str:
    return f"20260101-0{n:05d}-000a"


def record(history: History, n: int, runs: dict[str, str], label: str = "", partial: bool = False,
           state: str = "finished", digests: dict[str, str] | None = None) -> SessionInfo:
    """Session n (ids sort in n order) with the given runs, written as the runner writes them."""
    per_case = max((len(s) for s in runs.values()), default=1)
    info = SessionInfo(id=sid(n), label=label or f"s{n}", started_at=f"2026-01-{n:02d}T09:00:00+00:00",
                       runs_per_case=per_case, case_ids=list(runs), partial=partial, agent="demo",
                       case_digests=digests or {})
    history.start_session(info)
    status = {"p": "pass", "f": "fail", "e": "error", "u": "unjudged"}
    for cid, marks in runs.items():
        for k, m in enumerate(marks, 1):
            history.record_run(RunRecord(info.id, cid, k, status[m], status[m], started_at=info.started_at))
    info.state = state
    history.finish_session(info)
    return info


@pytest.fixture
def history(tmp_path) -> History:
    return History(tmp_path / "workspaces")


def thresholds(*cases: str, line: float = 0.8) -> dict[str, float]:
    return {c: line for c in cases}


def test_a_stable_case_has_one_point_per_session_and_no_regression(history):
    for n in range(1, 5):
        record(history, n, {"stable": STABLE})
    t = build_trends(history, thresholds("stable")).cases["stable"]
    assert [p.session_id for p in t.points] == [sid(1), sid(2), sid(3), sid(4)]  # oldest first
    assert [p.rate for p in t.points] == [1.0] * 4
    assert [p.runs for p in t.points] == [10] * 4 and t.points[0].counts == Counts(10, 0, 0, 0)
    assert t.points[-1].name == "s4" and t.points[-1].marks == ()
    assert t.regressed_since is None and t.regressed_note() == "" and t.flips == 0


def test_regressed_since_names_the_last_session_before_the_drop(history):
    for n, runs in enumerate([GOOD, GOOD, GOOD, BAD, BAD], 1):
        record(history, n, {"drop": runs, "stable": STABLE})
    trends = build_trends(history, thresholds("drop", "stable"))
    drop = trends.cases["drop"]
    assert [p.rate for p in drop.points] == [1.0, 1.0, 1.0, 0.2, 0.2]
    assert drop.regressed_since.session_id == sid(3)  # s4 vs s5 is no change; s3 vs s5 regressed
    assert drop.regressed_note() == "regressed since s3"
    assert trends.cases["stable"].regressed_since is None


def test_a_drop_too_small_for_diff_is_not_a_regression(history):
    # 10/10 then 8/10: Fisher p = 0.47 — diff says "no detectable change", so trends say nothing
    for n, runs in enumerate([GOOD, GOOD, "pppppppp" + "ff"], 1):
        record(history, n, {"dip": runs})
    assert build_trends(history, thresholds("dip")).cases["dip"].regressed_since is None


def test_a_flipping_case_sorts_first_in_the_flake_order(history):
    for n in range(1, 7):  # (ids in the reverse of the flake order, so sorting by id cannot pass)
        record(history, n, {"c-flips": GOOD if n % 2 else BAD, "a-stable": STABLE, "b-once": GOOD if n < 6 else BAD,
                            "z-spread": GOOD if n < 6 else "p" * 9 + "f"})
    trends = build_trends(history, thresholds("c-flips", "a-stable", "b-once", "z-spread"))
    assert trends.cases["c-flips"].flips == 5 and trends.cases["b-once"].flips == 1
    assert trends.cases["a-stable"].flips == 0 and trends.cases["z-spread"].flips == 0
    assert trends.cases["z-spread"].spread > 0 == trends.cases["a-stable"].spread
    assert [t.case_id for t in trends.flakiest()] == ["c-flips", "b-once", "z-spread", "a-stable"]
    # the latest (s6) is bad and s5 was good: regressed since s5
    assert trends.cases["c-flips"].regressed_since.session_id == sid(5)


def test_depth_keeps_the_last_n_sessions_that_ran_the_case(history):
    for n in range(1, 7):
        record(history, n, {"a": STABLE, **({"b": STABLE} if n in (1, 3) else {})})
    trends = build_trends(history, thresholds("a", "b"), depth=3)
    assert [p.session_id for p in trends.cases["a"].points] == [sid(4), sid(5), sid(6)]
    assert [p.session_id for p in trends.cases["b"].points] == [sid(1), sid(3)]  # only sessions that ran it
    assert [s.id for s in trends.sessions] == [sid(1), sid(3), sid(4), sid(5), sid(6)]
    with pytest.raises(ValueError):
        build_trends(history, thresholds("a"), depth=0)


def test_a_partial_or_unjudged_session_has_no_rate_and_is_not_compared(history):
    record(history, 1, {"a": GOOD, "b": GOOD})
    record(history, 2, {"a": BAD, "b": "uuuee"})
    record(history, 3, {"a": "pp" + "u" * 8, "b": BAD}, partial=True)  # --skip-judge: rule checks only
    trends = build_trends(history, thresholds("a", "b"))
    a, b = trends.cases["a"], trends.cases["b"]
    assert [p.rate for p in a.points] == [1.0, 0.2, None]
    assert a.points[-1].marks == ("partial", NO_VERDICT)
    # the latest session judged nothing: no "regressed since", though s2 alone regressed against s1
    assert a.regressed_since is None and b.regressed_since is None
    assert b.points[1].rate is None and b.points[1].marks == (NO_VERDICT,)
    assert b.points[1].counts == Counts(0, 0, 2, 3)


def test_a_partial_earlier_session_is_skipped_for_the_comparison(history):
    record(history, 1, {"a": GOOD})
    record(history, 2, {"a": GOOD}, partial=True)
    record(history, 3, {"a": BAD})
    a = build_trends(history, thresholds("a")).cases["a"]
    assert a.points[1].rate == 1.0 and a.points[1].marks == ("partial",)  # every run reached a verdict
    assert a.regressed_since.session_id == sid(1)  # `diff` refuses partial vs judged: s2 is skipped


def test_a_partial_session_whose_runs_all_reached_a_verdict_has_the_rate_the_library_shows(tmp_path):
    # Issue 26.12: trends showed "·" where the library showed 100% for the same --skip-judge session of
    # a rule-only case (every run passed its rule checks: verdicts, no judge to skip). One rule for both.
    from scarbook.project import Project
    from scarbook.views.library_rows import build_rows

    (tmp_path / "scarbook.yaml").write_text("agent: {type: command, argv: [sh, -c, exit]}\n")
    for cid in ("rules", "judged"):
        (tmp_path / "cases" / cid).mkdir(parents=True)
        (tmp_path / "cases" / cid / "case.yaml").write_text(
            f"id: {cid}\ntask: t\nchecks:\n  - {{type: output_contains, text: x}}\n")
    project = Project.at(tmp_path)
    record(project.history, 1, {"rules": "ppp", "judged": "f" + "u" * 9}, partial=True)
    rows = {r.key: r for r in build_rows(project)}
    trends = build_trends(project.history, thresholds("rules", "judged"))
    assert rows["rules"].stats.rate == 1.0 and trends.cases["rules"].points[0].rate == 1.0
    assert trends.cases["rules"].points[0].marks == ("partial",)
    assert rows["judged"].stats.rate is None and trends.cases["judged"].points[0].rate is None
    assert trends.cases["judged"].points[0].marks == ("partial", NO_VERDICT)


def test_cancelled_sessions_keep_their_rate_and_their_mark(history):
    record(history, 1, {"a": GOOD})
    record(history, 2, {"a": "ppp"}, state="cancelled")
    a = build_trends(history, thresholds("a")).cases["a"]
    assert a.points[-1].marks == ("cancelled",) and a.points[-1].rate == 1.0 and a.points[-1].runs == 3


def test_a_case_never_run_has_an_empty_trend(history):
    record(history, 1, {"a": GOOD})
    trends = build_trends(history, thresholds("a", "never"))
    never = trends.cases["never"]
    assert never.points == [] and never.regressed_since is None and never.flips == 0 and never.spread == 0
    assert [t.case_id for t in trends.flakiest()] == ["a"]


def test_no_history_at_all(history):
    trends = build_trends(history, thresholds("a"))
    assert trends.cases["a"].points == [] and trends.sessions == []


def test_damaged_lines_are_left_out_marked_and_reported(history):
    record(history, 1, {"a": GOOD})
    record(history, 2, {"a": BAD})
    path = history.dir / sid(2) / "runs-a.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + "not json\n" + "".join(lines[2:]))  # 11 lines, one damaged
    trends = build_trends(history, thresholds("a"))
    a = trends.cases["a"]
    assert a.points[-1].counts == Counts(2, 8, 0, 0) and DAMAGED in a.points[-1].marks
    assert a.points[0].marks == ()
    assert any(f"{path} line 3 is not counted" in p for p in trends.problems)
    assert a.regressed_since.session_id == sid(1)


def test_a_session_whose_runs_were_all_damaged_is_still_the_latest(history):
    record(history, 1, {"a": GOOD})
    record(history, 2, {"a": BAD})
    (history.dir / sid(2) / "runs-a.jsonl").write_text("garbage\n")
    a = build_trends(history, thresholds("a")).cases["a"]
    latest = a.points[-1]
    assert latest.session_id == sid(2) and latest.rate is None and NO_VERDICT in latest.marks
    assert DAMAGED in latest.marks and a.regressed_since is None  # an older rate never stands in


def test_a_case_whose_checks_changed_is_not_compared_across_the_change(history):
    record(history, 1, {"a": GOOD}, digests={"a": "old"})
    record(history, 2, {"a": BAD}, digests={"a": "new"})
    a = build_trends(history, thresholds("a")).cases["a"]
    assert CHANGED in a.points[0].marks and a.regressed_since is None  # `diff` refuses this pair


def test_regressed_since_is_what_scarbook_diff_says(project):
    """A lone borderline drop (19/20 -> 13/20, Fisher p = 0.044) is regressed; beside five more
    cases Holm lifts it to p = 0.26 and diff says no detectable change — and so do the trends."""
    history = History(project.workspaces)
    alone_before, alone_after = "p" * 19 + "f", "p" * 13 + "f" * 7
    record(history, 1, {"a": alone_before}, label="v1")
    record(history, 2, {"a": alone_after}, label="v2")
    family = {c: "p" * 10 + "f" * 10 for c in "bcdef"}
    record(history, 3, {"a": alone_before, **family}, label="v3")
    record(history, 4, {"a": alone_after, **family}, label="v4")

    out = project.cli("diff", "v1", "v2").output
    assert "regressed: a" in out
    out = project.cli("diff", "v3", "v4").output
    assert "regressed: none" in out
    h = History(project.workspaces)
    assert build_trends(h, thresholds("a"), depth=2).cases["a"].regressed_since is None  # v3 vs v4: family
    # drop v3/v4 from the window's reach: the trend over v1, v2 alone says what `diff v1 v2` says
    for n in (3, 4):
        (h.dir / sid(n)).rename(h.dir / f"{sid(n)}.damaged")
    assert build_trends(h, thresholds("a")).cases["a"].regressed_since.name == "v1"


def test_scarbook_list_and_trends_say_regressed_since(project):
    project.bundled()
    history = History(project.workspaces)
    for n, (w, f) in enumerate([(GOOD, GOOD), (GOOD, BAD), (BAD, GOOD)], 1):
        record(history, n, {"write-one-line": w, "fix-json-config": f}, label=f"v{n}")
    listed = project.cli("list")
    assert listed.exit_code == 0
    line = next(x for x in listed.output.splitlines() if x.startswith("write-one-line"))
    assert "regressed since v2,stale" in line
    assert "regressed" not in next(x for x in listed.output.splitlines() if x.startswith("fix-json-config"))

    shown = project.cli("trends")
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[:4] == ["sessions (oldest first):", f"   1 = {sid(1)}  v1  2026-01-01 09:00",
                         f"   2 = {sid(2)}  v2  2026-01-02 09:00", f"   3 = {sid(3)}  v3  2026-01-03 09:00"]
    table = lines[lines.index("") + 1:]
    assert table[0] == "case             flips     1    2    3  note"
    assert table[2] == "fix-json-config      2   100   20  100"  # two crossings: the flakiest first
    assert table[3] == (f"write-one-line       1   100  100   20  regressed since v2 (scarbook diff {sid(2)} "
                        f"{sid(3)})")
    assert "never run: rename-function, review-api-claims" in shown.output

    data = json.loads(project.cli("trends", "write-one-line", "--json", "-n", "2").output)
    assert data["depth"] == 2 and [s["id"] for s in data["sessions"]] == [sid(2), sid(3)]
    (case,) = data["cases"]
    assert case["case"] == "write-one-line" and case["regressed_since"] == sid(2) and case["flips"] == 1
    assert case["points"][1] == {"session": sid(3), "label": "v3", "started_at": "2026-01-03T09:00:00+00:00",
                                 "rate": 0.2, "passes": 2, "fails": 8, "errors": 0, "unjudged": 0, "marks": []}


def test_scarbook_trends_refuses_an_unknown_case(project):
    project.bundled()
    result = project.cli("trends", "nope")
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: no case 'nope' in {project.cases_dir} — `scarbook list` shows the cases\n"


def test_a_damaged_file_already_reported_is_still_marked_damaged(history):
    """The library reads the latest session first (its rows), which finds the problem; the trend read
    that follows must still mark the session damaged, and says the problem once."""
    record(history, 1, {"a": GOOD})
    path = history.dir / sid(1) / "runs-a.jsonl"
    path.write_text(path.read_text() + "not json\n")
    assert len(history.runs(sid(1), "a").problems) == 1
    trends = build_trends(history, thresholds("a"))
    assert DAMAGED in trends.cases["a"].points[0].marks and len(trends.problems) == 1


def count_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    real = History.outcomes

    def outcomes(self, session_id, case_id, info):
        reads.append(f"{session_id}/{case_id}")
        return real(self, session_id, case_id, info)

    monkeypatch.setattr(History, "outcomes", outcomes)
    return reads


def test_an_ended_session_is_read_once_then_from_its_counts_cache(tmp_path, monkeypatch):
    history = History(tmp_path / "workspaces")
    for n, runs in enumerate([GOOD, GOOD, BAD], 1):
        record(history, n, {"a": runs, "b": STABLE})
    path = history.dir / sid(3) / "runs-a.jsonl"
    path.write_text(path.read_text() + "not json\n")
    reads = count_reads(monkeypatch)
    first = build_trends(History(tmp_path / "workspaces"), thresholds("a", "b"))
    assert len(reads) == 6 and (history.dir / sid(1) / ".counts.json").is_file()
    fresh = History(tmp_path / "workspaces")
    second = build_trends(fresh, thresholds("a", "b"))
    assert len(reads) == 6  # nothing read again: a stat per file
    assert second.cases == first.cases and second.cases["a"].regressed_since.session_id == sid(2)
    assert DAMAGED in second.cases["a"].points[-1].marks
    assert any(f"{path} line 11 is not counted" in p for p in second.problems)  # told from the cache too

    path.write_text(path.read_text() + "still not json\n")  # the file changed: read again, that case only
    again = build_trends(History(tmp_path / "workspaces"), thresholds("a", "b"))
    assert reads[6:] == [f"{sid(3)}/a"] and again.cases["a"].points[-1].counts == Counts(2, 8, 0, 0)


@pytest.mark.parametrize("cache, reread", [("not json", ["a", "b"]), ('{"format": 1}', ["a", "b"]), ("[]", ["a", "b"]),
                                           ("counts of a made negative", ["a"]), ("counts of a made a string", ["a"])])
def test_a_damaged_counts_cache_is_ignored_and_rewritten(tmp_path, monkeypatch, cache, reread):
    history = History(tmp_path / "workspaces")
    record(history, 1, {"a": GOOD, "b": BAD})
    build_trends(History(tmp_path / "workspaces"), thresholds("a", "b"))
    path = history.dir / sid(1) / ".counts.json"
    if cache.startswith("counts of a"):
        doc = json.loads(path.read_text())
        doc["cases"]["a"]["counts"] = [-1, 0, 0, 0] if cache.endswith("negative") else "10"
        cache = json.dumps(doc)
    path.write_text(cache)
    reads = count_reads(monkeypatch)
    trends = build_trends(History(tmp_path / "workspaces"), thresholds("a", "b"))
    assert trends.cases["a"].points[0].counts == Counts(10, 0, 0, 0)
    assert trends.cases["b"].points[0].counts == Counts(2, 8, 0, 0)
    assert reads == [f"{sid(1)}/{c}" for c in reread]  # a whole damaged cache: every case; one entry: that case
    assert json.loads(path.read_text())["cases"]["a"]["counts"] == [10, 0, 0, 0]  # rewritten


def test_a_session_still_recording_is_never_cached(tmp_path):
    history = History(tmp_path / "workspaces")
    record(history, 1, {"a": GOOD})
    live = SessionInfo(id=sid(2), label="live", started_at="2026-01-02T09:00:00+00:00", runs_per_case=10,
                       case_ids=["a"], agent="demo")
    history.start_session(live)  # holds the lock: state running
    for k in range(1, 4):
        history.record_run(RunRecord(live.id, "a", k, "pass", "pass", started_at=live.started_at))
    trends = build_trends(History(tmp_path / "workspaces"), thresholds("a"))
    assert trends.cases["a"].points[-1].marks == ("running",) and trends.cases["a"].points[-1].runs == 3
    assert not (history.dir / sid(2) / ".counts.json").exists()
    assert (history.dir / sid(1) / ".counts.json").exists()
    history.finish_session(live)


def test_an_id_given_to_another_case_does_not_inherit_the_old_cases_trend(project):
    """Runs are recorded under the id they ran as: after `case mv`, the case now named write-one-line
    (fix-json-config before) must not show the regression of the case that had that id."""
    project.bundled()
    history = History(project.workspaces)
    for n, runs in enumerate([GOOD, GOOD, BAD], 1):
        record(history, n, {"write-one-line": runs, "fix-json-config": STABLE}, label=f"v{n}")
    assert "regressed since v2" in project.cli("list").output
    assert project.cli("case", "mv", "write-one-line", "old-one-line").exit_code == 0
    assert project.cli("case", "mv", "fix-json-config", "write-one-line").exit_code == 0
    data = {c["case"]: c for c in json.loads(project.cli("trends", "--json").output)["cases"]}
    assert data["write-one-line"]["points"] == [] and data["write-one-line"]["regressed_since"] is None
    assert data["old-one-line"]["points"] == []  # its runs stay under the id they ran as
    assert "regressed" not in project.cli("list").output


def test_the_holm_family_leaves_out_ids_given_to_another_case_as_diff_does(project):
    """Between v3 and v4 the ids b..f were given to other cases: `diff v3 v4` leaves them out of the
    comparison, so its family is {a} alone and the borderline drop is regressed — for trends too."""
    from scarbook.cases.lineage import CaseIdLog, IdEntry

    history = History(project.workspaces)
    family = {c: "p" * 10 + "f" * 10 for c in "bcdef"}
    record(history, 3, {"a": "p" * 19 + "f", **family}, label="v3")
    record(history, 4, {"a": "p" * 13 + "f" * 7, **family}, label="v4")
    h = History(project.workspaces)
    assert build_trends(h, thresholds("a"), ids={}).cases["a"].regressed_since is None  # family of six
    log = CaseIdLog(project.workspaces)
    log.update({c: IdEntry("2026-01-01T00:00:03.500000+00:00") for c in "bcdef"})  # sid(3) < since < sid(4)
    out = project.cli("diff", "v3", "v4").output
    assert "regressed: a" in out
    trends = build_trends(History(project.workspaces), thresholds("a"), ids=log.load())
    assert trends.cases["a"].regressed_since.name == "v3"
