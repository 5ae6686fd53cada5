"""Issue 33 (6): under --record no agent holds a real credential. For the claude-code and codex
presets (stand-in `claude` / `codex` executables that report their own environment) and a command
agent that lists every credential in `env:`, each credential variable it is passed is the
recorder's dummy, and a `command` check (agent-written code) gets none of the real ones either."""

from __future__ import annotations

import json
import os
import sys

import pytest

from scarbook.agents import claude_code, codex
from scarbook.proc.credentials import CREDENTIALS
from scarbook.record.proxy import DUMMY_KEY

# A stand-in CLI: prints, as its final answer, its credentials and the names of every variable holding a
# real one, in the event stream its preset reads.
STAND_IN = r'''#!{python}
import json, os, sys
seen = {{"given": {{n: os.environ[n] for n in {names!r} if n in os.environ}},
        "real": sorted(k for k, v in os.environ.items() if v.startswith("sk-real"))}}
answer = json.dumps(seen)
if {kind!r} == "claude-code":
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": answer}}))
elif {kind!r} == "codex":
    print(json.dumps({{"type": "item.completed", "item": {{"type": "agent_message", "text": answer}}}}))
    print(json.dumps({{"type": "turn.completed", "usage": {{"input_tokens": 1, "output_tokens": 1}}}}))
else:
    print(answer)
'''

NO_REAL_KEY = "import os, sys\nsys.exit(1 if [k for k, v in os.environ.items() if v.startswith('sk-real')] else 0)\n"

AGENTS = {
    "claude-code": ("{type: claude-code}", claude_code.ENV),
    "codex": ("{type: codex}", codex.ENV),
    "command": (None, CREDENTIALS),
}


def test_every_credential_a_preset_passes_is_in_the_one_list():
    for env in (claude_code.ENV, codex.ENV):
        secretish = {n for n in env if n.endswith(("_KEY", "_TOKEN"))}
        assert secretish <= set(CREDENTIALS), secretish - set(CREDENTIALS)


@pytest.mark.parametrize("kind", list(AGENTS))
def test_under_record_every_credential_the_agent_is_passed_is_the_dummy(project, tmp_path, monkeypatch, kind):
    agent_yaml, passed = AGENTS[kind]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / ("claude" if kind == "claude-code" else "codex" if kind == "codex" else "agent")
    program.write_text(STAND_IN.format(python=sys.executable, names=CREDENTIALS, kind=kind))
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name in CREDENTIALS:
        monkeypatch.setenv(name, f"sk-real-{name.lower()}")
    if agent_yaml is None:
        agent_yaml = json.dumps({"type": "command", "argv": [str(program)], "env": list(CREDENTIALS)})
    project.config(f"agent: {agent_yaml}\nruns: 1\nisolation: none\nrecord: true\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: command, run: python3 no_real_key.py}\n",
                 {"no_real_key.py": NO_REAL_KEY})
    out = project.root / "report.json"
    result = project.cli("eval", "-q", "--json", str(out))
    (run,) = json.loads(out.read_text())["runs"]
    seen = json.loads(run["output_excerpt"])
    assert seen["real"] == [], seen
    credentials = [n for n in passed if n in CREDENTIALS]
    assert credentials and seen["given"] == dict.fromkeys(credentials, DUMMY_KEY) | {
        n: DUMMY_KEY for n in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}, seen
    assert run["status"] == "pass", run  # the command check found no real key either
    assert result.exit_code == 0, result.output
