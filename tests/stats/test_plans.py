"""Plans that can decide (issue 39.7, 37.11): "above" needs at least 14 straight judged passes at an
80% threshold (29 at 90%, 59 at 95%); the bundled runs, presets, config defaults and the example
workflow are sized so a case at 100% can be called above at its threshold, and a plan that cannot
decide a case says so once, before the runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scarbook.config import Config, load_config
from scarbook.stats.plans import grouped, runs_to_show, undecidable_lines

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("t", [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99])
def test_runs_to_show_is_the_fewest_straight_passes_the_exact_test_calls_above(t) -> None:
    from scipy.stats import binom

    n = runs_to_show(t, 0.05)
    assert binom.sf(n - 1, n, t) < 0.05 <= binom.sf(n - 2, n - 1, t)


def test_the_issue_figures() -> None:
    assert [runs_to_show(t, 0.05) for t in (0.8, 0.9, 0.95)] == [14, 29, 59]
    assert runs_to_show(1.0, 0.05) is None and runs_to_show(0.0, 0.05) == 1


def test_one_line_per_case_a_plan_cannot_decide() -> None:
    lines = undecidable_lines([("fix-json-config", 0.8), ("easy", 0.5), ("strict", 0.9), ("perfect", 1.0)], 10, 0.05)
    assert lines == ["fix-json-config: 10 runs cannot show ≥ 80%; 14 can; or use --runs auto",
                     "strict: 10 runs cannot show ≥ 90%; 29 can; or use --runs auto",
                     "perfect: no number of runs can show ≥ 100% (one failure is always possible): "
                     "lower its threshold, or expect it undecided"]
    assert undecidable_lines([("fix-json-config", 0.8)], 14, 0.05) == []
    assert undecidable_lines([("easy", 0.5)], 1, 0.05) == ["easy: 1 run cannot show ≥ 50%; 5 can; or use --runs auto"]


def _thresholds() -> list[float]:
    found = []
    for case in (REPO / "cases").glob("*/case.yaml"):
        found.append(yaml.safe_load(case.read_text()).get("threshold") or 0.8)
    return found


def test_the_bundled_runs_and_presets_can_call_a_healthy_case_above() -> None:
    cfg = load_config(REPO / "scarbook.yaml")
    plans = {"runs": cfg.runs, **{f"preset {k}": v for k, v in cfg.presets.items()}}
    for name, runs in plans.items():
        for t in _thresholds() + [cfg.threshold]:
            assert runs >= runs_to_show(t, cfg.gate.alpha), (name, runs, t)


def test_the_defaults_and_the_starter_config_can_too() -> None:
    cfg = Config()
    for runs in [cfg.runs, *cfg.presets.values()]:
        assert runs >= runs_to_show(cfg.threshold, cfg.gate.alpha)


def test_the_example_workflows_preset_can_decide() -> None:
    text = (REPO / "examples" / "github" / "scarbook.yml").read_text()
    cfg = load_config(REPO / "scarbook.yaml")
    preset = text.split("--preset ")[1].split()[0]
    assert cfg.presets[preset] >= runs_to_show(0.8, 0.05)


def test_grouped_names_five_cases_of_a_reason_and_counts_the_rest() -> None:
    """The TUI's launch modal joined every id of a reason: 100 cases made one line of 100 ids."""
    found = [(f"c{i}", "10 runs cannot show ≥ 80%") for i in range(7)] + [("s", "no number of runs")]
    assert grouped(found) == ["c0, c1, c2, c3, c4 and 2 more (7 cases): 10 runs cannot show ≥ 80%",
                              "s: no number of runs"]
    assert grouped(found[:5]) == ["c0, c1, c2, c3, c4: 10 runs cannot show ≥ 80%"]
