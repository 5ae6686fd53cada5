"""Version managers' shims (pyenv, rbenv, nodenv, asdf): the `python3` found on PATH is a small script
in `<root>/shims/` that runs the manager, which picks the real program. The manager lives under the
home folder, which the sandbox hides, so inside the shim starts and then cannot run it (exit 127) —
a failure of the machine's set-up, never of the agent.

So before a sandboxed session's first run, a shim in agent.argv[0] is resolved to the program it
leads to (`<manager> which NAME`, asked outside the sandbox, in the project folder, where a
`.python-version` applies), and the runs start that program; a shim that cannot be resolved, or an
agent script whose `#!/usr/bin/env NAME` line would find one, is a preflight error naming the fix.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from scarbook.errors import ScarbookError

MAX_SHIM = 1 << 16  # bytes of a would-be shim read
_MANAGER = re.compile(r'exec\s+"?([^"\s]+)"?\s+exec\b')  # pyenv, rbenv, nodenv: exec "<manager>" exec "$program"
_EXPORT = re.compile(r'^export\s+([A-Z_][A-Z0-9_]*)="?([^"\n]*)"?\s*$', re.MULTILINE)


def shim_of(path: str) -> tuple[str, dict[str, str]] | None:
    """(the manager the shim runs, the variables it exports first) when `path` is a version manager's
    shim — a script in a folder named `shims` that execs a manager — else None."""
    if os.path.basename(os.path.dirname(os.path.abspath(path))) != "shims":
        return None
    try:
        with open(path, "rb") as fh:
            text = fh.read(MAX_SHIM).decode("utf-8", "replace")
    except OSError:
        return None
    found = _MANAGER.search(text) if text.startswith("#!") else None
    return (found[1], dict(_EXPORT.findall(text))) if found else None


def resolve(path: str, name: str, cwd: Path | None) -> str:
    """The program the shim `path` (found for `name`) leads to, or a ScarbookError saying how to
    give it. `path` itself when it is no shim."""
    shim = shim_of(path)
    if shim is None:
        return path
    manager, exports = shim
    tool = os.path.basename(manager)
    fix = (f"write the program it leads to in agent.argv (`{tool} which {name}` prints it), or set isolation: "
           "none")
    lead = (f"agent.argv[0] {name!r} is {path}, a {tool} shim: in the sandbox your home folder is hidden, so it "
            "cannot start there, and")
    try:
        done = subprocess.run([manager, "which", name], cwd=cwd, env={**os.environ, **exports}, capture_output=True,
                              text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ScarbookError(f"{lead} `{tool} which {name}` could not run ({exc}) — {fix}") from None
    lines = done.stdout.strip().splitlines()
    real = lines[-1].strip() if lines else ""
    if done.returncode != 0 or not real or not os.path.isfile(real) or not os.access(real, os.X_OK) \
            or shim_of(real) is not None:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise ScarbookError(f"{lead} `{tool} which {name}` did not name a program ({said}) — {fix}")
    return real


def env_interpreter_shim(program: str) -> str | None:
    """Why a script cannot start in the sandbox when its `#!/usr/bin/env NAME` line finds a shim on PATH
    (its #! line cannot be pointed elsewhere), or None."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if len(words) < 2 or os.path.basename(words[0]) != "env":
        return None
    name = next((w for w in words[1:] if not w.startswith("-")), "")
    found = shutil.which(name) if name else None
    shim = shim_of(found) if found is not None else None
    if shim is None:
        return None
    tool = os.path.basename(shim[0])
    return (f"{program} starts with `#!{' '.join(words)}`, and {name} on PATH is {found}, a {tool} shim: in the "
            "sandbox your home folder is hidden, so it cannot start there — put the real interpreter first in "
            f"agent.argv (`{tool} which {name}` prints it), then the script, or set isolation: none")
