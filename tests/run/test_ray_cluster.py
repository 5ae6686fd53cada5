"""The Ray executor on a real two-node Ray cluster on this machine (ray.cluster_utils.Cluster).

One cluster for the whole module (starting one costs seconds); small run counts."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from scarbook.project import Project
from scarbook.run.events import RunStarted, SessionFinished
from scarbook.run.ray.executor import RayExecutor, make_executor
from scarbook.run.runner import SessionControl, run_session
from scarbook.run.session import SessionPlan, SessionSite, prepare_session
from scarbook.session.plan import select_cases
from tests.helpers.paths import REPO
from tests.helpers.ray_helpers import (
    KILLER,
    NAPPER,
    ONE_CHECK_CASE,
    RAY_TEST_TIMEOUT_S,
    SLEEPER,
    SPENDER,
    add_node,
    alive,
    cli,
    cpus_free,
    needs_ray,
    python_agent,
    wait_until,
    write_project,
)
from tests.helpers.recorder_upstream import SECRET, Upstream

REPO_CASES = str(REPO / "cases")


# One worker runs every Ray test (pytest-xdist --dist loadgroup): one Ray instance at a time on the machine.
pytestmark = [needs_ray, pytest.mark.xdist_group("ray"), pytest.mark.timeout(RAY_TEST_TIMEOUT_S)]


@pytest.fixture(scope="module")
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    c = Cluster()
    # a Ray worker process that has not registered with its raylet within worker_register_timeout_seconds
    # (60) is killed: on a busy machine (the rest of the suite beside it) its start can take longer
    add_node(c, num_cpus=2, include_dashboard=False, _system_config={"worker_register_timeout_seconds": 600})
    add_node(c, num_cpus=2)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False)
    try:
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(autouse=True)
def two_nodes(cluster):
    """Every test has the head and a worker node: the worker is started again if a test before took it away
    (the lost-node test, last in the module for that reason: a node's start costs seconds of CPU)."""
    if len(cluster.list_all_nodes()) < 2:
        add_node(cluster, num_cpus=2)
        cluster.wait_for_nodes()


@pytest.fixture(autouse=True)
def fast_demo(monkeypatch):
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")


def _statuses(root) -> dict[tuple[str, int], str]:
    from scarbook.history.store import History

    history = History(root / "workspaces")
    (info,) = history.sessions()
    return {(r.case_id, r.k): r.status for r in history.runs(info.id)}, history.runs(info.id)


def test_same_verdicts_as_the_local_executor_with_failed_workspaces_brought_back(cluster, tmp_path):
    import ray

    local = write_project(tmp_path / "local", executor="{type: local}", demo_seed=3)  # 2 fails in 12
    shutil.copytree(REPO_CASES, local / "cases")
    remote = write_project(tmp_path / "remote", executor="{type: local}", demo_seed=3)
    shutil.copytree(REPO_CASES, remote / "cases")
    # the point rule (rate >= threshold): 3 runs are too few for the evidence gate to call a case below
    assert cli(local, "eval", "--runs", "3", "-q", "--gate", "point").exit_code == 1  # a fail in 3 is below 0.8
    result = cli(remote, "eval", "--runs", "3", "-q", "--gate", "point", "--executor", "ray")
    assert result.exit_code == 1, result.output
    want, _ = _statuses(local)
    got, runs = _statuses(remote)
    assert got == want and len(got) == 12
    assert "fail" in got.values() and "pass" in got.values()
    node_ids = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    for r in runs:
        assert r.node["id"] in node_ids and r.node["host"] and r.infra_retries == 0
        ws = remote / "workspaces" / r.session_id / r.case_id / str(r.k)
        assert r.workspace == str(ws)
        if r.status == "pass":
            assert not r.workspace_kept and not ws.exists()
            assert r.workspace_note.startswith(f"passed on node {r.node['id'][:12]}")
        else:  # review, verify and "new scar from this run" read it here, as for a local run
            assert r.workspace_kept and ws.is_dir() and any(ws.iterdir())
            assert r.workspace_note.startswith(f"brought back from node {r.node['id'][:12]} ({r.node['host']}): ")
            assert r.transcript_path and os.path.isfile(r.transcript_path)
    shown = cli(remote, "show", "write-one-line")
    assert f"ran on node {runs[-1].node['id'][:12]} ({runs[-1].node['host']})" in shown.stdout


def test_a_killed_worker_is_retried_once_and_counted_apart(cluster, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    # run 1 loses its worker once (then passes); run 2 loses it twice (an error, never a fail)
    agent = python_agent(tmp_path, "killer.py", KILLER, str(marks), "1:1,2:1,2:2")
    root = write_project(tmp_path / "p", agent=agent, cases={"survive": ONE_CHECK_CASE.format(cid="survive")})
    result = cli(root, "eval", "--runs", "2", "-j", "1")
    by_k = {r.k: r for r in _statuses(root)[1]}
    assert by_k[1].status == "pass" and by_k[1].infra_retries == 1
    assert "retried once: the first attempt lost its worker: WorkerCrashedError" in by_k[1].workspace_note
    assert by_k[2].status == "error" and by_k[2].infra_retries == 1
    assert by_k[2].reason.startswith("infrastructure: lost its Ray worker twice (WorkerCrashedError")
    assert by_k[2].reason.endswith(") — no verdict")
    # issue 24: the machine's fault, and the executor's own retry used the retry_infra budget (1): not run a third time
    assert (by_k[2].cause.kind, by_k[2].cause.rule) == ("infra", "worker-lost") and by_k[2].attempts == []
    assert "infrastructure: 2 runs retried after a lost Ray worker or node (1 lost again: error)" in result.stdout


def test_cancel_leaves_no_task_and_no_agent_running(cluster, tmp_path):
    import ray

    pids = tmp_path / "pids"
    pids.mkdir()
    agent = python_agent(tmp_path, "sleeper.py", SLEEPER, str(pids))
    root = write_project(tmp_path / "p", agent=agent, cases={"sleepy": ONE_CHECK_CASE.format(cid="sleepy")})
    project = Project.at(root)
    ready = prepare_session(SessionSite.of(project), SessionPlan(select_cases(project, project.load_cases(), (), ()), runs=8, concurrency=4)).session
    executor = make_executor(project.config.executor, ready)

    async def go():
        control = SessionControl()
        async for ev in run_session(ready, control=control, executor=executor):
            if isinstance(ev, RunStarted) and len(os.listdir(pids)) < 4:
                assert await asyncio.to_thread(wait_until, lambda: len(os.listdir(pids)) == 4, 60), \
                    f"the 4 runs did not all start within 60 s: {sorted(os.listdir(pids))}"
                control.cancel()
            if isinstance(ev, SessionFinished):
                return ev

    finished = asyncio.run(go())
    assert finished.session.state == "cancelled"
    assert finished.runs == []  # nothing finished: nothing recorded, nothing made up
    started = [int(p) for p in os.listdir(pids)]
    assert len(started) == 4
    assert wait_until(lambda: not any(alive(p) for p in started), 60)  # (each a condition: 60 s only bounds a hang)
    assert wait_until(cpus_free, 60), ray.available_resources()


def test_seed_is_shipped_once_per_case_and_adaptive_n_works_unchanged(cluster, tmp_path):
    root = write_project(tmp_path / "p", executor="{type: local}")
    shutil.copytree(os.path.join(REPO_CASES, "rename-function"), root / "cases" / "rename-function")
    shutil.copytree(os.path.join(REPO_CASES, "write-one-line"), root / "cases" / "write-one-line")
    project = Project.at(root)
    plan = SessionPlan(select_cases(project, project.load_cases(), (), ()), runs=12, concurrency=4, adaptive=True)
    ready = prepare_session(SessionSite.of(project), plan).session
    executor = make_executor(project.config.executor, ready, "ray")
    assert isinstance(executor, RayExecutor)

    async def go():
        async for ev in run_session(ready, executor=executor):
            if isinstance(ev, SessionFinished):
                return ev

    finished = asyncio.run(go())
    assert finished.session.state == "finished"
    assert executor.seeds_shipped == 2
    assert sorted(finished.session.decisions) == ["rename-function", "write-one-line"]
    assert len(finished.runs) > 2
    report = json.loads(json.dumps([r.to_dict() for r in finished.runs]))
    assert all(r["node"]["id"] for r in report)


async def test_the_tui_launch_dialog_runs_the_session_on_ray(cluster, tmp_path):
    import ray
    from textual.widgets import Checkbox, Input

    from scarbook.history.store import History
    from scarbook.tui.app import make_app
    from scarbook.tui.screens.launch import LaunchScreen
    from scarbook.tui.screens.live import LiveScreen
    from tests.helpers.tui_fixtures import SIZE, library_loaded
    from tests.helpers.tui_fixtures import wait_until as wait_in_app

    root = write_project(tmp_path / "p", executor="{type: local}")
    shutil.copytree(os.path.join(REPO_CASES, "write-one-line"), root / "cases" / "write-one-line")
    app = make_app(root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_in_app(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        assert app.screen.query_one("#ray", Checkbox).value is False  # scarbook.yaml says local
        app.screen.query_one("#runs", Input).value = "3"
        await pilot.click("#ray")
        assert app.screen.query_one("#ray", Checkbox).value is True
        await pilot.press("ctrl+r")
        await wait_in_app(pilot, lambda: isinstance(app.screen, LiveScreen), what="the live screen")
        await wait_in_app(pilot, lambda: app.live.done, timeout=120, what="the session to finish")
        assert app.live.finished_runs == 3 and app.live.info.state == "finished"
        await pilot.pause(0.3)
        figures = str(app.screen.query_one("#live-figures").render())
        assert f"on {len(app.live.nodes)} Ray node" in figures and app.live.nodes
    history = History(root / "workspaces")
    runs = history.runs(history.sessions()[0].id)
    node_ids = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert len(runs) == 3 and all(r.node["id"] in node_ids for r in runs)


def test_a_run_no_node_can_hold_is_said_before_it_waits(cluster, tmp_path):
    from scarbook.config import ExecutorSettings

    fits = RayExecutor(ExecutorSettings("ray", num_cpus=2), 1, agent_spec=None, project_root=tmp_path, keep_all=False)
    assert fits.connect() is None
    too_big = RayExecutor(ExecutorSettings("ray", num_cpus=3, resources={"gpu_box": 1}), 1, agent_spec=None,
                          project_root=tmp_path, keep_all=False)
    assert too_big.connect() == (
        "no Ray node offers what one run needs (CPU: 3, gpu_box: 1); the runs wait until such a node joins — "
        "lower executor.num_cpus or executor.resources in scarbook.yaml, or start a node with them")


def test_max_cost_stops_a_ray_session_as_a_local_one(cluster, tmp_path):
    agent = python_agent(tmp_path, "spender.py", SPENDER)
    root = write_project(tmp_path / "p", agent=agent, cases={"spend": ONE_CHECK_CASE.format(cid="spend")})
    result = cli(root, "eval", "--runs", "10", "-j", "1", "--max-cost", "2", "-q")
    assert result.exit_code == 3
    assert "session " in result.stdout and ": stopped: budget; 2 runs — 2 pass, 0 fail, 0 error" in result.stdout
    _, runs = _statuses(root)
    assert [r.agent_usage.cost_usd for r in runs] == [1.0, 1.0] and all(r.node for r in runs)


# An agent for the recorded two-node session: waits until all 4 runs have started (so they spread over
# both nodes), makes one model call through ANTHROPIC_BASE_URL, writes out.txt and says which key it held.
RECORDED = """\
import http.client, json, os, sys, time, urllib.parse
started = sys.argv[1]
open(os.path.join(started, os.environ["SCARBOOK_RUN"]), "w").close()
for _ in range(1200):
    if len(os.listdir(started)) >= 4:
        break
    time.sleep(0.05)
u = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
c.request("POST", u.path + "/v1/messages", json.dumps({"model": "claude-test", "max_tokens": 5,
          "messages": [{"role": "user", "content": "write out.txt"}]}), {"x-api-key": os.environ["ANTHROPIC_API_KEY"]})
r = c.getresponse()
r.read()
open("out.txt", "w").write("done")
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as fh:  # the agent's own line, after the recorder's
    fh.write(json.dumps({"type": "final", "text": "done"}) + "\\n")
print(r.status, os.environ["ANTHROPIC_API_KEY"])
"""


@pytest.mark.slow  # one 4-run session on the module's two-node cluster: a few seconds
def test_a_recorded_session_on_two_nodes_brings_each_runs_transcript_back(cluster, tmp_path, monkeypatch):
    """Issue 33 (7): each node's relay takes the agent's calls to the driver's recorder (the key is
    added there only); the recorder's lines reach the run's transcript on its node, where the
    trajectory check reads them, and the transcript comes back with the run for review."""
    from scarbook.record.proxy import DUMMY_KEY
    from scarbook.views.run_review import load_run_transcript

    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    started = tmp_path / "started"
    started.mkdir()
    up = Upstream().start()
    case = ONE_CHECK_CASE.format(cid="rec") + "  - {type: max_turns, n: 3}\n"
    root = write_project(tmp_path / "p", agent=python_agent(tmp_path, "recorded.py", RECORDED, str(started)),
                         cases={"rec": case}, extra=f"record: {{anthropic: {up.url}}}\n")
    try:
        result = cli(root, "eval", "--runs", "4", "-j", "4", "-q")
    finally:
        up.stop()
    assert result.exit_code == 0, result.output
    _, runs = _statuses(root)
    assert len({r.node["id"] for r in runs}) == 2  # both nodes ran some
    for r in runs:
        assert (r.status, r.output_excerpt) == ("pass", f"200 {DUMMY_KEY}\n"), (r.status, r.reason, r.output_excerpt)
        assert [c.status for c in r.checks] == ["pass", "pass"], r.checks  # max_turns read the transcript
        assert r.transcript_path == str(root / "workspaces" / r.session_id / "rec" / f"{r.k}.transcript.jsonl")
        lines = [json.loads(line) for line in Path(r.transcript_path).read_text().splitlines()]
        assert [x["type"] for x in lines] == ["model_call", "task", "assistant", "usage", "final"]  # the node's copy
        assert r.agent_usage.input_tokens == 11 and not r.notes, r.notes
        t, why = load_run_transcript(r)
        assert why == "" and t.model == "claude-test" and t.model_calls == 1
    assert [q["headers"]["x-api-key"] for q in up.requests] == [SECRET] * 4


# (last in the module: it takes a node away, and `two_nodes` would start one again for a test after it — a node's
# start costs its raylet, its agents and its first workers, seconds of CPU on a busy machine)
def test_a_lost_node_s_runs_are_retried_on_the_other_node(cluster, tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    release = tmp_path / "release"
    agent = python_agent(tmp_path, "napper.py", NAPPER, str(pids), str(release))
    root = write_project(tmp_path / "p", agent=agent, cases={"nap": ONE_CHECK_CASE.format(cid="nap")})
    project = Project.at(root)
    ready = prepare_session(SessionSite.of(project), SessionPlan(select_cases(project, project.load_cases(), (), ()), runs=4, concurrency=4)).session
    executor = make_executor(project.config.executor, ready)
    head_id = cluster.head_node.node_id
    (worker,) = [n for n in cluster.list_all_nodes() if n.node_id != head_id]

    async def go():
        lost = False
        async for ev in run_session(ready, executor=executor):
            if isinstance(ev, RunStarted) and not lost:
                lost = True
                assert await asyncio.to_thread(wait_until, lambda: len(os.listdir(pids)) == 4, 60), \
                    f"the 4 runs did not all start within 60 s: {sorted(os.listdir(pids))}"
                await asyncio.to_thread(cluster.remove_node, worker)  # 2 of the 4 runs were there
                release.touch()  # the 2 on the head node end; the 2 lost ones end as soon as they run again
            if isinstance(ev, SessionFinished):
                return ev

    finished = asyncio.run(go())
    runs = finished.runs
    assert [r.status for r in runs] == ["pass"] * 4, [r.reason for r in runs]
    retried = [r for r in runs if r.infra_retries]
    assert len(retried) == 2 and all(r.node["id"] == head_id for r in retried)
    assert all("the first attempt lost its worker" in r.workspace_note for r in retried)
