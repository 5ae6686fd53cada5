"""A failed run's draft (the review's "new scar from this run") takes the file the agent made even when its name
holds a terminal escape: history records that name escaped ("\\x1b[0mout.txt"), which is no file on disk."""

from __future__ import annotations

import json
import sys

from scarbook.cases.drafts import draft_from_run
from scarbook.cases.io import load_case
from scarbook.project import Project

AGENT = 'open("\\x1b[0mout.txt", "w").write("the failed answer\\n")\n'


def test_a_runs_draft_takes_the_file_its_escaped_name_stands_for(project) -> None:
    (project.root / "agent.py").write_text(AGENT)
    project.config(f"agent: {{type: command, argv: {json.dumps([sys.executable, str(project.root / 'agent.py')])}}}\n"
                   "isolation: none\nruns: 1\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    assert project.cli("eval", "-q").exit_code == 1
    folders = Project.at(project.root)
    (run,) = folders.history.runs(folders.history.sessions()[0].id)
    assert run.diff.created == ["\\x1b[0mout.txt"]
    draft = draft_from_run(folders, load_case(project.cases_dir / "c"), run)
    assert draft.files == {"scar/artifact.txt": b"the failed answer\n"}, draft.files
    assert draft.case.scar is not None and draft.case.scar.failed_artifact == "scar/artifact.txt"
