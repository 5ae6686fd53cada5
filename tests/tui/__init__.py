"""scarbook/tui: the Textual app driven by Pilot key presses, and its snapshots."""
