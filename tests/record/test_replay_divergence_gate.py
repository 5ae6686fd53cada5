"""A replay whose runs diverge has no verdict (exit 3). A run whose agent sends another request than the one
recorded is an error (out of the pass rate's denominator), cause replay-diverged: the run did not replay the
recorded behaviour, so it says nothing about it. An agent that diverges exactly where it would fail — a hostile
one, or one whose changes fall on its failing runs — left only its passing runs in the rate: 3 of 5 recorded runs
pass, the replay reads 3/3 and went green (exit 0), where the recorded session read 3/5 and went red.
A real agent through the recorder (a loopback upstream), unconfined and sandboxed."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from tests.helpers.recorder_upstream import CALL, SECRET, Upstream, hostile_project, sandbox_or_skip

# Runs 1-3 write hello, runs 4 and 5 goodbye (the case wants hello). argv[1] "diverge": runs 4 and 5 ask the model
# something else than they asked when recorded, so their replay stops at call 1.
AGENT = CALL + r'''
import os, sys
k = int(os.environ["SCARBOOK_RUN"])
diverge = sys.argv[1] == "diverge" and k >= 4
call(os.environ["ANTHROPIC_BASE_URL"], "write hello" + (" differently" if diverge else ""))
open("out.txt", "w").write("hello" if k <= 3 else "goodbye")
'''


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_replay_whose_failing_runs_diverge_has_no_verdict(project, monkeypatch, isolation) -> None:
    if isolation == "sandbox":
        sandbox_or_skip(project.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    up = Upstream().start()
    try:
        hostile_project(project, up, ["same"], script=AGENT, runs=5, isolation=isolation,
                        extra="threshold: 0.8\ngate: {mode: point}\n")
        out = project.root / "recorded.json"
        recorded = project.cli("eval", "-q", "--json", str(out))
        assert recorded.exit_code == 1, recorded.output  # 3/5 = 60%, below 80%
        sid = json.loads(out.read_text())["session"]["id"]
        hostile_project(project, up, ["diverge"], script=AGENT, runs=5, isolation=isolation,
                        extra="threshold: 0.8\ngate: {mode: point}\n")
        out = project.root / "replayed.json"
        replayed = project.cli("eval", "-q", "--json", str(out), "--junit", str(project.root / "junit.xml"),
                               "--replay", sid)
    finally:
        up.stop()
    doc = json.loads(out.read_text())
    runs = sorted(doc["runs"], key=lambda r: r["k"])
    assert [(r["status"], r["cause"] and r["cause"]["rule"]) for r in runs] == \
        [("pass", None)] * 3 + [("error", "replay-diverged")] * 2
    assert replayed.exit_code == 3, replayed.output  # 0 before: 3/3 read 100%
    assert doc["exit_code"] == 3
    assert ("2 runs did not replay what was recorded (the agent's requests differ): the rate would hold only the runs "
            "that did, so the session has no verdict (exit 3)") in replayed.output
    (case,) = ElementTree.parse(project.root / "junit.xml").getroot().iter("testcase")
    (error,) = case.iter("error")  # a dashboard read the case as passed
    assert (error.get("type"), error.get("message")) == ("agent", "2 runs ended in an error of the agent's own doing "
                                                                  "(a replay it diverged from) — no verdict (exit 3)")
