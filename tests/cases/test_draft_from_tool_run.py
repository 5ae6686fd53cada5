"""A failed run of a case whose artifact is a tool call's input becomes a new scar with THAT text as its failed
artifact: what the agent sent in its last call to the tool, read from the run's transcript (the review screen's
draft), not its final answer; the draft then catches its own scar. The run is a real one: a stand-in `claude`
(a real subprocess) printing a stream-json in which the agent opens a PR."""

from __future__ import annotations

from click.testing import CliRunner

from scarbook.cases.drafts import create_draft_case
from scarbook.cases.io import load_case
from scarbook.cli import main
from scarbook.project import Project
from tests.agents.test_presets import on_path, stand_in  # noqa: F401
from tests.checks.test_tool_artifact import BODY, FIRST_BODY, LAST_BODY, _eval, _project, pr_stream


def test_a_failed_runs_draft_files_the_pr_body_it_sent(tmp_path, on_path) -> None:  # noqa: F811
    stand_in(on_path, "claude", pr_stream([FIRST_BODY, LAST_BODY]))
    _project(tmp_path, "{type: claude-code}", {"pr": [{"type": "not_contains", "artifact": BODY, "text": "All tests"}]})
    assert _eval(tmp_path, "--skip-judge")["pr"]["status"] == "fail"
    project = Project.at(tmp_path)
    (run,) = project.history.runs(project.history.sessions()[0].id)
    draft = create_draft_case(project, load_case(tmp_path / "cases" / "pr"), run)
    folder = tmp_path / "cases" / draft.id
    assert (folder / "scar" / "artifact.txt").read_text() == LAST_BODY  # not the answer, not the first PR's body
    assert load_case(folder).scar.artifact_at == BODY
    res = CliRunner().invoke(main, ["-C", str(tmp_path), "verify", draft.id])
    assert res.output.splitlines()[0] == (
        f"{draft.id}  catches the scar: the failed artifact fails: check 1 (not_contains): the body of the last "
        "mcp__github__create_pull_request call contains 'All tests' at line 3 but must not")
