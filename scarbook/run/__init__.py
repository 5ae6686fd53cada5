"""run — running a session: plan and prepare it (session), the runner's async generator of events
(runner, events), one run in two parts (session_run), executors (local pool, `ray/`), workspaces,
shards, the run's diff, the exit code a session ends with (outcome), and verifying a scar (verify).

May use: every wing below it (project, cases, history, stats, config, judge, checks, agents,
transcripts, proc, fs) and the root nouns. Used by views, reports, cli and tui."""
