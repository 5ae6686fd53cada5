"""One run of an agent that changes files beside the one its case allows (only_changed: [tmp.txt]): the agent's
Python source in, its failed run (as history reads it) and that run in the JSON report out."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def only_changed_run(project, source: str, report: Path, extra: str = "") -> tuple:
    """`eval --runs 1 --json REPORT` of case c with the agent `source` (unconfined, `extra` added to scarbook.yaml):
    the run history holds and the run the report holds (exit 1: the check failed)."""
    from scarbook.history.store import History

    (project.root / "agent.py").write_text(source)
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, str(project.root / 'agent.py')])}}}\n"
                   "isolation: none\n" + extra)
    project.case("c", "id: c\ntask: t\nchecks: [{type: only_changed, paths: [tmp.txt]}]\n")
    result = project.cli("eval", "--runs", "1", "-q", "--json", str(report))
    assert result.exit_code == 1, result.output
    history = History(project.workspaces)
    (run,) = history.runs(history.sessions()[0].id)
    (reported,) = json.loads(report.read_text())["runs"]
    return run, reported
