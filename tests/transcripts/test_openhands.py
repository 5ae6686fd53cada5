"""OpenHands trajectories (found as a newcomer with an OpenHands incident): the JSON list of events OpenHands saves
(`--save-trajectory-path`, the UI's "Export trajectory") was refused as 'not a transcript scarbook can read …
closest format: claude-code'. It is read now (format openhands): the user's message is the task, `finish` the
answer, editor calls rebuild the files they wrote. The fixture is hand-written in the shape OpenHands'
event_to_trajectory gives (openhands/events/serialization/event.py): actions with args, observations with content,
extras and the id of their action as `cause`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from scarbook.transcripts import candidates, default_artifact, load_transcript, suggest_task
from scarbook.transcripts.model import ToolCall
from tests.helpers.paths import REPO, TRANSCRIPTS

LOG = TRANSCRIPTS / "openhands" / "trajectory.json"
TASK = "Bump the version in setup.cfg to 2.4.0 and add a CHANGELOG entry. Do not touch anything else."


def test_a_trajectory_reads_as_the_task_the_calls_and_the_finish_answer():
    t = load_transcript(LOG)
    assert (t.format, t.cwd, t.root, t.date) == ("openhands", "/workspace/acme", "/workspace/acme", "2026-11-20")
    assert suggest_task(t) == TASK  # not the system prompt, nor the recall of the workspace's context
    assert t.final_answer == "Version bumped to 2.4.0 and CHANGELOG updated. Nothing else was changed."
    assert [(c.name, c.input.get("command")) for c in t.entries if isinstance(c, ToolCall)] == [
        ("str_replace_editor", "view"), ("str_replace_editor", "str_replace"),
        ("execute_bash", "rm -f tests/test_version.py && ls"), ("str_replace_editor", "create")]
    written = {f.path: f.content for f in t.files_written}
    assert written == {"setup.cfg": "[metadata]\nname = acme\nversion = 2.4.0\n\n",
                       "CHANGELOG.md": "# Changelog\n\n## 2.4.0\n- Bumped version.\n"}
    cands = candidates(t)
    assert cands[default_artifact(cands) - 1].label == "file CHANGELOG.md (final content)"


def test_the_uis_export_and_an_llm_based_edit_are_read(tmp_path):
    """The UI's download wraps the events in {"trajectory": [...]}; an LLM-based edit (lines start..end replaced)
    is the whole file its observation holds; a failed command and an error state are said."""
    events = json.loads(LOG.read_text())[:3] + [
        {"id": 20, "timestamp": "2026-11-21T10:00:00", "source": "agent", "message": "Edit", "action": "edit",
         "args": {"path": "/workspace/acme/setup.cfg", "content": "version = 9\n", "start": 3, "end": 3,
                  "thought": "", "impl_source": "llm_based_edit"}},
        {"id": 21, "timestamp": "2026-11-21T10:00:01", "source": "agent", "message": "I edited", "cause": 20,
         "observation": "edit", "content": "diff", "extras": {"path": "/workspace/acme/setup.cfg",
                                                              "old_content": "version = 2\n",
                                                              "new_content": "[metadata]\nversion = 9\n",
                                                              "impl_source": "llm_based_edit"}},
        {"id": 22, "timestamp": "2026-11-21T10:00:02", "source": "agent", "message": "Running", "action": "run",
         "args": {"command": "pytest", "thought": "run the tests"}},
        {"id": 23, "timestamp": "2026-11-21T10:00:03", "source": "agent", "message": "exit 1", "cause": 22,
         "observation": "run", "content": "1 failed", "extras": {"command": "pytest", "metadata": {"exit_code": 1}}},
        {"id": 24, "timestamp": "2026-11-21T10:00:04", "source": "environment", "message": "", "observation":
         "agent_state_changed", "content": "", "extras": {"agent_state": "error", "reason": "budget exceeded"}}]
    log = tmp_path / "export.json"
    log.write_text(json.dumps({"trajectory": events}))
    t = load_transcript(log)
    assert (t.format, t.date) == ("openhands", "2026-11-21")
    assert {f.path: f.content for f in t.files_written} == {"setup.cfg": "[metadata]\nversion = 9\n"}
    assert [r.is_error for r in t.tool_results] == [False, True]
    assert t.warnings == ["the agent stopped in its error state: budget exceeded"]


def test_import_files_an_openhands_incident_as_a_case(tmp_path):
    """Through the real command, in a subprocess: before, exit 2 and nothing written."""
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    scarbook = str(Path(sys.executable).parent / "scarbook")
    listed = subprocess.run([scarbook, "-C", str(tmp_path), "import", str(LOG), "--list"], capture_output=True,
                            text=True, timeout=120, cwd=REPO)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith(f"format: openhands\nroot: /workspace/acme (paths are relative to it; change it "
                                    f"with --root DIR)\ntask: {TASK}\n")
    done = subprocess.run([scarbook, "-C", str(tmp_path), "import", str(LOG), "--id", "bump", "--seed-suggested",
                           "--skip-judge"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "cases" / "bump"
    case = yaml.safe_load((folder / "case.yaml").read_text())
    assert (case["task"], case["scar"]["artifact_at"], case["scar"]["date"]) == (TASK, "CHANGELOG.md", "2026-11-20")
    assert (folder / "scar" / "transcript.json").read_bytes() == LOG.read_bytes()
    assert (folder / "seed" / "setup.cfg").read_text() == "[metadata]\nname = acme\nversion = 2.3.1\n\n"
