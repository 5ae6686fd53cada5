"""The anthropic SDK is imported only when a judge will grade (issue 26.13: every process's first run
waited 4-10 s for it on a loaded machine, even when no case had an llm_judge check)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The moment anything imports the SDK the probe says so and ends: what the SDK's own import would cost (~2 s
# of CPU, seconds more on a busy machine) tells the test nothing more.
PROBE = """
import os, sys

class SeesTheSDK:
    def find_spec(self, name, path=None, target=None):
        if name == "anthropic":
            print("SDK:", True, "aiohttp:", "aiohttp" in sys.modules, "(its import began)", flush=True)
            os._exit(0)

sys.meta_path.insert(0, SeesTheSDK())
from scarbook.cli import main
try:
    main({args!r}, standalone_mode=False)
except BaseException as exc:
    print("EXIT", type(exc).__name__, file=sys.stderr)
finally:
    print("SDK:", "anthropic" in sys.modules, "aiohttp:", "aiohttp" in sys.modules)
"""

RULES_ONLY = "id: {cid}\ntitle: Rules only\ntask: write a\nchecks: [{{type: file_exists, path: a}}]\n"
JUDGED = ("id: judged\ntitle: Judged\ntask: write a\nchecks:\n  - type: llm_judge\n    artifact: output\n"
          "    rubric: [the answer says a was written]\n")


def probe(project, *args: str, env: dict[str, str] | None = None) -> str:
    code = PROBE.format(args=["-C", str(project.root), *args])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env=None if env is None else {**os.environ, **env})
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("args", [("eval", "--runs", "1", "-q"), ("verify",)])
def test_rule_checks_only_never_load_the_sdk(project, args) -> None:
    project.case("plain", RULES_ONLY.format(cid="plain"))
    assert probe(project, *args) == "SDK: False aiohttp: False"  # aiohttp: only a session that records


def test_a_judged_case_does_load_it(project) -> None:
    """The probe above can fail: with an llm_judge check to grade (the run's output) and a key to grade with,
    the SDK is imported. (Without a key no judge can be called, and issue 34.6 keeps the SDK out then too.) The
    judge points at a closed loopback port: the call fails, but only after the SDK was loaded to make it."""
    project.config(project.root.joinpath("scarbook.yaml").read_text()
                   + "judge:\n  base_url: http://127.0.0.1:9\n  max_retries: 0\n")
    project.case("judged", JUDGED)
    env = {"ANTHROPIC_API_KEY": "sk-test"}
    assert probe(project, "eval", "--runs", "1", "-q", env=env).startswith("SDK: True ")  # (the SDK may load aiohttp itself)
    # `verify` of a case without a scar artifact grades nothing: it loaded the SDK only when importing the judge
    # did (issue 37)
    assert probe(project, "verify", env=env).startswith("SDK: False ")


def test_a_recording_session_loads_aiohttp(project) -> None:
    """The probe can fail for aiohttp too: `--record` starts the recorder, which is an aiohttp server."""
    project.case("plain", RULES_ONLY.format(cid="plain"))
    assert probe(project, "eval", "--runs", "1", "-q", "--record") == "SDK: False aiohttp: True"
