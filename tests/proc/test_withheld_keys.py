"""Issue 33 (21): an unconfined agent reads /proc/<pid>/environ of every process it may (its parent
scarbook, scarbook's watchdog, ...) and keeps what it finds. scarbook is a real process started with
the real keys in its environment, recording (so it needs one): no key is in any environment the agent
can read, and the recorder still calls the model with it."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap

import pytest

from tests.helpers.recorder_upstream import CALL, Upstream

pytestmark = [pytest.mark.needs_proc, pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")]

LOOTER = CALL + r'''
import os, sys
loot = {}
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().decode("utf-8", "replace")
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().decode("utf-8", "replace")
        ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
    except OSError:
        continue
    loot[pid] = {"cmd": cmd, "env": env, "ppid": ppid}
json.dump({"parent": str(os.getppid()), "loot": loot}, open(sys.argv[1], "w"))
print(call(os.environ["ANTHROPIC_BASE_URL"], "hello"))
open("out.txt", "w").write("hello")
'''


def test_no_key_is_in_an_environment_the_agent_can_read(project, tmp_path):
    key, other = f"sk-real-{secrets.token_hex(12)}", f"sk-real-{secrets.token_hex(12)}"
    up = Upstream().start()
    loot = tmp_path / "loot.json"
    (project.root / "looter.py").write_text(LOOTER)
    argv = json.dumps([sys.executable, str(project.root / "looter.py"), str(loot)])
    project.config(textwrap.dedent(f"""\
        agent: {{type: command, argv: {argv}}}
        runs: 1
        isolation: none
        record: {{anthropic: {up.url}}}
        """))
    project.case("c", "id: c\ntask: t\nchecks: [{type: contains, path: out.txt, text: hello}]\n")
    env = {**os.environ, "ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": other, "SCARBOOK_PDEATHSIG": "watchdog"}
    code = "import sys; sys.argv[0] = 'scarbook'; from scarbook.entry import main; main()"
    try:
        done = subprocess.run([sys.executable, "-c", code, "-C", str(project.root), "eval", "-q"], env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        up.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(loot.read_text())
    scarbook = seen["loot"][seen["parent"]]
    assert "from scarbook.entry import main" in scarbook["cmd"]
    assert "PATH=" in scarbook["env"]  # the agent did read scarbook's environment
    (watchdog,) = [p for p in seen["loot"].values() if "os.killpg" in p["cmd"] and p["ppid"] == seen["parent"]]
    assert watchdog["env"] == ""
    assert [pid for pid, p in seen["loot"].items() if key in p["env"] or other in p["env"]] == []
    assert [r["headers"]["x-api-key"] for r in up.requests] == [key]  # the recorder still had it
