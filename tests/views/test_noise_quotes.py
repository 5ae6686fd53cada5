"""The A/A spread is quoted only when it is comparable, and never beside a verdict it contradicts
(issue 39.4): `diff` said *regressed* (p < .001, -35 to -14 points) and, on the same line, "this
difference (-25 pts) is within noise" — a spread measured at 5 runs a side, quoted at 100, and one
measured before the case's checks changed."""

from __future__ import annotations

import pytest

from scarbook.history.noise import NoiseMeasurement, NoiseStore
from scarbook.history.store import History
from scarbook.models import RunRecord, SessionInfo

pytestmark = pytest.mark.usefixtures("inprocess_demo")


def _record(history: History, n: int, passes: int, runs: int, digest: str) -> SessionInfo:
    info = SessionInfo(id=f"20260101-0{n:05d}-000a", label=f"v{n}", started_at=f"2026-01-0{n}T09:00:00+00:00",
                       runs_per_case=runs, case_ids=["c"], agent="demo", case_digests={"c": digest})
    history.start_session(info)
    for k in range(1, runs + 1):
        status = "pass" if k <= passes else "fail"
        history.record_run(RunRecord(info.id, "c", k, status, status, started_at=info.started_at))
    history.finish_session(info)
    return info


def _measured(project, runs: int, spread: float, digest: str) -> None:
    NoiseStore(project.workspaces).save([NoiseMeasurement("c", ["x", "y"], runs, 0.8, 0.8, 0.0, spread, 1.0,
                                                          False, "fp", digest, "2026-01-01T00:00:00")])


def _diff(project) -> list[str]:
    history = History(project.workspaces)
    _record(history, 1, 90, 100, "d1")
    _record(history, 2, 65, 100, "d1")
    out = project.cli("diff", "v1", "v2")
    assert out.exit_code == 0, out.output
    assert "regressed: c" in out.stdout
    return [line for line in out.stdout.splitlines() if line.startswith("c: ")]


def test_a_spread_measured_at_5_runs_is_scaled_to_100_and_agrees_with_the_verdict(project) -> None:
    _measured(project, 5, 0.45, "d1")  # ±45 points at 5 runs a side is ±10 at 100
    (line,) = _diff(project)
    assert line == ("c: its A/A spread at these runs is ±10 pts (±45 at 5 runs a side, `scarbook noise` 2026-01-01) "
                    "— this difference (-25 pts) is beyond it, as the test says")
    assert "within noise" not in line


def test_a_spread_that_would_contradict_the_verdict_is_not_quoted(project) -> None:
    _measured(project, 100, 0.40, "d1")  # ±40 points at the same runs: the test's regressed says otherwise
    assert _diff(project) == []


def test_a_spread_measured_on_other_checks_is_not_quoted(project) -> None:
    _measured(project, 100, 0.10, "older")
    (line,) = _diff(project)
    assert line == ("c: its A/A spread (`scarbook noise` 2026-01-01) was measured on other checks (the case changed "
                    "since): not quoted — measure it again with `scarbook noise c`")


def test_trends_quote_only_a_spread_measured_on_the_cases_checks(project) -> None:
    from scarbook.cases.io import case_digest
    from scarbook.views.trends import project_trends

    project.bundled()
    loaded = project.load()
    case = next(c for c in loaded.load_cases().cases if c.id == "write-one-line")
    other = NoiseMeasurement("fix-json-config", ["x", "y"], 10, 0.8, 0.8, 0.0, 0.2, 1.0, False, "fp", "older", "")
    mine = NoiseMeasurement("write-one-line", ["x", "y"], 10, 0.8, 0.8, 0.0, 0.3, 1.0, False, "fp", case_digest(case), "")
    NoiseStore(project.workspaces).save([other, mine])
    trends = project_trends(loaded, loaded.load_cases().cases)
    assert trends.aa_spread == {"write-one-line": 0.3}
    few = NoiseMeasurement("write-one-line", ["x", "y"], 3, 0.8, 0.8, 0.0, 0.5, 1.0, False, "fp", case_digest(case), "")
    NoiseStore(project.workspaces).save([few])  # stored before `noise` refused a pair too small to disagree
    assert project_trends(loaded, loaded.load_cases().cases).aa_spread == {}


def test_a_spread_stored_at_too_few_runs_to_disagree_is_not_quoted(project) -> None:
    """A measurement `noise` stored at 2 runs a side before it refused so few (±57 points from 1/2 against 1/2):
    `diff` says why it does not quote it, instead of scaling it into a floor."""
    _measured(project, 2, 0.57, "d1")
    (line,) = _diff(project)
    assert line == ("c: its A/A spread (`scarbook noise` 2026-01-01) was measured at 2 runs a side, too few for A and "
                    "A ever to disagree: not quoted — measure it again with `scarbook noise c --runs 20` (at least 4)")

