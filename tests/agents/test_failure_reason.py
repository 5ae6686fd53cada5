"""Issue 15 item 12: an agent's failure reason is its most informative stderr line, not the
runtime's sign-off ("Node.js v20.20.2"); the full log is kept."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from scarbook.agents import CommandAgent
from scarbook.agents.failure import failure_line

NODE_CRASH = """\
file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1402
      throw new Error("Could not resolve authentication method");
            ^

Error: Could not resolve authentication method
    at resolveAuth (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:1402:13)
    at async main (file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:2210:5) {
  code: 'ERR_AUTH',
  errno: -13
}

Node.js v20.20.2
"""


@pytest.mark.parametrize("stderr, line", [
    (NODE_CRASH, "Error: Could not resolve authentication method"),
    ("Traceback (most recent call last):\n  File \"agent.py\", line 3, in <module>\n    main()\n"
     "anthropic.AuthenticationError: Error code: 401 - invalid x-api-key\n",
     "anthropic.AuthenticationError: Error code: 401 - invalid x-api-key"),
    ("node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module '/x/cli.js'\n"
     "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n{\n  code: 'MODULE_NOT_FOUND',\n"
     "  requireStack: []\n}\n\nNode.js v18.19.0\n", "Error: Cannot find module '/x/cli.js'"),
    ("thread 'main' panicked at src/main.rs:4:5:\nboom\nnote: run with `RUST_BACKTRACE=1` environment variable "
     "to display a backtrace\n", "thread 'main' panicked at src/main.rs:4:5:"),
    ("starting\nerror: unexpected argument '--bogus' found\n\nUsage: codex exec [OPTIONS]\n",
     "error: unexpected argument '--bogus' found"),
    ("loading model\nout of retries, giving up\n", "out of retries, giving up"),  # no error line: the last one
    ("\n  \n", ""),
])
def test_the_error_line_is_picked(stderr, line):
    assert failure_line(stderr) == line


async def test_a_node_crash_reads_as_its_error_not_its_version(tmp_path: Path) -> None:
    """A real process that crashes as a Node CLI does: the run's reason names the error, the log
    keeps every line."""
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    logs.mkdir()
    code = f"import sys; sys.stderr.write({NODE_CRASH!r}); sys.exit(1)"
    result = await CommandAgent([sys.executable, "-c", textwrap.dedent(code)]).run("t", ws, {}, 10, logs, "1")
    assert (result.exit_code, result.crashed) == (1, "agent exited with code 1: Error: Could not resolve authentication method")
    assert Path(result.stderr_path).read_text() == NODE_CRASH
