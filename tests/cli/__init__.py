"""scarbook/cli: the commands, driven through click's CliRunner or a subprocess."""
