"""scarbook/transcripts: reading agents' transcripts in every format."""
