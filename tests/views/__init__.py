"""scarbook/views: the plain-data screens the CLI and the TUI both show."""
