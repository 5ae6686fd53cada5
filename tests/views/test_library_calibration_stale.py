"""The library's judge line ("judge: calibrated 2026-12-06, 83% agreement") is stale exactly when the calibration's
labels no longer count: when its judge is not the one in use — model, prompt, samples, temperature, max_tokens or
endpoint (judge/identity.py, the rule history/judge_truth.py counts the labels by) — saying where they differ.

Before, views/library_rows read judge/calibrate.calibration_status, which compared the model and prompt only: a
calibration made at another endpoint or max_tokens showed as current in the library while `scarbook calibrate
--report` (and every report) called the same labels stale."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from scarbook.judge.prompt import prompt_digest
from scarbook.judge.settings import DEFAULT_MODEL
from scarbook.project import Project
from scarbook.views.library_rows import build_rows, judge_calibration_line
from tests.judge.test_label_files import ITEM, label_truly, make_project

ENDPOINT = "http://127.0.0.1:8001"


def judged_cases(tmp_path: Path, **recorded) -> Path:
    """make_project's history of alpha and beta, each now a case graded by the judge on ITEM."""
    root = make_project(tmp_path, {"alpha": "p" * 30 + "f" * 10, "beta": "p" * 20 + "f" * 20}, **recorded)
    for case in ("alpha", "beta"):
        (root / "cases" / case).mkdir(parents=True)
        (root / "cases" / case / "case.yaml").write_text(
            f"id: {case}\ntask: t\nchecks:\n  - {{type: llm_judge, artifact: output, rubric: [{ITEM}]}}\n")
    return root


def library_line(root: Path, judge: str = "") -> str:
    (root / "scarbook.yaml").write_text(f"judge:\n{judge}" if judge else "")
    project = Project.open(root)
    return judge_calibration_line(project, list(build_rows(project)))


def test_a_calibration_made_at_another_endpoint_or_max_tokens_is_stale_in_the_library(tmp_path):
    root = judged_cases(tmp_path, base_url=ENDPOINT)
    (root / "scarbook.yaml").write_text(f"judge:\n  base_url: {ENDPOINT}\n")
    label_truly(root, 12, lambda r: "PASS" if "alpha" in r["case"] else "FAIL")
    calibrated = f"judge: calibrated {date.today().isoformat()}, 62% agreement"
    assert library_line(root, f"  base_url: {ENDPOINT}/\n") == calibrated  # (recorded without the /)
    assert library_line(root, f"  base_url: {ENDPOINT}\n  max_tokens: 2048\n") == (
        f"{calibrated} — stale: it was made on judge {DEFAULT_MODEL}, max_tokens=1024, the judge is now "
        f"{DEFAULT_MODEL}, max_tokens=2048; press j")
    assert library_line(root, "  base_url: http://127.0.0.1:8002\n") == (
        f"{calibrated} — stale: it was made on judge {DEFAULT_MODEL}, base_url={ENDPOINT}, the judge is now "
        f"{DEFAULT_MODEL}, base_url=http://127.0.0.1:8002; press j")
    assert library_line(root, f"  base_url: {ENDPOINT}\n  model: claude-other\n") == (
        f"{calibrated} — stale: it was made on judge {DEFAULT_MODEL} (prompt {prompt_digest()[:8]}), the judge is now "
        f"claude-other (prompt {prompt_digest()[:8]}); press j")


def test_a_calibration_recorded_before_its_judge_s_sampling_counts_for_the_default_endpoint_only(tmp_path,
                                                                                                 monkeypatch):
    """A calibration record older than judge_sampling: as an old label, it counts as made at the default endpoint
    (https://api.anthropic.com), whatever its max_tokens — never at another vendor's."""
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    root = judged_cases(tmp_path)
    record = {"date": "2026-11-30", "judge_model": DEFAULT_MODEL, "judge_prompt_digest": prompt_digest(),
              "agreement": 0.85, "kappa": 0.6, "n": 20}
    (root / "workspaces" / "history" / "calibration.json").write_text(json.dumps({"calibrations": {"1": record}}))
    calibrated = "judge: calibrated 2026-11-30, 85% agreement"
    assert library_line(root) == library_line(root, "  max_tokens: 2048\n") == calibrated
    assert library_line(root, f"  base_url: {ENDPOINT}\n") == (
        f"{calibrated} — stale: it was made on judge {DEFAULT_MODEL}, base_url not recorded (counted as "
        f"https://api.anthropic.com), the judge is now {DEFAULT_MODEL}, base_url={ENDPOINT}; press j")
