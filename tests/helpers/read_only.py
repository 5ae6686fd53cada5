"""A folder made read-only for real, to a command and everything it starts.

The tests run as root here, and root ignores permission bits, so a folder is made read-only with a
read-only bind mount in a private mount namespace (`unshare -m`), which refuses root too and vanishes
with the process; as any other user, chmod does it. Also: the library's d-then-y driven by Pilot keys,
for a TUI started that way (`python -m tests.helpers.read_only ROOT`, from the repository)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCARBOOK = [sys.executable, "-c", "from scarbook.cli import main; main()"]
RO_BIND = 'mount --bind -o ro "$1" "$1" && shift && exec "$@"'
# what the system says to a write into such a folder
READ_ONLY_WHY = "Read-only file system" if os.geteuid() == 0 else "Permission denied"


def private_mounts_work() -> bool:
    if not sys.platform.startswith("linux") or not (shutil.which("unshare") and shutil.which("mount")):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", RO_BIND, "sh", "/tmp", "true"], capture_output=True)
    return probe.returncode == 0


def read_only(path: Path, argv: list[str]) -> list[str]:
    """`argv` run so that `path` is read-only to it (and to everything it starts)."""
    if os.geteuid() != 0:
        path.chmod(0o555)
        return argv
    if not private_mounts_work():
        pytest.skip("running as root without unshare/mount: no way to make a folder read-only to root")
    return ["unshare", "-m", "sh", "-c", RO_BIND, "sh", str(path), *argv]


def run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=cwd)


async def delete_highlighted_case(root: Path) -> dict:
    """Open the TUI on `root`, press d then y on the highlighted case; what it said and what it shows."""
    from scarbook.tui.app import make_app
    from scarbook.tui.dialogs.confirm import ConfirmScreen
    from tests.helpers.tui_fixtures import library_loaded, raised_notifications, wait_until

    app = make_app(root)
    raised = raised_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        lib = await library_loaded(pilot)
        key = lib.current_key()
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the confirm dialog")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n.severity == "error" for n in raised) or key not in
                         [r.key for r in lib.rows], what="the delete to end")
        await wait_until(pilot, lambda: app.screen is lib, what="the library")
        return {"case": key, "said": [[n.title, n.message] for n in raised if n.severity == "error"],
                "rows": [r.key for r in lib.rows], "running": app.is_running}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(delete_highlighted_case(Path(sys.argv[1])))))
