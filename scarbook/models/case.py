"""A case as it is on disk: its checks and the scar it was born from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from scarbook.models.rubric import resolve_item_ids


@dataclass
class Check:
    """One check of a case. `params` holds the type's own fields (path, text, rubric, ...)."""

    type: str
    params: dict[str, Any] = field(default_factory=dict)  # an llm_judge's `rubric` is its items' texts
    line: int | None = None  # line in case.yaml, for error messages
    # an llm_judge's item ids, one per rubric item (models/rubric.py; the loader resolves them), and which
    # of them case.yaml writes beside their item (`{id, text}`); the others are their words' ids
    item_ids: list[str] = field(default_factory=list)
    written_ids: frozenset[str] = frozenset()

    def to_dict(self, *, ids: bool = True) -> dict[str, Any]:
        """The check as case.yaml writes it; `ids=False` leaves the item ids out (what the check asks)."""
        out = {"type": self.type, **self.params}
        if ids and self.is_judge and self.written_ids:
            out["rubric"] = [{"id": ident, "text": text} if ident in self.written_ids else text
                             for ident, text in zip(self.rubric_ids, self.rubric, strict=True)]
        return out

    @property
    def is_judge(self) -> bool:
        return self.type == "llm_judge"

    @property
    def rubric(self) -> list[str]:
        return [str(item) for item in self.params.get("rubric") or []]

    @property
    def rubric_ids(self) -> list[str]:
        """Each rubric item's id: as resolved at load, else (a check built in code) its words' ids."""
        rubric = self.rubric
        return list(self.item_ids) if len(self.item_ids) == len(rubric) else resolve_item_ids(rubric)

    @property
    def written_item_ids(self) -> list[str]:
        """Each rubric item's id as case.yaml writes it beside the item, "" where it writes none."""
        return [ident if ident in self.written_ids else "" for ident in self.rubric_ids]

    def keep_written_ids(self, written: list[str]) -> Check:
        """This judge check, its items given the ids `written` beside them ("": none, its words' id): a
        rubric edited as texts (the TUI's editor) keeps each item's id through a move or another item's
        delete (issue 35.3)."""
        self.item_ids = resolve_item_ids(self.rubric, written)
        self.written_ids = frozenset(w for w in written if w)
        return self


@dataclass
class Scar:
    """Evidence of the incident the case was born from."""

    date: str | None = None
    what_went_wrong: str | None = None
    family: str | None = None
    transcript: str | None = None
    failed_artifact: str | None = None
    good_artifact: str | None = None
    # where the artifact belongs: "output", a workspace path, or a tool call's input {tool, field}
    artifact_at: str | dict[str, str] | None = None
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
    def inline_seeds(self) -> dict[str, str]:
        """The inline seed files by the name the workspace sees ('./a' is 'a'): each replaces seed/'s file of
        that name when a workspace is seeded."""
        return {PurePosixPath(rel).as_posix(): text for rel, text in self.seed_files.items()}

    @property
    def judge_checks(self) -> list[Check]:
        return [c for c in self.checks if c.is_judge]

    @property
    def rubric_items(self) -> list[str]:
        return [item for c in self.judge_checks for item in c.params.get("rubric", [])]
