"""cases — the scar collection on disk: load, validate and save a case (io), ids and their lineage,
rename/duplicate/trash (admin, trash), rubric lint, drafts from a failed run or a transcript, and the
stored verification badge of each scar.

May use: history, stats, config, judge, checks, agents, transcripts, proc, fs, models, errors, text.
Never project or above: functions take anything with `cases_dir`/`workspaces_dir` (folders.ProjectFolders)."""
