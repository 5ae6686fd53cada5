"""scarbook/fs: files, safe reads, YAML."""
