"""scarbook/checks: rule and trajectory checks."""
