"""reports — what a session says to the outside: the case table and JSON (table), JUnit XML, the
GitHub step summary and annotations, and the self-contained HTML report.

May use: run and everything below it. Never views, cli or tui."""
