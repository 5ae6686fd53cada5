"""`isolation: slot`: a program agent's runs in sandbox slots — one bwrap per concurrency slot, started once a
session, instead of one per run (proc/slot.py, proc/slot_launcher.py; README: Threat model says what differs).

The slot's bwrap line is the sandbox's own (agents/sandbox.py) for the slot's folder, with its launcher as PID 1
(`--as-pid-1`), a tmpfs on /dev/shm, a POSIX message queue mount and /dev read-only (a run's file there would
outlive it). Where slots cannot hold a run safely (`why_no_slots`) the agent runs one bwrap per run, as
`isolation: sandbox` does, and the session says so once.
"""

from __future__ import annotations

import os
from pathlib import Path

from scarbook.agents.sandbox import Sandbox
from scarbook.proc import slot_launcher
from scarbook.proc.slot_pool import Line, SlotPool


def why_no_slots() -> str | None:
    """Why this machine runs one bwrap per run instead of slots (None: slots can run here)."""
    if not slot_launcher.supported(os.uname().machine):
        return f"no sandbox slots on {os.uname().machine} (the launcher knows {' and '.join(slot_launcher.SYSCALLS)})"
    if os.geteuid() != 0:
        # the slot folder must belong to an id the slot's user namespace does not map, or the agent could rename
        # its own folder away and put a link in its place
        return "sandbox slots need scarbook to run as root (the slot folder's owner must be outside the sandbox)"
    if not hasattr(os, "pidfd_open"):
        return "sandbox slots need pidfds (Linux 5.3)"
    return None


def slot_line(sandbox: Sandbox, program: str, env: dict[str, str]) -> Line:
    def line(folder: Path) -> list[str]:
        base = sandbox.line(program, folder, (), env)
        at = base.index("--proc") + 2
        return [base[0], "--as-pid-1", *base[1:at], "--tmpfs", "/dev/shm", "--mqueue", "/dev/mqueue",
                "--remount-ro", "/dev", *base[at:], "--chdir", "/", "--"]
    return line


class AgentSlots:
    """The pools of one agent: one per sandbox (the case's network) and recorder bridge."""

    def __init__(self, workspaces: Path) -> None:
        self.workspaces = workspaces
        self._pools: dict[tuple, SlotPool] = {}

    def pool(self, sandbox: Sandbox, program: str, env: dict[str, str]) -> SlotPool:
        key = (sandbox.network, program, env.get("SCARBOOK_RECORDER_SOCKET"), env.get("SCARBOOK_RECORDER_PORT"))
        pool = self._pools.get(key)
        if pool is None:
            wipe = [*sandbox.hidden, "/dev/shm", "/dev/mqueue", "/dev/pts"]
            pool = self._pools[key] = SlotPool(self.workspaces, slot_line(sandbox, program, env), wipe)
        return pool

    async def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.close()

    def close_now(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close_now()
