"""scarbook/history: session and runs files, baselines, damage."""
