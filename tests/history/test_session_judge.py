"""`scarbook diff`'s judge: two sessions are graded by the same judge only when everything their runs record of it
agrees — model, base_url, grading prompt digest, samples, temperature and max_tokens (history/session_judge.py). A part a session's runs
did not record (older records) is unknown: the diff says so, and calls the judges neither the same nor different."""

from __future__ import annotations

from pathlib import Path

import pytest

from scarbook.history.store import History
from scarbook.judge.prompt import prompt_digest
from scarbook.models import CheckResult, JudgeDetail, RunRecord, SessionInfo
from tests.judge.test_label_files import ITEM, make_project, scarbook
from tests.reports.test_judge_truth import calibrate

MODEL = "claude-sonnet-4-6"
OTHER_PROMPT = "0123456789abcdef" * 4


def record_session(root: Path, judge: dict, day: int = 3, fingerprint: str = "") -> None:
    """A later session of case alpha (20 passes, 20 fails), each run's judge record `judge` (the keys a run
    records of it)."""
    history = History(root / "workspaces")
    marks = "p" * 20 + "f" * 20
    info = SessionInfo(id=f"202612{day:02d}-000001-000b", started_at=f"2026-12-{day:02d}T09:00:00+00:00",
                       case_ids=["alpha"], runs_per_case=len(marks), judge_model=judge.get("model", MODEL),
                       fingerprint=fingerprint)
    history.start_session(info)
    for k, mark in enumerate(marks, 1):
        verdict = "PASS" if mark == "p" else "FAIL"
        detail = {"items": [{"index": 0, "item": ITEM, "verdict": verdict, "reason": "r"}],
                  "artifact_excerpt": f"artifact alpha {info.id} {k}", **judge}
        status = "pass" if verdict == "PASS" else "fail"
        history.record_run(RunRecord(info.id, "alpha", k, status, "", checks=[
            CheckResult("llm_judge", status, "", 0, judge=JudgeDetail.from_dict(detail))]))
    info.state = "finished"
    history.finish_session(info)


@pytest.fixture(autouse=True)
def _sdk_default_base_url(monkeypatch) -> None:
    """The judge in use (scarbook.yaml sets no base_url) is reached at the SDK's default, whatever this shell says."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture
def project(tmp_path) -> Path:
    """A first session graded by the judge in use (model, today's prompt, samples 1, temperature 0.0), labelled."""
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10})
    calibrate(root)
    return root


SAME = {"model": MODEL, "prompt_digest": prompt_digest(), "samples": 1, "temperature": 0.0, "max_tokens": 1024,
        "base_url": "https://api.anthropic.com"}


@pytest.mark.parametrize(("judge", "line"), [
    ({**SAME, "temperature": 0.7}, "judge: A and B were graded by different judges (temperature 0.0 -> 0.7): their "
                                   "difference mixes the agent's change with the judges'; the raw verdicts stand"),
    ({**SAME, "prompt_digest": OTHER_PROMPT, "samples": 3},
     f"judge: A and B were graded by different judges (prompt digest {prompt_digest()[:8]} -> 01234567; samples 1 -> 3): "
     "their difference mixes the agent's change with the judges'; the raw verdicts stand"),
    ({"model": MODEL},  # a session recorded before the prompt digest and the sampling settings were kept
     f"judge: both sessions were graded by {MODEL}, but whether by one judge is unknown — B's runs do not record "
     "its base_url, prompt digest, samples, temperature or max_tokens (older records): differences not corrected for "
     "its error; the raw verdicts stand"),
    ({k: v for k, v in SAME.items() if k not in ("base_url", "max_tokens")},  # recorded before base_url, max_tokens
     f"judge: both sessions were graded by {MODEL}, but whether by one judge is unknown — B's runs do not record "
     "its base_url or max_tokens (older records): differences not corrected for its error; the raw verdicts stand"),
    ({**SAME, "base_url": "https://judge.example.com"},
     "judge: A and B were graded by different judges (base_url https://api.anthropic.com -> https://judge.example.com): "
     "their difference mixes the agent's change with the judges'; the raw verdicts stand"),
    ({**SAME, "max_tokens": 4096},
     "judge: A and B were graded by different judges (max_tokens 1024 -> 4096): their difference mixes the agent's "
     "change with the judges'; the raw verdicts stand"),
], ids=["temperature", "prompt-and-samples", "older-session", "before-base-url", "base_url", "max_tokens"])
def test_diff_does_not_call_judges_the_same_on_the_model_alone(project, judge, line):
    """Before: each of these said 'judge: with its measured error (…) … the same judge graded both sessions, so the
    verdicts stand', comparing the judges' model alone (then the model, prompt digest, samples and temperature: a
    base_url or max_tokens change, or a session that did not record them, still read 'the same judge'). A: graded by
    the judge in use, recorded whole."""
    record_session(project, SAME, day=3)
    record_session(project, judge, day=4)
    res = scarbook(project, "diff")
    assert res.exit_code == 0, res.output
    assert line in res.output.splitlines(), res.output
    assert "same judge" not in res.output


def test_one_judge_that_is_not_the_judge_in_use_on_sampling_is_said_so(project):
    """Both sessions graded at temperature 0.7, the labels made on the judge in use's verdicts (0.0): the labels do
    not measure their judge. Before, the diff rescaled their difference with the error measured at 0.0 and said
    'the same judge graded both sessions'."""
    record_session(project, {**SAME, "temperature": 0.7}, day=3)
    record_session(project, {**SAME, "temperature": 0.7}, day=4)
    res = scarbook(project, "diff")
    assert res.exit_code == 0, res.output
    assert (f"judge: both sessions were graded by {MODEL} with temperature 0.7, not by the judge in use ({MODEL} with "
            "temperature 0.0) whose error the labels measure: differences not corrected for it; the same judge "
            "graded both sessions, so the verdicts stand") in res.output.splitlines(), res.output


def test_the_config_note_names_the_judge_part_that_changed(project):
    """The fingerprint hashes the judge's prompt digest: before, a prompt change read 'judge 'claude-sonnet-4-6' ->
    'claude-sonnet-4-6'', a judge that had not changed."""
    record_session(project, {**SAME, "prompt_digest": OTHER_PROMPT}, fingerprint="0123456789ab")
    res = scarbook(project, "diff")
    assert res.exit_code == 0, res.output
    assert (f"note: the config differs (agent '' -> '', judge prompt digest {prompt_digest()[:8]!r} -> '01234567')"
            in res.output.splitlines()), res.output
