"""A new scar from a failed run: the draft case carries the task, the failed artifact and the seed.

No Textual here. The full transcript import is its own feature (scarbook.transcripts); this keeps
the run's transcript file as scar evidence when the agent wrote one.
"""

from __future__ import annotations

import os
import shutil
from datetime import date
from pathlib import Path

from scarbook import safefs
from scarbook.case_ids import free_case_id
from scarbook.case_io import save_case
from scarbook.models import Case, Check, RunRecord, Scar
from scarbook.project import Project

MAX_SCAR_FILE = 100_000_000  # bytes of a run's artifact or transcript copied into a draft case


def run_log_dir(project: Project, run: RunRecord) -> Path:
    return project.workspaces_dir / run.session_id / run.case_id


def _read_agents_file(path: str | Path, rel: str | None = None) -> bytes | None:
    """A file the agent wrote (or could have replaced), read as a check reads one (scarbook.safefs):
    no link followed — a link to ~/.ssh/id_rsa must not land in a case that gets committed — and
    only a regular file (a pipe would block). None when it cannot be read so."""
    folder, rel = (path, rel) if rel is not None else os.path.split(os.fspath(path))
    try:
        return safefs.read_file(folder, rel, MAX_SCAR_FILE)[0]
    except (safefs.Refused, OSError):
        return None


def run_output(project: Project, run: RunRecord) -> str:
    data = _read_agents_file(run_log_dir(project, run), f"{run.k}.output.txt")
    return run.output_excerpt if data is None else data.decode("utf-8", errors="replace")


def failed_artifact(project: Project, run: RunRecord) -> tuple[str, bytes]:
    """(file name, content): the first created or modified regular file when the workspace was kept,
    else the agent's final output."""
    if run.workspace_kept:
        for rel in [*run.diff.created, *run.diff.modified]:
            data = _read_agents_file(run.workspace, rel)
            if data is not None:
                return Path(rel).name, data
    return "output.txt", run_output(project, run).encode("utf-8")


def create_draft_case(project: Project, case: Case, run: RunRecord) -> Case:
    """Write cases/<case>-run<k>/ with the run's artifact in scar/ and the case's seed in seed/."""
    cid = free_case_id(project.cases_dir, f"{case.id}-run{run.k}")
    folder = project.cases_dir / cid
    (folder / "scar").mkdir(parents=True)
    name, content = failed_artifact(project, run)
    (folder / "scar" / name).write_bytes(content)
    transcript = None
    data = _read_agents_file(run.transcript_path) if run.transcript_path else None
    if data is not None:
        (folder / "scar" / "transcript.jsonl").write_bytes(data)
        transcript = "scar/transcript.jsonl"
    if case.seed_dir is not None and case.seed_dir.is_dir():
        shutil.copytree(case.seed_dir, folder / "seed")
    scar = Scar(date=date.today().isoformat(), what_went_wrong=run.reason,
                family=case.scar.family if case.scar else None, transcript=transcript,
                failed_artifact=f"scar/{name}")
    draft = Case(id=cid, task=case.task, title=f"draft from {case.id} run {run.k}: {run.reason}"[:120],
                 tags=list(case.tags), threshold=case.threshold,
                 checks=[Check(c.type, dict(c.params)) for c in case.checks], scar=scar,
                 seed_files=dict(case.seed_files), timeout_s=case.timeout_s)
    save_case(draft, project.cases_dir)
    return draft
