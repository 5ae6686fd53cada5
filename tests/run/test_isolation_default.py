"""Isolation by default (issue 25, 1): with no `isolation:` in scarbook.yaml (auto) the session runs in
the sandbox where bubblewrap starts here, checked once before the runs, its runs in slots where slots run
(issue 38: one bwrap per concurrency slot, agents/slots.py), else a bwrap per run as `isolation: sandbox`
asks; else it runs unconfined and one line says why and what the agent can then reach. `isolation: none`
says the same line, once per session. The JSON report says which isolation ran."""

from __future__ import annotations

import json
import sys

import pytest

from scarbook.agents.sandbox import require_sandbox
from scarbook.agents.slots import why_no_slots
from scarbook.errors import ScarbookError
from tests.helpers.tui_fixtures import fast_demo, project_root  # noqa: F401

# writes outside its workspace, and what its sandbox's PID 1 is: the slot's launcher (python3) or a bwrap of its own
WRITE_OUTSIDE = ("import sys; open(sys.argv[1], 'w').write('out'); open('tmp.txt', 'w').write('x'); "
                 "open('pid1.txt', 'w').write(open('/proc/1/comm').read())")
REACH = ("this session runs unconfined: the agent can read, write and delete anything your user can, reach "
         "the network and signal your other processes (README: Threat model)")


def _setup(project, tmp_path, isolation: str | None = None):
    """A command agent that writes a file outside its workspace; no isolation key unless given."""
    outside = tmp_path / "outside.txt"
    argv = json.dumps([sys.executable, "-c", WRITE_OUTSIDE, str(outside)])
    project.config(f"agent: {{type: command, argv: {argv}}}\n" + (f"isolation: {isolation}\n" if isolation else ""))
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    project.case("d", "id: d\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    return outside


def _isolation_ran(project, report) -> dict:
    data = json.loads(report.read_text())
    assert data["session"]["isolation"] == data["isolation"]
    assert project.load().history.sessions()[0].isolation.to_dict() == data["isolation"]
    return data["isolation"]


def test_the_default_is_the_sandbox_where_bubblewrap_starts(project, tmp_path) -> None:
    try:
        require_sandbox(project.root)
    except ScarbookError as exc:
        pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    outside = _setup(project, tmp_path)
    report = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "1", "-q", "--keep-all", "--json", str(report))
    assert result.exit_code == 0, result.output
    assert not outside.exists()  # /tmp is private in the sandbox: the write went nowhere
    assert "isolation" not in result.stderr
    if why_no_slots() is None:  # its runs in slots
        assert _isolation_ran(project, report) == {"ran": "sandbox", "asked": "auto", "network": False, "slots": True}
        assert _pid1s(project) == {"python3"}
    else:
        assert _isolation_ran(project, report) == {"ran": "sandbox", "asked": "auto", "network": False}
        assert _pid1s(project) == {"bwrap"}


def _pid1s(project) -> set[str]:
    return {p.read_text().strip() for p in project.workspaces.glob("*/*/*/pid1.txt")}


@pytest.mark.parametrize("asked", ["auto", "sandbox"])
def test_a_bwrap_per_run_where_slots_cannot_run_or_sandbox_asks_for_it(project, tmp_path, monkeypatch, asked) -> None:
    try:
        require_sandbox(project.root)
    except ScarbookError as exc:
        pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    if asked == "auto":  # as on a machine whose bwrap cannot make the slot's user namespace
        monkeypatch.setattr("scarbook.run.session.why_no_slots", lambda: "no user namespace")
    outside = _setup(project, tmp_path, None if asked == "auto" else asked)
    report = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "1", "-q", "--keep-all", "--json", str(report))
    assert result.exit_code == 0, result.output
    assert not outside.exists()
    assert "isolation" not in result.stderr  # the sandbox either way: nothing to say
    assert _isolation_ran(project, report) == {"ran": "sandbox", "asked": asked, "network": False}
    assert _pid1s(project) == {"bwrap"}


def test_without_bubblewrap_the_default_runs_unconfined_and_says_why_once(project, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SCARBOOK_BWRAP", str(tmp_path / "no-bwrap"))  # as where no bwrap can be found
    outside = _setup(project, tmp_path)
    report = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "2", "-q", "--json", str(report))
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "out"
    why = f"SCARBOOK_BWRAP={tmp_path / 'no-bwrap'} is not an executable file"
    assert result.stderr == f"warning: isolation: no sandbox here ({why}), so {REACH}\n"  # 4 runs, one line
    assert _isolation_ran(project, report) == {"ran": "none", "asked": "auto", "why": why}


@pytest.mark.parametrize("setup, why", [
    ({"platform": "darwin"}, "it needs Linux (bubblewrap), this is darwin"),
    ({"SCARBOOK_BWRAP": "/bin/false"}, "/bin/false failed to start a test sandbox (exit code 1)"),
], ids=["macos", "no-user-namespaces"])
def test_where_the_sandbox_cannot_start_the_line_says_why(project, tmp_path, monkeypatch, setup, why) -> None:
    if "platform" in setup:
        monkeypatch.setattr(sys, "platform", setup["platform"])
    else:
        monkeypatch.setenv("SCARBOOK_BWRAP", setup["SCARBOOK_BWRAP"])  # a bwrap that cannot start a sandbox
    _setup(project, tmp_path)
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"warning: isolation: no sandbox here ({why}), so {REACH}\n"


