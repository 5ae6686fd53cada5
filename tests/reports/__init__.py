"""scarbook/reports: the table, JSON, JUnit, GitHub summary, HTML and Inspect logs."""
