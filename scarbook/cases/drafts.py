"""A new scar from a failed run: the draft case carries the task, the failed artifact and the seed.

No Textual here. The full transcript import is its own feature (scarbook.transcripts); this keeps
the run's transcript file as scar evidence when the agent wrote one, and for a case whose artifact is a tool
call's input, takes the failed artifact from it: what the agent sent in its last call to that tool. The TUI's draft is written only
when the user saves it (`draft_from_run`, then the editor's save: cases/folder_save.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from scarbook.cases.folders import ProjectFolders
from scarbook.cases.ids import check_new_case_id, free_case_id
from scarbook.cases.transcript_draft import DraftPicks, write_draft_case
from scarbook.errors import ScarbookError
from scarbook.fs import safefs
from scarbook.fs.escaped_names import real_name
from scarbook.fs.paths import resolve_inside
from scarbook.fs.yamlio import atomic_write_text
from scarbook.models import Case, Check, RunRecord, Scar
from scarbook.text import cut_words
from scarbook.transcripts import SeedSuggestion, Transcript
from scarbook.transcripts.tool_input import NoToolInput, ToolInput, last_tool_input, tool_input_of

MAX_SCAR_FILE = 100_000_000  # bytes of a run's artifact or transcript copied into a draft case


def run_log_dir(project: ProjectFolders, run: RunRecord) -> Path:
    return project.workspaces_dir / run.session_id / run.case_id


def _read_agents_file(path: str | Path, rel: str | None = None) -> bytes | None:
    """A file the agent wrote (or could have replaced), read as a check reads one (scarbook.fs.safefs):
    no link followed — a link to ~/.ssh/id_rsa must not land in a case that gets committed — and
    only a regular file (a pipe would block). None when it cannot be read so."""
    folder, rel = (path, rel) if rel is not None else os.path.split(os.fspath(path))
    try:
        return safefs.read_file(folder, rel, MAX_SCAR_FILE)[0]
    except (safefs.Refused, OSError):
        return None


def run_output(project: ProjectFolders, run: RunRecord) -> str:
    data = _read_agents_file(run_log_dir(project, run), f"{run.k}.output.txt")
    return run.output_excerpt if data is None else data.decode("utf-8", errors="replace")


def failed_artifact(project: ProjectFolders, run: RunRecord) -> tuple[str, bytes]:
    """(file name, content): the first created or modified regular file when the workspace was kept,
    else the agent's final output."""
    if run.workspace_kept:
        for shown in [*run.diff.created, *run.diff.modified]:
            try:  # history keeps an agent-made name escaped ("\\x1b[0mout.txt"): the file it stands for
                rel = real_name(run.workspace, shown)
            except safefs.Refused:
                continue
            data = _read_agents_file(run.workspace, rel)
            if data is not None:  # (an escaped name is no name for scar/: check_relative refuses its backslash)
                return (Path(rel).name if rel == shown else f"artifact{_plain_suffix(rel)}"), data
    return "output.txt", run_output(project, run).encode("utf-8")


def _plain_suffix(name: str) -> str:
    """The file's extension when it is plain (`.json`), for the scar's own name; else `.txt`."""
    suffix = Path(name).suffix
    return suffix if suffix[1:].isascii() and suffix[1:].isalnum() else ".txt"


def _tool_artifact(case: Case) -> ToolInput | None:
    """The tool call input the case's scar or checks read (`artifact: {tool, field}`), if any."""
    ref = tool_input_of(case.scar.artifact_at) if case.scar else None
    return ref or next((r for c in case.checks if (r := tool_input_of(c.params.get("artifact"))) is not None), None)


def _sent_in_run(run: RunRecord, ref: ToolInput) -> str | None:
    """What the run's agent sent in its last call to the tool, from its transcript (read as the checks read it),
    or None (no transcript, none readable, no such call: the draft falls back to the run's file or output)."""
    if not run.transcript_path:
        return None
    from scarbook.transcripts.run_file import TranscriptUnreadable, read_run_transcript  # (every reader)

    try:
        return last_tool_input(read_run_transcript(run.transcript_path, MAX_SCAR_FILE), ref)
    except (TranscriptUnreadable, NoToolInput):
        return None


