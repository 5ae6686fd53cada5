"""A session that stopped short, made from a real one: `scarbook resume` (tests/cli) and the TUI's resume
(tests/tui) take it up. A real eval is run, then its record is cut back as if its scarbook had been killed
(or stopped with Ctrl-C) after some runs."""

from __future__ import annotations

import json
from pathlib import Path


def as_stopped(folder: Path, kept: int, state: str = "running") -> dict:
    """The session recorded in `folder` as if it had stopped after runs 1..kept of each case (the others never
    recorded): session.json says `state` (running, with no live lock: interrupted) and holds no end; its gate."""
    doc = json.loads((folder / "session.json").read_text())
    (row,) = doc["session"].values()
    row["state"] = state
    for key in ("recorded", "decisions"):
        row.pop(key, None)
    row["finished_at"] = None if state == "running" else row["finished_at"]
    (folder / "session.json").write_text(json.dumps(doc))
    for runs in folder.glob("runs-*.jsonl"):
        runs.write_text("".join(line for line in runs.read_text().splitlines(keepends=True)
                                if json.loads(line)["k"] <= kept))
    return row["gate"]


def stopped_short(project, state: str = "running", keep: int = 1) -> str:
    """An eval of the demo agent's case stopped (as_stopped) after its first `keep` runs; its id."""
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    assert project.cli("eval", "-q", "--runs", "3").exit_code in (0, 1)
    (folder,) = (project.workspaces / "history").iterdir()
    as_stopped(folder, keep, state)
    return folder.name
