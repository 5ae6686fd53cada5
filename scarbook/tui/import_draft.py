"""What the import screen does to disk, without Textual: suggest a case id, write the draft case
with only the seed files the user ticked.

`write_draft_case` copies the suggested seeds all-or-none; the screen lets the user confirm each
one, so the draft is written without seeds and the ticked ones are added here. If adding a seed
fails the whole folder goes, like a failed draft: no half-made case is left behind.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.paths import resolve_inside
from scarbook.transcripts import SeedSuggestion, Transcript
from scarbook.transcripts.draft import CASE_ID, write_draft_case
from scarbook.yamlio import atomic_write_text

ID_WORDS = 6  # a case id is typed and read often: a few words of the task, not all of it
ID_CHARS = 48


def suggest_case_id(task: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A slug of the task's first words ("extract-the-first-line-of-readme"), made unique
    against `taken` with a numeric suffix; "imported-scar" when the task has no words."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:ID_WORDS]
    base = "-".join(words)[:ID_CHARS].strip("-") or "imported-scar"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def check_new_case_id(cases_dir: Path, case_id: str) -> None:
    """Refuse an empty, malformed or taken id with the words the screen shows."""
    if not case_id:
        raise ScarbookError("type a case id: lowercase letters, digits, '-' and '_' (it names the folder cases/<id>/)")
    if not CASE_ID.match(case_id):
        raise ScarbookError(f"case id {case_id!r} is not valid: use lowercase letters, digits, '-' and '_', "
                            "starting with a letter or digit")
    if (Path(cases_dir) / case_id).exists():
        raise ScarbookError(f"a case named {case_id!r} already exists ({Path(cases_dir) / case_id}); choose another id")


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
