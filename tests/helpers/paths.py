"""Where the tests' shared files are: the repository and tests/fixtures/ (transcripts, agents)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
TRANSCRIPTS = FIXTURES / "transcripts"
