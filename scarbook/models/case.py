"""A case as it is on disk: its checks and the scar it was born from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Check:
    """One check of a case. `params` holds the type's own fields (path, text, rubric, ...)."""

    type: str
    params: dict[str, Any] = field(default_factory=dict)
    line: int | None = None  # line in case.yaml, for error messages

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.params}

    @property
    def is_judge(self) -> bool:
        return self.type == "llm_judge"


@dataclass
class Scar:
    """Evidence of the incident the case was born from."""

    date: str | None = None
    what_went_wrong: str | None = None
    family: str | None = None
    transcript: str | None = None
    failed_artifact: str | None = None
    good_artifact: str | None = None
    artifact_at: str | None = None  # where the artifact belongs: "output" or a workspace path
    # `scarbook verify --reproduce N`: how often the agent reproduced the incident {runs, fails, date, agent, session}
    reproduced: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Case:
    id: str
    task: str
    title: str = ""
    tags: list[str] = field(default_factory=list)
    threshold: float | None = None
    checks: list[Check] = field(default_factory=list)
    scar: Scar | None = None
    seed_files: dict[str, str] = field(default_factory=dict)  # inline `seed:` files: path -> text
    timeout_s: float | None = None
    network: bool | None = None  # with isolation: sandbox, network for this case (None: scarbook.yaml's)
    root: Path | None = None  # the case folder (cases/<id>/)

    @property
    def seed_dir(self) -> Path | None:
        return self.root / "seed" if self.root else None

    @property
    def judge_checks(self) -> list[Check]:
        return [c for c in self.checks if c.is_judge]

    @property
    def rubric_items(self) -> list[str]:
        return [item for c in self.judge_checks for item in c.params.get("rubric", [])]
