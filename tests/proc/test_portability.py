"""scarbook without the Linux-only parts of `os` (what macOS and Windows lack): `scarbook eval` must
still run a command agent (with a command check) and a python agent. The missing calls are removed
from `os` and `select` in a real subprocess before scarbook is imported, so every fallback runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

# What Windows lacks of these (macOS lacks pidfd_open and epoll). O_NONBLOCK stays: Windows lacks it
# too, but filelock's POSIX backend (which this simulation still runs) needs it; scarbook reads it
# with getattr.
REMOVE = {"os": ["O_CLOEXEC", "O_NOFOLLOW", "fchmod", "killpg", "pidfd_open"], "select": ["epoll"]}

RUN = textwrap.dedent("""
    import os, select, sys
    for module, names in {remove!r}.items():
        for name in names:
            if hasattr(sys.modules[module], name):
                delattr(sys.modules[module], name)
    from scarbook.cli import main
    sys.argv = ["scarbook", "-C", sys.argv[1], "eval", "--runs", "2"]
    main()
""").format(remove=REMOVE)


def eval_without_linux(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUN, str(root)], capture_output=True, text=True, timeout=120)


def test_a_command_agent_and_a_command_check_run_without_linux_calls(project) -> None:
    (project.root / "agent.py").write_text("open('tmp.txt', 'w').write('one line\\n')\nprint('wrote tmp.txt')\n")
    project.config(f"agent: {{type: command, argv: [{sys.executable}, agent.py]}}\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: contains, path: tmp.txt, text: one line}\n"
                      "  - {type: command, run: 'test -s tmp.txt'}\n", {"README.md": "# seeded\n"})
    done = eval_without_linux(project.root)
    assert done.returncode == 0, done.stderr
    assert "2 runs — 2 pass, 0 fail, 0 error" in done.stdout


def test_a_python_agent_runs_without_linux_calls(project) -> None:
    (project.root / "my_agent.py").write_text(
        "from pathlib import Path\n\ndef run(task, cwd):\n    (Path(cwd) / 'tmp.txt').write_text('x\\n')\n    return 'done'\n")
    project.config("agent: {type: python, function: my_agent:run}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n", {"README.md": "# seeded\n"})
    done = eval_without_linux(project.root)
    assert done.returncode == 0, done.stderr
    assert "2 runs — 2 pass, 0 fail, 0 error" in done.stdout
