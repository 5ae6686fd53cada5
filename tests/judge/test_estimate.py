"""`--dry-run` estimate of judge calls and cost, from history or from rubric and artifact size."""

from __future__ import annotations

import pytest

from scarbook.judge import JudgeSettings, estimate_judge_calls
from scarbook.judge.pricing import DEFAULT_PRICES
from scarbook.models import Case, Check, RunRecord, Scar, Usage


def judged_case(case_id, checks=1, rubric=("one line", "no false claim"), **params) -> Case:
    return Case(
        id=case_id,
        task="Extract the first line",
        checks=[Check("file_exists", {"path": "tmp.txt"})]
        + [Check("llm_judge", {"rubric": list(rubric), **params}) for _ in range(checks)],
    )


def run(case_id, usage: Usage, calls=1) -> RunRecord:
    return RunRecord(session_id="s1", case_id=case_id, k=1, status="pass", reason="", judge_usage=usage, judge_calls=calls)


def test_history_gives_the_mean_tokens_per_call_repriced():
    settings = JudgeSettings(model="claude-sonnet-4-6", samples=3)
    history = [
        run("a", Usage(input_tokens=3000, output_tokens=300, cost_usd=99.0), calls=3),
        run("a", Usage(input_tokens=9000, output_tokens=900), calls=3),
        run("a", Usage()),  # a run the judge never saw (short-circuit): says nothing about cost
        run("other", Usage(input_tokens=1, output_tokens=1)),
    ]
    estimate = estimate_judge_calls([judged_case("a")], runs=10, history_runs=history, settings=settings)

    assert estimate.calls == 30  # 10 runs x 1 judge check x 3 samples
    per_call = (2000 * 3 + 200 * 15) / 1_000_000  # mean of 12000/6 input, 1200/6 output, at today's prices
    assert estimate.cost_usd == pytest.approx(30 * per_call)
    assert estimate.basis == (
        "mean judge tokens of 2 past judged runs (1 case); priced for claude-sonnet-4-6, 3 samples per check; "
        "upper bound: assumes every run reaches the judge"
    )
    assert estimate.per_case == {"a": {"calls": 30, "cost_usd": pytest.approx(30 * per_call),
                                   "batch_cost_usd": pytest.approx(15 * per_call)}}  # issue 27: the batch price too


def test_without_history_a_rough_token_estimate_grows_with_the_artifact(tmp_path):
    small = judged_case("small")
    big_root = tmp_path / "big"
    (big_root / "scar").mkdir(parents=True)
    (big_root / "scar" / "artifact.txt").write_text("x" * 40_000)
    big = judged_case("big", artifact="tmp.txt")
    big.root = big_root
    big.scar = Scar(failed_artifact="scar/artifact.txt")
    estimate = estimate_judge_calls([small, big, Case(id="rules-only", task="t")], runs=5, history_runs=[])

    assert estimate.calls == 10
    assert set(estimate.per_case) == {"small", "big"}
    assert 0 < estimate.per_case["small"]["cost_usd"] < estimate.per_case["big"]["cost_usd"]
    # 40 kB at ~4 chars/token is ~10k input tokens per call on the default model.
    price = DEFAULT_PRICES["claude-sonnet-4-6"]
    assert estimate.per_case["big"]["cost_usd"] / 5 > 10_000 * price.input / 1_000_000
    assert estimate.basis.startswith("rough token estimate from rubric and artifact size (2 cases); priced for claude-sonnet-4-6;")


def test_artifact_guess_is_capped_by_max_artifact_bytes(tmp_path):
    (tmp_path / "scar").mkdir()
    (tmp_path / "scar" / "artifact.txt").write_text("x" * 400_000)
    case = judged_case("big")
    case.root, case.scar = tmp_path, Scar(failed_artifact="scar/artifact.txt")
    capped = estimate_judge_calls([case], 1, [], JudgeSettings(max_artifact_bytes=1_000)).cost_usd
    uncapped = estimate_judge_calls([case], 1, [], JudgeSettings(max_artifact_bytes=400_000)).cost_usd
    assert capped * 10 < uncapped


def test_no_judged_case():
    estimate = estimate_judge_calls([Case(id="r", task="t")], runs=5, history_runs=[])
    assert (estimate.calls, estimate.cost_usd) == (0, 0.0)
    assert estimate.basis == "no selected case has an llm_judge check"


def test_mixed_basis_and_multiple_checks():
    history = [run("a", Usage(input_tokens=1000, output_tokens=100), calls=2)]
    estimate = estimate_judge_calls([judged_case("a", checks=2), judged_case("b")], runs=3, history_runs=history)
    assert estimate.calls == 3 * 2 + 3
    assert estimate.basis.startswith(
        "mean judge tokens of 1 past judged run (1 case); rough token estimate from rubric and artifact size (1 case);"
    )
