"""`scarbook noise` (issue 24.3): an A/A pair on the demo agent, its spread stored and quoted by `diff`."""

from __future__ import annotations

import json
import re

import pytest

from scarbook.history.noise import NoiseStore

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# records and reports, not about the agent's process (command agents stay real programs)
pytestmark = pytest.mark.usefixtures("inprocess_demo")


def test_noise_on_the_demo_agent_reports_and_stores_its_a_a_spread(project) -> None:
    project.bundled()  # the demo agent, unseeded: each session draws its own outcomes
    result = project.cli("noise", "write-one-line", "fix-json-config", "--runs", "10", "-q")
    # unseeded, the pair may or may not disagree; the exit code must say which it did
    assert result.exit_code == (1 if "DISAGREE" in result.stdout else 0), result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:4] == ["case", "A", "(rate", "passes/judged)"]
    rows = {line.split()[0]: line for line in lines[2:4]}
    assert sorted(rows) == ["fix-json-config", "write-one-line"]
    for row in rows.values():
        assert re.search(r"±\d+ pts", row) and ("agree" in row or "DISAGREE" in row)
    pair = next(line for line in lines if line.startswith("A/A pair: "))
    a, b = re.findall(r"[AB] = (\S+?),? ", pair + " ")[:2]
    assert "(the same configuration, 10 runs per case each)" in pair
    assert any(line.startswith("overall: mean A/A spread ±") for line in lines)
    measured = NoiseStore(project.workspaces).latest()
    assert sorted(measured) == ["fix-json-config", "write-one-line"]
    m = measured["write-one-line"]
    assert m.sessions == [a, b] and m.runs == 10 and m.spread is not None and 0 < m.spread < 1
    labels = {json.loads((project.workspaces / "history" / s / "session.json").read_text())["session"]["1"]["label"]
              for s in (a, b)}
    assert {label.split()[-1] for label in labels} == {"A", "B"} and len({label.split()[0] for label in labels}) == 1
    # `scarbook diff` now quotes the spread (at these runs: the pair's own), and a difference inside it is
    # within noise — unless the test called it a change, which the spread never contradicts (no line then)
    shown = project.cli("diff", a, b)
    assert shown.exit_code == 0, shown.output
    quotes = [line for line in shown.stdout.splitlines() if line.startswith("write-one-line: its A/A spread")]
    disagree = m.disagree
    if abs(m.diff) <= m.spread and disagree:
        assert quotes == []
    else:
        (quote,) = quotes
        assert quote.startswith(f"write-one-line: its A/A spread at these runs is ±{round(100 * m.spread)} pts "
                                f"(±{round(100 * m.spread)} at 10 runs a side")
        within = abs(m.diff) <= m.spread
        assert quote.endswith("is within noise" if within else "as the test says" if disagree else ")")
    # and `scarbook trends` shows each case's noise floor beside its rates
    trends = project.cli("trends", "write-one-line")
    row = next(line for line in trends.stdout.splitlines() if line.startswith("write-one-line "))
    assert row.endswith(f"A/A ±{round(100 * m.spread)} pts")
    data = json.loads(project.cli("trends", "--json").stdout)
    assert next(c for c in data["cases"] if c["case"] == "write-one-line")["aa_spread"] == m.spread


@pytest.mark.parametrize(("runs", "p"), [(1, "1.000"), (2, "0.333"), (3, "0.100")])
def test_noise_refuses_a_pair_too_small_to_disagree(project, runs, p) -> None:
    """Before: `noise -n 2` stored a ±57-point spread from 1/2 against 1/2 as the case's noise floor, and `diff`
    quoted it ("its A/A spread at these runs is ±18 pts (±57 at 2 runs a side) — … within noise")."""
    project.bundled()
    result = project.cli("noise", "write-one-line", "--runs", str(runs))
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"scarbook: an A/A pair needs at least 4 runs per case a side, got {runs}: at {runs} run{'s' * (runs > 1)} "
        f"even {runs}/{runs} against 0/{runs} is p = {p} (Fisher), so A and A could never disagree, and the spread "
        f"stored would be the width of an interval from {runs} run{'s' * (runs > 1)}, not a noise floor — pass "
        "--runs 4 or more (e.g. --runs 20)")
    assert NoiseStore(project.workspaces).latest() == {}
    assert not (project.workspaces / "history").exists() or not any((project.workspaces / "history").glob("2*"))


def test_noise_takes_too_few_runs_from_scarbook_yaml_as_from_the_flag(project) -> None:
    project.bundled()
    path = project.root / "scarbook.yaml"
    path.write_text(path.read_text().replace("runs: 20", "runs: 2") if "runs: 20" in path.read_text()
                    else path.read_text() + "runs: 2\n")
    result = project.cli("noise", "write-one-line")
    assert result.exit_code == 2
    assert result.stderr.startswith("scarbook: an A/A pair needs at least 4 runs per case a side, got 2: ")


def test_the_fewest_runs_of_a_pair_that_can_disagree_is_4() -> None:
    from scarbook.stats.compare import min_fisher_p
    from scarbook.views.noise import MIN_AA_RUNS

    assert MIN_AA_RUNS == 4 and min_fisher_p(3, 3, 3) >= 0.05 > min_fisher_p(4, 4, 4)
