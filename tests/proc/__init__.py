"""scarbook/proc: starting, watching and killing programs."""
