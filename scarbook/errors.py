"""Errors a user sees. Each names the file, the place and the fix."""

from __future__ import annotations

from pathlib import Path


class ScarbookError(Exception):
    """An error with a message written for the person at the keyboard."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class CaseError(ScarbookError):
    """A case file that cannot be used: names the file, the line and the fix."""

    def __init__(self, path: Path | str, problem: str, *, line: int | None = None, fix: str = "") -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        self.fix = fix
        where = f"{self.path}:{line}" if line else f"{self.path}"
        text = f"{where}: {problem}"
        if fix:
            text += f" — {fix}"
        super().__init__(text)


class ConfigError(CaseError):
    """scarbook.yaml cannot be used."""


class PathEscapeError(ScarbookError):
    """A path in a case or seed that would leave the workspace."""


class HistoryError(ScarbookError):
    """The run history cannot be read or written."""


class AbortSession(ScarbookError):
    """Stop the whole session at once (for example: the judge rejected the API key)."""

    exit_code = 3
