"""What the import screen does to disk, without Textual: write the draft case with only the seed
files the user ticked.

`write_draft_case` copies the suggested seeds all-or-none; the screen lets the user confirm each
one, so the draft is written without seeds and the ticked ones are added here. If adding a seed
fails the whole folder goes, like a failed draft: no half-made case is left behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scarbook.case_ids import check_new_case_id
from scarbook.errors import ScarbookError
from scarbook.paths import resolve_inside
from scarbook.transcripts import SeedSuggestion, Transcript
from scarbook.transcripts.draft import write_draft_case
from scarbook.yamlio import atomic_write_text


def create_draft(t: Transcript, cases_dir: Path, case_id: str, artifact_number: int,
                 seeds: list[SeedSuggestion], transcript_path: Path | None) -> Path:
    """Write cases/<case_id>/ with the chosen artifact and exactly the ticked `seeds`; return the folder."""
    check_new_case_id(cases_dir, case_id)
    missing = [s.path for s in seeds if s.content is None]
    if missing:
        raise ScarbookError(f"the transcript does not hold the whole content of {', '.join(missing)}; "
                            "add those files in the case editor")
    folder = write_draft_case(t, Path(cases_dir), case_id, artifact_number, seed_suggested=False,
                              transcript_path=transcript_path)
    try:
        for seed in seeds:
            atomic_write_text(resolve_inside(folder / "seed", seed.path), seed.content or "")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder
