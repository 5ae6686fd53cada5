"""LangChain / LangGraph logs (found as a newcomer with a LangGraph agent's incident): every shape people save
them in was refused ("not a transcript scarbook can read … closest format: mini-swe-agent"). They are read by
the `langchain` reader now: a list of messages (`model_dump`, `messages_to_dict`, `dumpd`), a graph's state, the
LangGraph API's thread state, and LangSmith runs (a graph run, a chat model run, an AgentExecutor with tool runs).
Fixtures in tests/fixtures/transcripts/langchain/: hand-written in the shapes those libraries write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scarbook.errors import ScarbookError
from scarbook.transcripts import FORMATS, candidates, default_artifact, load_transcript, suggest_seeds, suggest_task
from scarbook.transcripts.model import Message, ToolCall
from tests.helpers.paths import REPO, TRANSCRIPTS

FIX = TRANSCRIPTS / "langchain"
DEPLOY_TASK = "Add a --dry-run flag to deploy.sh that prints the commands instead of running them."
DEPLOY_SEED = "#!/bin/sh\nset -e\nrsync -a dist/ prod:/srv/app\nssh prod systemctl restart app\n"
DEPLOY_AFTER = ('#!/bin/sh\nset -e\nif [ "$1" = "--dry-run" ]; then echo dry; fi\nrsync -a dist/ prod:/srv/app\n'
                "ssh prod systemctl restart app\n")


@pytest.mark.parametrize(("name", "date"), [
    ("langgraph_state.json", None),  # `{"messages": [m.model_dump() ...]}`
    ("langgraph_thread_state.json", "2026-11-22"),  # GET /threads/{id}/state
    ("langchain_messages_to_dict.json", None),  # messages_to_dict: {"type": "human", "data": {...}}
    ("langchain_dumpd.json", None),  # dumpd: {"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], ...}
    ("langsmith_run.json", "2026-11-22"),  # a LangSmith graph run: inputs.messages, outputs.messages
])
def test_each_shape_of_a_langgraph_incident_gives_its_task_seed_and_written_file(name, date):
    t = load_transcript(FIX / name)
    assert t.format == "langchain" and "langchain" in FORMATS
    assert suggest_task(t) == DEPLOY_TASK
    cands = candidates(t)
    assert [(c.kind, c.label) for c in cands] == [
        ("final_answer", "final answer"), ("file", "file deploy.sh (final content)"),
        ("tool_result", "result of read_file deploy.sh"), ("tool_result", "result of write_file deploy.sh")]
    assert cands[default_artifact(cands) - 1].content == DEPLOY_AFTER  # the file written, not the claim
    assert [(s.path, s.content) for s in suggest_seeds(t)] == [("deploy.sh", DEPLOY_SEED)]
    assert t.date == date
    assert load_transcript(FIX / name, format="langchain").format == "langchain"


def test_a_chat_model_run_reads_each_call_once_and_its_thinking_apart():
    """ChatAnthropic's AI message holds its tool calls twice (`tool_use` blocks in content, and `tool_calls`):
    each call is one call, the blocks are not words of the answer, and a thinking block is thinking."""
    t = load_transcript(FIX / "langsmith_llm_run.json")
    assert suggest_task(t) == "Write the changelog entry for 3.2.0 into CHANGELOG.md; only list merged PRs."
    assert [(c.name, c.input["file_path"]) for c in t.entries if isinstance(c, ToolCall)] == [
        ("read_file", "CHANGELOG.md"), ("write_file", "CHANGELOG.md")]
    said = [(m.role, m.kind, m.text) for m in t.entries if isinstance(m, Message)]
    assert said == [
        ("system", "text", "You are a release bot."),
        ("user", "text", "Write the changelog entry for 3.2.0 into CHANGELOG.md; only list merged PRs."),
        ("assistant", "text", "Let me read it."),
        ("assistant", "thinking", "I will include the open PR too"),
        ("assistant", "text", "Added 3.2.0 with #52 and #57 (open).")]
    assert [(f.path, f.content) for f in t.files_written] == [
        ("CHANGELOG.md", "# Changelog\n\n## 3.2.0\n- #52 faster sync\n- #57 draft: new UI (open)\n\n## 3.1.0\n"
                         "- #41 fix login\n")]
    assert (t.model, t.usage.input_tokens, t.usage.output_tokens, t.date) == (
        "claude-3-5-sonnet-20241022", 900, 120, "2026-10-02")


def test_an_agent_executor_run_is_its_input_its_tool_runs_and_its_output():
    t = load_transcript(FIX / "langsmith_agent_executor.json")
    assert suggest_task(t) == "How many open incidents are there in PagerDuty right now? Only report what the API says."
    assert [(c.name, c.input) for c in t.tool_calls] == [
        ("pagerduty_list_incidents", {"statuses": ["triggered", "acknowledged"]})]
    assert [r.text for r in t.tool_results] == ["HTTP 401 Unauthorized: invalid token"]
    assert t.final_answer == "There are 0 open incidents."  # the over-claim, after a 401
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].kind == "final_answer"


def test_a_list_that_only_looks_like_langchain_is_refused_naming_it_and_why(tmp_path):
    log = tmp_path / "half.json"
    log.write_text(json.dumps({"values": {"messages": [{"type": "human", "text": "hi"}]}, "next": []}))
    with pytest.raises(ScarbookError) as exc:
        load_transcript(log)
    assert str(exc.value).startswith(
        f"{log}: not a transcript scarbook can read: a JSON object with keys values, next; closest format: "
        "langchain (values.messages[0] is not a LangChain message (type one of human, ai, tool, system, with content)); ")


def test_import_writes_a_langgraph_incident_as_a_case_with_its_seed_and_artifact(tmp_path):
    """Through the real command, in a subprocess: before, exit 2 and nothing written."""
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    done = subprocess.run([str(Path(sys.executable).parent / "scarbook"), "-C", str(tmp_path), "import",
                           str(FIX / "langgraph_thread_state.json"), "--id", "dry-run-flag", "--seed-suggested"],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote draft case {tmp_path / 'cases' / 'dry-run-flag'}\n")
    folder = tmp_path / "cases" / "dry-run-flag"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert (case["task"], case["checks"], case["scar"]) == (
        DEPLOY_TASK, [{"type": "file_exists", "path": "deploy.sh"}],
        {"date": "2026-11-22", "transcript": "scar/transcript.json", "failed_artifact": "scar/artifact.sh",
         "artifact_at": "deploy.sh"})
    assert (folder / "seed" / "deploy.sh").read_text() == DEPLOY_SEED
    assert (folder / "scar" / "artifact.sh").read_text() == DEPLOY_AFTER
