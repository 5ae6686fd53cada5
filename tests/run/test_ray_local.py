"""The Ray executor with no address: scarbook starts a local Ray instance itself (once per process).

The judge is called from the driver only, and the key never reaches Ray's processes."""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.ray_helpers import RAY_TEST_TIMEOUT_S, cli, needs_ray, pid_of_peer, python_agent, write_project

AGENT = """\
from pathlib import Path
Path("tmp.txt").write_text("# tiny-agent\\n")
print("done")
"""

CASE = """\
id: judged
task: write the title to tmp.txt
checks:
  - {type: file_exists, path: tmp.txt}
  - type: llm_judge
    artifact: tmp.txt
    rubric:
      - tmp.txt holds the title
"""


# One worker runs every Ray test (pytest-xdist --dist loadgroup): one Ray instance at a time on the machine.
pytestmark = [needs_ray, pytest.mark.xdist_group("ray"), pytest.mark.timeout(RAY_TEST_TIMEOUT_S)]


@pytest.fixture(scope="module", autouse=True)
def ray_started_by_scarbook():
    import ray

    assert not ray.is_initialized()
    yield
    ray.shutdown()


def test_judge_runs_on_the_driver_only_and_the_key_never_reaches_ray(judge_server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-driver-only")
    judge_server.default = tool_reply([("PASS", "it does")])
    judge_server.on_request = lambda peer: {"pid": pid_of_peer(peer)}
    agent = python_agent(tmp_path, "agent.py", AGENT)
    root = write_project(tmp_path / "p", agent=agent, executor="{type: ray}", cases={"judged": CASE},
                         extra=textwrap.dedent(f"""\
                             judge:
                               model: claude-sonnet-4-6
                               base_url: {judge_server.url}
                               max_retries: 0
                             """))
    result = cli(root, "eval", "--runs", "3", "--json", str(tmp_path / "r.json"))
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["status"] for r in report["runs"]] == ["pass"] * 3
    assert all(r["node"]["pid"] != str(os.getpid()) for r in report["runs"])  # the agents ran in Ray workers
    # issue 26.16: the report says where the runs executed (no address: a Ray instance started here), each
    # run its node
    assert report["executor"] == report["session"]["executor"] == {"type": "ray", "address": None}
    assert all({"id", "host", "ip", "pid"} <= set(r["node"]) for r in report["runs"])
    assert [req["pid"] for req in judge_server.requests] == [os.getpid()] * 3  # the judge, here
    import ray

    @ray.remote
    def env_of_a_worker(name):
        return os.environ.get(name)

    assert ray.get(env_of_a_worker.remote("ANTHROPIC_API_KEY")) is None
    assert os.environ["ANTHROPIC_API_KEY"] == "sk-driver-only"  # hidden from Ray's start, not from us


# Run 1 grows the large seed file (isolation: none: the agent reaches the case's folder), as a checkout during a
# long session might; every run writes out.txt.
SEED_CHANGER = """\
import os, sys
if os.environ["SCARBOOK_RUN"] == "1":
    open(sys.argv[1], "ab").write(b"y")
open("out.txt", "w").write("done\\n")
print("done")
"""


def test_a_large_seed_file_changed_mid_session_makes_the_next_ray_run_an_error_naming_it(tmp_path):
    """Before: the Ray executor read a large seed file once per case and shipped those bytes to every run, so run 1's
    change to it went unseen (both runs passed, exit 0), where the local executor makes run 2 an error naming the
    file and the fix. Now the Ray driver checks the file before each run, as a local copy does."""
    from scarbook.history.store import History
    from scarbook.run.workspace import SMALL_SEED

    root = tmp_path / "p"
    big = root / "cases" / "c" / "seed" / "big.bin"
    agent = python_agent(tmp_path, "agent.py", SEED_CHANGER, str(big))
    write_project(root, agent=agent, executor="{type: ray}",
                  cases={"c": "id: c\ntask: t\nchecks: [{type: file_exists, path: big.bin}]\n"})
    big.parent.mkdir()
    big.write_bytes(b"x" * (SMALL_SEED + 1))
    result = cli(root, "eval", "-j", "1", "-q")
    assert result.exit_code == 3, result.output
    history = History(root / "workspaces")
    (info,) = history.sessions()
    first, second = history.runs(info.id, info=info)
    ws = root / "workspaces" / info.id / "c" / "2"
    assert first.status == "pass"
    assert (second.status, second.reason, second.cause.rule if second.cause else None) == (
        "error", f"could not prepare the workspace {ws}: seed file {big} changed during the session (its content is "
                 "not what the session's earlier runs were seeded with) — put it back as it was, or start a new "
                 "session to seed from the new content", "seed-not-laid")


@pytest.mark.parametrize("command", [("eval", "--runs", "1"), ("noise", "--runs", "4"), ("verify", "c", "--reproduce", "1")],
                         ids=["eval", "noise", "verify --reproduce"])
def test_without_ray_installed_the_message_says_how_to_get_it(tmp_path, monkeypatch, command):
    """Every command that runs the agent runs where scarbook.yaml's executor says, prepared as `eval` and the
    TUI's launch prepare it (session/): `noise` and `verify --reproduce` called run/session.prepare_session
    themselves and ran on this machine's pool, silently (issue 32)."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as on a machine without it
    root = write_project(tmp_path / "p", executor="{type: ray}",
                         cases={"c": "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: x}\n"
                                     "scar: {failed_artifact: scar/a.txt}\n"})
    (root / "cases" / "c" / "scar").mkdir()
    (root / "cases" / "c" / "scar" / "a.txt").write_text("a\n")
    result = cli(root, *command)
    assert result.exit_code == 2
    assert result.stderr.strip() == "scarbook: the Ray executor needs Ray: pip install 'scarbook[ray]'"
    history = root / "workspaces" / "history"
    left = sorted(p.name for p in history.iterdir()) if history.exists() else []
    assert left == (["verify.json"] if command[0] == "verify" else [])  # no session: only verify's certification


def test_ray_outliving_its_own_start_up_wait_is_said_in_one_line(tmp_path, monkeypatch):
    """On a busy machine Ray's processes can take longer than the 30 s ray._private.node gives them, and
    ray.init raises a bare Exception: before, its traceback reached the user."""
    def slow_start(*args, **kwargs):
        raise Exception("The current node timed out during startup. This could happen because some of the raylet "
                        "failed to startup or the GCS has become overloaded.")

    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)  # (an earlier test of this module started it)
    monkeypatch.setattr(ray, "init", slow_start)
    root = write_project(tmp_path / "p", executor="{type: ray}",
                         cases={"c": "id: c\ntask: t\nchecks:\n  - {type: file_exists, path: x}\n"})
    result = cli(root, "eval", "--runs", "1")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "scarbook: could not start Ray here: its processes did not come up within Ray's own 30 s start-up wait (a "
        "busy machine?) — run again, or start Ray once with `ray start --head` and set executor.address: auto in "
        "scarbook.yaml")