@dataclass
class CaseDraft:
    """A case not yet on disk and the files it brings (path in the case folder -> content or source).
    Nothing is written until it is saved (cases/folder_save.py): leaving a draft leaves no trace."""

    case: Case
    files: dict[str, bytes | Path] = field(default_factory=dict)


def draft_from_run(project: ProjectFolders, case: Case, run: RunRecord) -> CaseDraft:
    """cases/<case>-run<k>/ to be: the run's artifact in scar/, the case's seed in seed/, its transcript."""
    cid = free_case_id(project.cases_dir, f"{case.id}-run{run.k}")
    ref = _tool_artifact(case)
    sent = _sent_in_run(run, ref) if ref is not None else None
    name, content = ("artifact.txt", sent.encode("utf-8")) if sent is not None else failed_artifact(project, run)
    files: dict[str, bytes | Path] = {f"scar/{name}": content}
    transcript = None
    data = _read_agents_file(run.transcript_path) if run.transcript_path else None
    if data is not None:
        files["scar/transcript.jsonl"] = data
        transcript = "scar/transcript.jsonl"
    if case.seed_dir is not None and case.seed_dir.is_dir():
        files.update({f"seed/{p.relative_to(case.seed_dir)}": p for p in sorted(case.seed_dir.rglob("*")) if p.is_file()})
    scar = Scar(date=date.today().isoformat(), what_went_wrong=run.reason,
                family=case.scar.family if case.scar else None, transcript=transcript,
                failed_artifact=f"scar/{name}",
                artifact_at={"tool": ref.tool, "field": ref.field} if ref is not None and sent is not None else None)
    draft = Case(id=cid, task=case.task, title=cut_words(f"draft from {case.id} run {run.k}: {run.reason}", 120),
                 tags=list(case.tags), threshold=case.threshold,
                 checks=[Check(c.type, dict(c.params)) for c in case.checks], scar=scar,
                 seed_files=dict(case.seed_files), timeout_s=case.timeout_s)
    return CaseDraft(draft, files)


def create_draft_case(project: ProjectFolders, case: Case, run: RunRecord) -> Case:
    """Write cases/<case>-run<k>/ at once (the TUI writes its drafts on save: `draft_from_run`)."""
    draft = draft_from_run(project, case, run)
    from scarbook.cases.folder_save import save_case_folder

    save_case_folder(project, draft.case, is_new=True, files=draft.files)
    return draft.case


# What the import screen does to disk, without Textual: write the draft case with only the seed
# files the user ticked.
#
# `write_draft_case` copies the suggested seeds all-or-none; the screen lets the user confirm each
# one, so the draft is written without seeds and the ticked ones are added — all in the hidden folder
# the case is built in (folder_save.new_case_folder), renamed into place once whole: no reader sees the
# draft before its seed, and a failure leaves no case and no hidden folder behind.

def create_draft(t: Transcript, project: ProjectFolders, case_id: str, artifact_number: int,
                 seeds: list[SeedSuggestion], transcript_path: Path | None, good_number: int | None = None) -> Path:
    """Write cases/<case_id>/ with the chosen artifact (and the good one, when the user marked one)
    and exactly the ticked `seeds`; return the folder."""
    from scarbook.cases.folder_save import new_case_folder, write_error

    check_new_case_id(project.cases_dir, case_id)
    missing = [s.path for s in seeds if s.content is None]
    if missing:
        raise ScarbookError(f"the transcript does not hold the whole content of {', '.join(missing)}; "
                            "add those files in the case editor")
    try:
        with new_case_folder(project, case_id) as staging:
            folder = write_draft_case(t, staging, case_id, artifact_number, seed_suggested=False,
                                      transcript_path=transcript_path,
                                      picks=DraftPicks(good=str(good_number) if good_number is not None else None))
            for seed in seeds:
                atomic_write_text(resolve_inside(folder / "seed", seed.path), seed.content or "")
    except OSError as exc:  # a read-only cases/, a full disk: named by the case's path, not the hidden folder
        raise write_error(exc, project.cases_dir / case_id, project.cases_dir) from exc
    return project.cases_dir / case_id
