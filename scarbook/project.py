"""Where a scarbook project lives: its scarbook.yaml, cases/ and workspaces/."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from scarbook.cases.io import CaseSet, load_cases
from scarbook.config import CONFIG_FILE, Config, ConfigFolders, load_config
from scarbook.errors import ScarbookError


@dataclass
class Project(ConfigFolders):
    root: Path
    config: Config = field(default_factory=Config)

    @classmethod
    def discover(cls, start: Path | None = None) -> Project:
        """The nearest folder at or above `start` that has scarbook.yaml (else `start` itself)."""
        start = Path(start or Path.cwd()).resolve()
        for folder in (start, *start.parents):
            if os.path.lexists(folder / CONFIG_FILE):  # (a folder or a FIFO there is named by load_config)
                return cls(folder, load_config(folder / CONFIG_FILE))
        return cls(start, load_config(None))  # no scarbook.yaml found: all defaults

    @classmethod
    def open(cls, root: Path | None = None) -> Project:
        """The project a command works on: `root` itself (-C), else the nearest folder at or above the
        current one with scarbook.yaml. Without one there is nothing to work on: say how to start."""
        if root is not None:
            root = Path(root).absolute()
            if not os.path.lexists(root / CONFIG_FILE):
                why = "that folder does not exist" if not root.exists() else f"there is no {CONFIG_FILE} in it"
                raise ScarbookError(f"{root} is not a scarbook project ({why}) — "
                                    f"run `scarbook init {root}` to start one there")
            return cls.at(root)
        project = cls.discover()
        if not os.path.lexists(project.root / CONFIG_FILE):
            raise ScarbookError(f"no {CONFIG_FILE} in {project.root} or any folder above it — "
                                "run `scarbook init` to start a scarbook project here, or pass -C PROJECT")
        return project

    @classmethod
    def at(cls, root: Path) -> Project:
        root = Path(root).resolve()
        return cls(root, load_config(root / CONFIG_FILE))

    @cached_property
    def history(self):  # -> scarbook.history.store.History
        from scarbook.history.store import History
        return History(self.workspaces_dir)

    def load_cases(self) -> CaseSet:
        return load_cases(self.cases_dir)
