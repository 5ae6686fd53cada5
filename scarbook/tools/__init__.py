"""The tools built on the runner: each the core of one command, run through run/'s pipeline or over
sessions it recorded. `verify` (does a case catch its own scar? `scarbook verify`, the certification
`scarbook import` ends with), `rerun` (`eval --rerun SESSION --only ...`), `rejudge` (`scarbook rejudge`:
a session's kept artifacts graded again, no agent runs), `merge` (`scarbook merge`: the shards of one
session joined).

May use: run and every wing below it. Used by the two faces (cli, tui) only."""
