"""What the case wing needs of a project: where its cases and workspaces are.

A Protocol, so `scarbook.project.Project` (which sits above this wing: it loads cases and opens
history) satisfies it without the cases wing importing upward."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class ProjectFolders(Protocol):
    @property
    def root(self) -> Path: ...

    @property
    def cases_dir(self) -> Path: ...

    @property
    def workspaces_dir(self) -> Path: ...
