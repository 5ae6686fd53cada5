"""Where a scarbook project lives: its scarbook.yaml, cases/ and workspaces/."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from scarbook.case_io import CaseSet, load_cases
from scarbook.config import CONFIG_FILE, Config, load_config


@dataclass
class Project:
    root: Path
    config: Config = field(default_factory=Config)

    @classmethod
    def discover(cls, start: Path | None = None) -> "Project":
        """The nearest folder at or above `start` that has scarbook.yaml (else `start` itself)."""
        start = Path(start or Path.cwd()).resolve()
        for folder in (start, *start.parents):
            if (folder / CONFIG_FILE).is_file():
                return cls(folder, load_config(folder / CONFIG_FILE))
        return cls(start, load_config(None))

    @classmethod
    def at(cls, root: Path) -> "Project":
        root = Path(root).resolve()
        return cls(root, load_config(root / CONFIG_FILE))

    @property
    def cases_dir(self) -> Path:
        return self.root / self.config.cases_dir

    @property
    def workspaces_dir(self) -> Path:
        return self.root / self.config.workspaces_dir

    @cached_property
    def history(self):  # -> scarbook.history.History
        from scarbook.history import History
        return History(self.workspaces_dir)

    def load_cases(self) -> CaseSet:
        return load_cases(self.cases_dir)
