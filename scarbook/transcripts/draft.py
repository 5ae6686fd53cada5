"""Write a draft case from a transcript: case.yaml, the scar evidence, suggested seed files.

The draft is a starting point for the case editor: the task from the first user message, a
`file_exists` check when the failed artifact is a file, and a scar section that points at a
copy of the transcript and at the failed artifact. Until `scarbook.case_io.save_case` exists the
YAML is written here (atomically) in the case format of DESIGN.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from scarbook.errors import ScarbookError
from scarbook.paths import resolve_inside
from scarbook.transcripts.candidates import Candidate, candidates, default_artifact, suggest_seeds, suggest_task
from scarbook.transcripts.model import Transcript

CASE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _ext(name: str | None, default: str = ".txt") -> str:
    suffix = PurePosixPath(name).suffix if name else ""
    return suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix or "") else default


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def pick_artifact(cands: list[Candidate], artifact_index: int | None) -> Candidate:
    if not cands:
        raise ScarbookError("the transcript has no candidate artifact (no final answer, file or tool result)")
    number = default_artifact(cands) if artifact_index is None else artifact_index
    if not 1 <= number <= len(cands):
        raise ScarbookError(f"there is no artifact {number}: the transcript has {len(cands)} candidates "
                            "(see --list)")
    return cands[number - 1]


def draft_case_data(t: Transcript, case_id: str, artifact: Candidate, transcript_name: str) -> dict[str, Any]:
    task = suggest_task(t)
    title = task.splitlines()[0][:80] if task else f"Imported from {transcript_name}"
    checks: list[dict[str, Any]] = []
    if artifact.kind == "file" and artifact.path:
        checks.append({"type": "file_exists", "path": artifact.path})
    return {
        "id": case_id,
        "title": title,
        "task": task,
        "checks": checks,
        "scar": {
            "date": _dt.date.today().isoformat(),
            "transcript": f"scar/transcript{_ext(transcript_name)}",
            "failed_artifact": f"scar/artifact{_ext(artifact.path)}",
        },
    }


def write_draft_case(t: Transcript, cases_dir: Path, case_id: str, artifact_index: int | None = None,
                     seed_suggested: bool = False, transcript_path: Path | None = None) -> Path:
    """Create `cases/<case_id>/` from the transcript; return the case folder.

    `artifact_index` is the candidate number (1-based, as `--list` shows); None picks
    `default_artifact`. With `seed_suggested`, each suggested seed whose content the transcript
    holds is copied into seed/ (suggestions without content are left for the user).
    """
    if not CASE_ID.match(case_id):
        raise ScarbookError(f"case id {case_id!r} is not valid: use lowercase letters, digits, '-' and '_', "
                            "starting with a letter or digit")
    cases_dir = Path(cases_dir)
    folder = cases_dir / case_id
    if folder.exists():
        raise ScarbookError(f"{folder} already exists; choose another --id")
    transcript_path = Path(transcript_path) if transcript_path else t.source
    artifact = pick_artifact(candidates(t), artifact_index)
    data = draft_case_data(t, case_id, artifact, transcript_path.name if transcript_path else "transcript.txt")
    seeds = [s for s in suggest_seeds(t) if s.content is not None] if seed_suggested else []
    (folder / "scar").mkdir(parents=True)
    if transcript_path is not None:
        shutil.copyfile(transcript_path, folder / data["scar"]["transcript"])
    else:
        del data["scar"]["transcript"]
    _atomic_write(folder / data["scar"]["failed_artifact"], artifact.content.encode("utf-8"))
    for seed in seeds:
        (folder / "seed").mkdir(exist_ok=True)
        target = resolve_inside(folder / "seed", seed.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(target, seed.content.encode("utf-8"))
    _save(data, folder)
    return folder


def _save(data: dict[str, Any], folder: Path) -> None:
    try:  # the core's writer, once it exists, owns the case format and its validation
        from scarbook.case_io import save_case, validate_case_data  # type: ignore[attr-defined]
    except ImportError:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
        _atomic_write(folder / "case.yaml", text.encode("utf-8"))
        return
    case = validate_case_data(data, folder / "case.yaml")
    case.root = folder
    save_case(case, folder.parent)
