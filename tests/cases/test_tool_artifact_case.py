"""`artifact: {tool, field}` in case.yaml: the judge's artifact, a file rule's instead of `path`, and the scar's
artifact_at. Each malformed form is refused at load with the message a user sees (file, line, fix); the old
forms stay valid and a saved case keeps the mapping."""

from __future__ import annotations

import pytest
import yaml

from scarbook.cases.io import load_case, save_case
from scarbook.errors import CaseError

WRITTEN = "{tool: mcp__github__create_pull_request, field: body}"
TOOL_WORDS = f"a tool call's input, {WRITTEN}"
ARTIFACT_WORDS = f"'output', a workspace path, or a tool call's input {WRITTEN}"


@pytest.mark.parametrize("check, line, message", [
    ("{type: llm_judge, rubric: [x], artifact: {tool: gh}}", 4,
     f"llm_judge.artifact: the mapping has no 'field' — write it as artifact: {WRITTEN}"),
    ("{type: llm_judge, rubric: [x], artifact: {tool: gh, field: body, when: last}}", 4,
     f"llm_judge.artifact: unknown key 'when' (an artifact mapping takes tool and field) — write it as artifact: "
     f"{WRITTEN}"),
    ("{type: llm_judge, rubric: [x], artifact: {tool: '', field: body}}", 4,
     f"llm_judge.artifact: tool must be a non-empty string — write it as artifact: {WRITTEN}"),
    ("{type: llm_judge, rubric: [x], artifact: {tool: gh, field: [body]}}", 4,
     f"llm_judge.artifact: field must be a non-empty string — write it as artifact: {WRITTEN}"),
    ("{type: llm_judge, rubric: [x], artifact: 3}", 4,
     f"llm_judge.artifact must be {ARTIFACT_WORDS}, got int — write artifact as {ARTIFACT_WORDS}"),
    ("{type: contains, artifact: output, text: x}", 4,
     f"contains.artifact must be {TOOL_WORDS}, got str — write artifact as {TOOL_WORDS}"),
    ("{type: contains, path: a.txt, artifact: {tool: gh, field: body}, text: x}", 4,
     "contains check has both 'path' and 'artifact': it reads one of them — keep path for a workspace file, or "
     "artifact for a tool call's input"),
    ("{type: not_contains, text: x}", 4,
     f"not_contains check is missing required key 'path' — add path: ... (or artifact: {WRITTEN})"),
    ("{type: file_exists, artifact: {tool: gh, field: body}}", 4,
     "unknown key 'artifact' in file_exists check — file_exists takes: path"),
])
def test_a_malformed_tool_artifact_is_refused_with_its_line_and_fix(project, check, line, message) -> None:
    path = project.case("c", f"id: c\ntask: t\nchecks:\n  - {check}\n")
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == f"{path}:{line}: {message}"


def test_a_malformed_scar_artifact_at_is_refused(project) -> None:
    path = project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\nscar:\n"
                             "  artifact_at: {tool: Bash}\n")
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == f"{path}:5: scar.artifact_at: the mapping has no 'field' — write it as artifact_at: {WRITTEN}"


def test_the_tool_forms_load_and_a_saved_case_keeps_them(project) -> None:
    path = project.case("c", """\
        id: c
        task: t
        checks:
          - {type: not_contains, artifact: {tool: Bash, field: command}, text: All tests pass}
          - {type: llm_judge, artifact: {tool: mcp__github__create_pull_request, field: body}, rubric: [x]}
          - {type: llm_judge, artifact: notes.md, rubric: [y]}
        scar:
          artifact_at: {tool: mcp__github__create_pull_request, field: body}
        """)
    case = load_case(path.parent)
    body = {"tool": "mcp__github__create_pull_request", "field": "body"}
    assert [c.params.get("artifact") for c in case.checks] == [{"tool": "Bash", "field": "command"}, body, "notes.md"]
    assert case.scar is not None and case.scar.artifact_at == body
    save_case(case, path.parent.parent)
    again = yaml.safe_load(path.read_text())
    assert again["checks"][0]["artifact"] == {"tool": "Bash", "field": "command"}
    assert again["scar"]["artifact_at"] == body
    assert load_case(path.parent).checks[1].params["artifact"] == body


def test_lint_suggests_the_rule_check_on_the_tool_input_the_judge_reads(project) -> None:
    project.config("agent: {type: claude-code}\n")
    project.case("pr", """\
        id: pr
        task: Open a PR for the README fix
        checks:
          - type: llm_judge
            artifact: {tool: mcp__github__create_pull_request, field: body}
            rubric: ['the body does not contain "All tests pass"']
        """)
    res = project.cli("lint")
    assert res.output.splitlines()[:2] == [
        "pr check 1 item 1 [rule-decidable] 'the body does not contain \"All tests pass\"' can be decided by a "
        "not_contains check, with no judge call",
        f"    -> add {{type: not_contains, artifact: {WRITTEN}, text: All tests pass}} before the judge"]
