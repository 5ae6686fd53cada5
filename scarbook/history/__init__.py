"""history — what runs produced, on disk: sessions and their runs files (store, runs_file), the check
that every record read back is one the runner wrote (records), the per-session counts cache, and the
committed baseline file.

May use: stats, config, judge, checks, agents, transcripts, proc, fs, models, errors, text."""
