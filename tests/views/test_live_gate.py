"""The gate in one place (issue 32.4): the live screen's fold and the CLI's report decide a session
alike — for --runs auto, both show the rate bias-adjusted for stopping early and the interval valid
after the stop, never the raw rate on one face and the adjusted one on the other."""

from __future__ import annotations

import json
import sys

from scarbook.models import SessionState
from scarbook.reports.table import build_report
from scarbook.run.runner import run_session
from scarbook.run.session import SessionPlan, SessionSite, ready_session
from scarbook.views.live_state import LiveSession

# run k fails when k is odd and passes when it is even: F P F P F P F, which the sequential rule
# decides below after 7 runs (tests/stats/test_gate_sequential.py), a raw rate of 3/7
ALTERNATING = """\
import os
from pathlib import Path
if int(os.environ["SCARBOOK_RUN"]) % 2 == 0:
    Path("out.txt").write_text("ok")
"""


async def test_runs_auto_live_and_report_show_the_same_adjusted_rate(project) -> None:
    agent = project.root / "agent.py"
    agent.write_text(ALTERNATING)
    project.config(f"agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]}}\n"
                   "timeout_s: 30\nconcurrency: 1\nisolation: none\n", gate=None)
    project.case("half", "id: half\ntask: t\nchecks: [{type: file_exists, path: out.txt}]\n")
    p = project.load()
    cases = list(p.load_cases().cases)
    ready = ready_session(SessionSite.of(p), SessionPlan(cases, 40, concurrency=1, adaptive=True))
    live = LiveSession(cases, 40, p.config)
    async for ev in run_session(ready):
        live.apply(ev)
    assert live.info is not None and live.info.state == SessionState.FINISHED
    runs = list(p.history.runs(live.info.id))
    [reported] = build_report(live.info, runs, {c.id: c for c in cases}, p.config).stats
    shown = live.stats(cases[0])
    assert reported.decision == "below" and reported.rate_note == "adjusted from 3/7"
    assert reported.rate != 3 / 7  # the adjusted rate is not the raw one ...
    assert (shown.rate, shown.lo, shown.hi, shown.rate_note) == (reported.rate, reported.lo, reported.hi,
                                                                 reported.rate_note)  # ... and both faces show it
    assert live.gate == {"half": "below"}
