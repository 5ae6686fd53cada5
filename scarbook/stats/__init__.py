"""stats — pure numbers: a case's rate, Wilson interval, pass@k, pass^k, band (rates); the sequential
test for `--runs auto`; comparing two sessions (compare); trend points and flips (trends).

Takes counts, returns estimates; reading history is the caller's job. May use: config, judge, models,
errors, text (and nothing that does I/O)."""
