"""scarbook/cases: the scar collection on disk."""
