"""The workflow users copy (examples/github/scarbook.yml), its steps run as a runner runs them
(tests/helpers/workflow_steps.py) on a fresh `scarbook init` project: its first run on the default branch
works and commits the first baseline; a pull request's run then compares with it (issue 37.13: the eval
step exited 2, no baseline yet, and the HTML step 2, no session: no summary, no artifacts)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.helpers.paths import REPO
from tests.helpers.workflow_steps import run_job

WORKFLOW = REPO / "examples" / "github" / "scarbook.yml"
GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
          "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ID}, capture_output=True, text=True,
                          check=True)
    return done.stdout


def _fresh_project(tmp_path: Path) -> tuple[Path, Path]:
    """A repository (its remote a bare one) holding what `scarbook init` writes, and one case."""
    remote, work = tmp_path / "remote.git", tmp_path / "work"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    _git(tmp_path, "clone", "-q", str(remote), str(work))
    _git(work, "checkout", "-q", "-b", "main")
    exe = Path(sys.executable).with_name("scarbook")
    subprocess.run([str(exe), "init", "."], cwd=work, check=True, capture_output=True)
    cfg = work / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("agent:\n  type: demo\n", "agent:\n  type: demo\n  seed: 7\n", 1))
    shutil.copytree(REPO / "cases" / "write-one-line", work / "cases" / "write-one-line")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "a scar collection")
    _git(work, "push", "-q", "origin", "main")
    return remote, work


def _env(work: Path, tmp_path: Path, event: str, ref: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / f"summary-{event}.md"), "GITHUB_WORKSPACE": str(work),
            "GITHUB_EVENT_NAME": event, "GITHUB_REF_NAME": ref, "SCARBOOK_DEMO_DELAY": "0"}


def test_the_first_run_on_a_fresh_project_blesses_the_baseline_and_the_next_compares(tmp_path) -> None:
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["eval"]
    assert job["permissions"] == {"contents": "write"}  # the bless step pushes
    remote, work = _fresh_project(tmp_path)
    github = {"github.event.repository.default_branch": "main"}

    first = run_job(job, work, _env(work, tmp_path, "push", "main"), github, skip=("Install scarbook",))
    eval_step = "Run the scar collection and gate against the baseline"
    assert first.codes[eval_step] in (0, 1), first.logs[eval_step]
    assert "::notice::no scarbook-baseline.json yet" in first.logs[eval_step]
    bless = "Bless the first baseline (the default branch, when none is committed)"
    assert first.codes[bless] == 0, first.logs[bless]
    assert first.codes["HTML report"] == 0, first.logs["HTML report"]
    for name in first.uploads:
        assert (work / name).is_file(), name
    assert "scarbook-baseline.json" in _git(remote, "show", "--stat", "main")  # committed and pushed
    session = json.loads((work / "scarbook.json").read_text())["session"]["id"]
    assert json.loads((work / "scarbook-baseline.json").read_text())["session"] == session
    assert "| `write-one-line` |" in (tmp_path / "summary-push.md").read_text()  # the step summary's case table

    # a pull request's run, in a fresh checkout: compared with the committed baseline, nothing committed
    pr = tmp_path / "pr"
    _git(tmp_path, "clone", "-q", str(remote), str(pr))
    head = _git(remote, "rev-parse", "main")
    second = run_job(job, pr, _env(pr, tmp_path, "pull_request", "7/merge"), github, skip=("Install scarbook",))
    assert second.codes[eval_step] in (0, 1), second.logs[eval_step]
    assert "::notice::" not in second.logs[eval_step]
    assert second.codes[bless] == 0 and _git(remote, "rev-parse", "main") == head
    assert "### Against the baseline" in (tmp_path / "summary-pull_request.md").read_text()
    assert second.codes["HTML report"] == 0 and (pr / "scarbook-report.html").is_file()


def test_a_config_error_skips_the_report_and_the_blessing(tmp_path) -> None:
    """Exit 2 records no session: the HTML step is skipped rather than failing a second time."""
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["eval"]
    _, work = _fresh_project(tmp_path)
    (work / "cases" / "write-one-line" / "case.yaml").write_text("id: write-one-line\nbogus: 1\n")
    run = run_job(job, work, _env(work, tmp_path, "push", "main"), {"github.event.repository.default_branch": "main"},
                  skip=("Install scarbook",))
    assert run.codes["Run the scar collection and gate against the baseline"] == 2
    assert run.codes["HTML report"] is None
    assert run.codes["Bless the first baseline (the default branch, when none is committed)"] is None
    assert not (work / "scarbook-baseline.json").exists()
