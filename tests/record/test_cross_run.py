"""Issue 33 (3): one run's agent uses another run's recorder URL. Two sandboxed runs at once: each
writes its base URL into its workspace, waits for the test's go, then looks for the other's under
workspaces/ and calls the model with it. Inside the sandbox workspaces/ shows only the run's own
folder (no other run, no history), and a run's door takes only its own token; the calls each
transcript holds are its own run's. Unconfined, a run's URL stops working when its run ends."""

from __future__ import annotations

import json
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.recorder_upstream import CALL, SECRET, Upstream, hostile_project, sandbox_or_skip

THIEF = CALL + r'''
import os, sys, time
me = os.environ["ANTHROPIC_BASE_URL"]
open("url.txt", "w").write(me)
go = sys.argv[1]
for _ in range(600):  # the test says go once both runs wrote their URL (at most a minute)
    if os.path.exists(go):
        break
    time.sleep(0.05)
workspaces = sys.argv[2]
seen, stolen = [], []
for folder, dirs, files in os.walk(workspaces):
    seen.append(os.path.relpath(folder, workspaces))
    if "url.txt" in files:
        url = open(os.path.join(folder, "url.txt")).read()
        if url != me:
            stolen.append(url)
print(json.dumps({"seen": sorted(seen), "stolen": [call(url, "stolen by run " + os.environ["SCARBOOK_RUN"])
                                                   for url in stolen]}))
call(me, "my own call")
open("out.txt", "w").write("hello")
'''

# Unconfined, one run after the other: each calls the URLs earlier runs left in a folder outside, then leaves its own.
LATER = CALL + r'''
import os, sys
drop = sys.argv[1]
old = [open(os.path.join(drop, f)).read() for f in sorted(os.listdir(drop))]
print(json.dumps([call(url, "stolen by a later run") for url in old]))
open(os.path.join(drop, os.environ["SCARBOOK_RUN"]), "w").write(os.environ["ANTHROPIC_BASE_URL"])
call(os.environ["ANTHROPIC_BASE_URL"], "my own call")
open("out.txt", "w").write("hello")
'''


def eval_with_go(project, go: Path) -> dict:
    """eval in a thread; `go` is written once both runs wrote their url.txt (seen from outside)."""
    out = project.root / "report.json"
    done: list = []
    thread = threading.Thread(target=lambda: done.append(project.cli("eval", "-q", "--json", str(out))))
    thread.start()
    end = time.monotonic() + 60
    while time.monotonic() < end and len(list(project.workspaces.glob("*/c/*/url.txt"))) < 2 and thread.is_alive():
        time.sleep(0.02)
    go.write_text("go")
    thread.join(120)
    assert out.exists(), done[0].output if done else "eval did not finish"
    return json.loads(out.read_text())


@pytest.mark.parametrize("network", [False, True], ids=["no-network", "network"])
def test_a_sandboxed_run_sees_no_other_run_and_cannot_use_its_url(project, monkeypatch, network):
    sandbox_or_skip(project.root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    up = Upstream().start()
    go = project.root / "go"
    hostile_project(project, up, [str(go), str(project.workspaces)], script=THIEF, runs=2, isolation="sandbox",
                    extra=f"network: {str(network).lower()}\n")
    try:
        report = eval_with_go(project, go)
    finally:
        up.stop()
    session = report["session"]["id"]
    for run in report["runs"]:
        said = json.loads(run["output_excerpt"].splitlines()[0])
        k = run["k"]
        assert said == {"seen": [".", session, f"{session}/c", f"{session}/c/{k}"], "stolen": []}, said
        texts = [json.loads(line).get("text") for line in Path(run["transcript_path"]).read_text().splitlines()]
        assert "my own call" in texts and not any("stolen" in str(t) for t in texts)
    assert [json.loads(r["text"])["messages"][0]["content"] for r in up.requests] == ["my own call"] * 2


def test_a_runs_url_stops_working_when_its_run_ends(project, monkeypatch, tmp_path):
    """Unconfined, run 2 (after run 1) calls run 1's URL, which run 1 left in a file outside."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    up = Upstream().start()
    drop = tmp_path / "urls"
    drop.mkdir()
    hostile_project(project, up, [str(drop)], script=LATER, runs=2, concurrency=1)
    out = project.root / "report.json"
    try:
        project.cli("eval", "-q", "--json", str(out))
    finally:
        up.stop()
    runs = sorted(json.loads(out.read_text())["runs"], key=lambda r: r["k"])
    assert json.loads(runs[1]["output_excerpt"].splitlines()[0]) == ["ConnectionRefusedError"]
    assert [json.loads(r["text"])["messages"][0]["content"] for r in up.requests] == ["my own call"] * 2
