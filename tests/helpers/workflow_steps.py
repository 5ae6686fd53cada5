"""A GitHub Actions job's steps run here as the runner runs them: each `run:` script with bash (`-eo
pipefail`), in the job's working directory, with its `env:` and `$GITHUB_OUTPUT`; `if:` conditions evaluated
(always(), the steps' outputs, ==, !=, &&, ||, and success() when there is none); `uses:` steps are not
run (the caller checks what they would upload). For the workflow users copy (examples/github/scarbook.yml)."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class JobRun:
    """What the steps did: each one's name (or `uses`) -> its exit code (None: skipped), its output."""

    codes: dict[str, int | None] = field(default_factory=dict)
    outputs: dict[tuple[str, str], str] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    uploads: list[str] = field(default_factory=list)  # paths the upload-artifact steps that ran name


def _expression(text: str, run: JobRun, failed: bool, github: dict[str, str]) -> Any:
    """A GitHub expression of the kinds the example uses, evaluated."""
    python = text.replace("&&", " and ").replace("||", " or ").replace("!=", " != ").replace("==", " == ")
    python = re.sub(r"\bsteps\.([\w-]+)\.outputs\.(\w+)", lambda m: repr(run.outputs.get((m[1], m[2]), "")), python)
    python = re.sub(r"\bsecrets\.\w+", "''", python)
    python = re.sub(r"\bgithub\.[\w.]+", lambda m: repr(github.get(m[0], "")), python)
    python = python.replace("always()", "True").replace("success()", repr(not failed))
    python = python.replace("failure()", repr(failed))
    return eval(python, {"__builtins__": {}})  # noqa: S307 — the repository's own workflow, in a test


def run_job(job: dict[str, Any], cwd: Path, env: dict[str, str], github: dict[str, str],
            skip: tuple[str, ...] = ()) -> JobRun:
    """Run `job`'s steps in `cwd` (its defaults' working-directory under it), steps named in `skip` left out."""
    run = JobRun()
    failed = False
    workdir = cwd / ((job.get("defaults") or {}).get("run") or {}).get("working-directory", ".")
    for n, step in enumerate(job["steps"]):
        name = step.get("name") or step.get("uses") or f"step {n}"
        condition = str(step.get("if", "success()")).removeprefix("${{").removesuffix("}}")
        if name in skip or not _expression(condition, run, failed, github):
            run.codes[name] = None
            continue
        if "uses" in step:
            if step["uses"].startswith("actions/upload-artifact"):
                run.uploads += step["with"]["path"].split()
            run.codes[name] = 0
            continue
        output = cwd.parent / f"github-output-{n}"
        output.write_text("")
        step_env = {k: str(_expression(v[3:-2], run, failed, github)) if str(v).startswith("${{") else str(v)
                    for k, v in (step.get("env") or {}).items()}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=workdir,
                              env={**os.environ, **env, **step_env, "GITHUB_OUTPUT": str(output)},
                              capture_output=True, text=True, timeout=300)
        run.codes[name] = done.returncode
        run.logs[name] = done.stdout + done.stderr
        for line in output.read_text().splitlines():
            key, _, value = line.partition("=")
            if "id" in step:
                run.outputs[(step["id"], key)] = value
        failed = failed or done.returncode != 0
    return run
