"""scarbook's tests, by wing: tests/<wing>/ mirrors scarbook/<wing>/."""