def test_isolation_none_says_what_the_agent_can_reach_once_per_session(project, tmp_path) -> None:
    outside = _setup(project, tmp_path, isolation="none")
    report = tmp_path / "r.json"
    result = project.cli("eval", "--runs", "3", "-q", "--json", str(report))
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "out"
    assert result.stderr == f"warning: isolation: none — {REACH}\n"  # 2 cases x 3 runs: one line
    assert _isolation_ran(project, report) == {"ran": "none", "asked": "none"}
    again = project.cli("eval", "--runs", "1", "-q")  # the next session says it again, once
    assert again.stderr == f"warning: isolation: none — {REACH}\n"


def test_the_default_runs_an_in_process_agent_unconfined_and_says_why(project) -> None:
    (project.root / "my_agent.py").write_text("def run(task, cwd):\n    return 'x'\n")
    project.config("agent: {type: python, function: my_agent:run}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: output_contains, text: x}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("warning: isolation: no sandbox here (a python agent runs inside scarbook's own "
                             f"process), so {REACH}\n")


@pytest.mark.parametrize("kind, program", [("claude-code", "claude"), ("codex", "codex")])
def test_a_cli_preset_in_the_sandbox_without_network_is_refused_before_the_runs(project, tmp_path, monkeypatch,
                                                                                kind, program) -> None:
    try:
        require_sandbox(project.root)
    except ScarbookError as exc:
        pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / program).write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    project.config(f"agent: {{type: {kind}}}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    project.case("online", "id: online\ntask: t\nnetwork: true\nchecks: [{type: file_exists, path: tmp.txt}]\n")
    result = project.cli("eval", "--runs", "1", "-q")
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: the {kind} agent needs the network to reach its model's API, and the "
                             "sandbox gives case c none — set network: true in scarbook.yaml (the sandbox then "
                             "shares your network; files stay confined), or isolation: none\n")
    assert project.load().history.sessions() == []
    # a case that asks for the network has it: that case alone is not refused
    assert project.cli("eval", "online", "--runs", "1", "-q").exit_code == 1  # (the stand-in writes no tmp.txt)
    # a recorded session reaches the model through the recorder's proxy, without the network
    project.config(f"agent: {{type: {kind}}}\nrecord: {{anthropic: 'http://127.0.0.1:9', openai: 'http://127.0.0.1:9/v1'}}\n")
    result = project.cli("eval", "c", "--runs", "1", "-q")
    assert result.exit_code == 1, result.output


@pytest.mark.usefixtures("inprocess_demo")  # the agent's process is not what this tests
async def test_the_tui_says_the_unconfined_line_once_per_session(project_root) -> None:
    from scarbook.tui.app import make_app
    from scarbook.tui.screens.launch import LaunchScreen
    from tests.helpers.tui_fixtures import (  # (the TUI's module imports, for this test only)
        SIZE,
        library_loaded,
        wait_until,
    )

    with open(project_root / "scarbook.yaml", "a") as fh:
        fh.write("isolation: none\n")
    app = make_app(project_root, agent_seed=7, demo_delay=0)
    async with app.run_test(size=SIZE) as pilot:
        await library_loaded(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, LaunchScreen), what="the launch modal")
        app.screen.query_one("#runs").value = "2"
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.live is not None and app.live.done, timeout=60, what="the session")
        said = [n.message for n in app._notifications if n.title == "isolation"]
        assert said == [f"isolation: none — {REACH}"]  # 4 cases x 2 runs, one notification


@pytest.mark.parametrize("asked", ["auto", "slot"])
def test_a_ray_session_s_sandbox_is_a_bwrap_per_run_and_says_so_where_slot_was_asked(project, tmp_path, asked) -> None:
    try:
        require_sandbox(project.root)
    except ScarbookError as exc:
        pytest.skip(f"bubblewrap cannot start here: {exc.message}")
    from scarbook.agents import AgentSpec
    from scarbook.run.plan import SessionSite
    from scarbook.run.session import choose_isolation

    _setup(project, tmp_path, asked)
    (project.root / "scarbook.yaml").write_text((project.root / "scarbook.yaml").read_text() + "executor: {type: ray}\n")
    loaded = project.load()
    notes: list[str] = []
    confined = choose_isolation(SessionSite(loaded.root, loaded.config), AgentSpec.from_config(loaded.config.agent), notes)
    assert (confined.ran, confined.asked, confined.slots) == ("sandbox", asked, None)  # a Ray worker: a bwrap a run
    assert notes == ([] if asked == "auto" else [
        "isolation: slot — a ray worker starts a bwrap for each run it is given, so each run gets a bwrap of its own "
        "(isolation: sandbox)"])
