"""scarbook/stats: the numbers, checked against scipy."""
