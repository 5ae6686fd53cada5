"""views — plain-data screens shared by the CLI and the TUI: the library's rows, the live session's
fold of events, what a run review shows, and trends read from history.

No Textual here. May use: run and everything below it. Never reports, cli or tui."""
