"""make_app hands the demo agent its seed and delay through the agent spec: the process environment
is left as it was (it used to set $SCARBOOK_DEMO_DELAY for the whole process, tests included)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from scarbook.agents import make_agent
from scarbook.tui.app import make_app
from tests.helpers.tui_fixtures import fast_demo, project_root  # noqa: F401


def test_make_app_gives_the_demo_delay_to_the_agent_not_to_the_environment(project_root, monkeypatch):
    monkeypatch.delenv("SCARBOOK_DEMO_DELAY", raising=False)
    app = make_app(project_root, agent_seed=7, demo_delay=0.25)
    assert "SCARBOOK_DEMO_DELAY" not in os.environ
    agent = make_agent(app.project.config.agent, app.project.root)
    assert agent.argv[-4:] == ["--seed", "7", "--delay", "0.25"]


def test_make_app_without_seed_or_delay_keeps_the_agent_as_configured(project_root):
    app = make_app(project_root)
    agent = make_agent(app.project.config.agent, app.project.root)
    assert "--delay" not in agent.argv and "--seed" not in agent.argv


def test_the_demo_agents_delay_argument_wins_over_the_environment(tmp_path):
    """$SCARBOOK_DEMO_DELAY=30 alone would sleep at least 6 s; --delay 0 does not sleep."""
    env = {**os.environ, "SCARBOOK_DEMO_DELAY": "30", "SCARBOOK_CASE": "write-one-line", "SCARBOOK_RUN": "1"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "scarbook.agents.demo", "--seed", "1", "--delay", "0"],
                          input="write one line", text=True, capture_output=True, cwd=tmp_path, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 6
