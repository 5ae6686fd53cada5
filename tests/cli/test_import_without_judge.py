"""Issue 34.6: `scarbook import` with no judge to call never imports the judge's SDK.

A draft of a final answer gets an llm_judge check, and the import certifies the draft as verify does:
with no judge key, that certification cannot call a judge, so the Anthropic SDK (16.7 s and 103 MB of
the import's 3.9 s and 37 MB, measured in the issue) must not be imported at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"

# The moment anything imports the SDK the child says so and ends: what the SDK's own import would cost (~2 s
# of CPU, seconds more on a busy machine) tells the tests nothing more.
CHILD = """
import os, sys

def sdk_line(*importing):
    return "SDK:" + ",".join(sorted({*importing, *(m for m in ("anthropic", "httpx") if m in sys.modules)}))

class SeesTheSDK:
    def find_spec(self, name, path=None, target=None):
        if name == "anthropic":
            sys.stdout.flush()
            print(sdk_line(name) + " (its import began)", file=sys.stderr, flush=True)
            os._exit(0)

sys.meta_path.insert(0, SeesTheSDK())
from scarbook.entry import main
try:
    main()
except SystemExit as exc:
    code = exc.code
print(sdk_line(), file=sys.stderr)
"""


def _import(tmp_path: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    (tmp_path / "scarbook.yaml").write_text("agent: {type: demo}\n")
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", CHILD, "-C", str(tmp_path), "import", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_an_import_with_no_judge_key_never_imports_the_sdk(tmp_path):
    res = _import(tmp_path, str(FIXTURES / "terminal.log"), "--id", "answer")
    assert "wrote draft case" in res.stdout, res.stderr
    case = (tmp_path / "cases" / "answer" / "case.yaml").read_text()
    assert "llm_judge" in case  # the draft has a check only a judge can grade
    assert "unverified" in res.stdout  # ...and the certification says it could not
    assert res.stderr.strip().splitlines()[-1] == "SDK:"


def test_listing_never_imports_the_sdk(tmp_path):
    res = _import(tmp_path, str(FIXTURES / "anthropic_response.json"), "--list")
    assert "candidates:" in res.stdout, res.stderr
    assert res.stderr.strip().splitlines()[-1] == "SDK:"


def test_with_a_key_the_judge_is_built(tmp_path):
    """The other side: a key set means a judge to call, so the SDK loads (the test above can fail)."""
    res = _import(tmp_path, str(FIXTURES / "terminal.log"), "--id", "answer", "--judged", "1",
                  env_extra={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert "wrote draft case" in res.stdout, res.stderr
    assert "anthropic" in res.stderr.strip().splitlines()[-1]
    json.dumps(res.stdout)  # printable
