"""`isolation: slot`: a program agent's runs in sandbox slots — one bwrap per concurrency slot, started once a
session, instead of one per run (proc/slot.py, proc/slot_launcher.py; README: Threat model says what differs).

The slot's bwrap line is the sandbox's own (agents/sandbox.py) with the project's workspaces/ bound writable (the
launcher gives each run its own view of it, the one a bwrap of the run's own gives), its launcher as PID 1
(`--as-pid-1`) in a user namespace of the slot's own even as root (`--unshare-user`: the capabilities it needs
for that, CAP_SYS_ADMIN and CAP_SYS_CHROOT, and CAP_SETPCAP to empty its bounding set, are the namespace's, never
the machine's), a tmpfs on /dev/shm, a POSIX message queue mount and /dev read-only (a run's file there would
outlive it). Where slots cannot hold a run safely (`why_no_slots`) the agent runs one bwrap per run, as
`isolation: sandbox` does, and the session says so once.
"""

from __future__ import annotations

import os

from scarbook.agents.sandbox import Sandbox, find_bwrap, probe
from scarbook.proc import slot_launcher
from scarbook.proc.slot_pool import SlotPool

LAUNCHER_CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SYS_CHROOT", "CAP_SETPCAP")
_probed: dict[str, str | None] = {}  # bwrap path -> why a slot's namespace cannot be made (None: it can)


def why_no_slots() -> str | None:
    """Why this machine runs one bwrap per run instead of slots (None: slots can run here)."""
    if not slot_launcher.supported(os.uname().machine):
        return f"no sandbox slots on {os.uname().machine} (the launcher knows {' and '.join(slot_launcher.SYSCALLS)})"
    if not hasattr(os, "pidfd_open"):
        return "sandbox slots need pidfds (Linux 5.3)"
    bwrap = find_bwrap()
    if bwrap is None:  # (the sandbox itself says why it cannot start)
        return None
    if bwrap not in _probed:  # (unprivileged user namespaces disabled; a setuid bwrap refuses --cap-add)
        _probed[bwrap] = probe(bwrap, "--unshare-user", *_launcher_capabilities())
    if _probed[bwrap] is not None:
        return f"sandbox slots need a user namespace of their own, and bwrap could not make one ({_probed[bwrap]})"
    return None


def _launcher_capabilities() -> list[str]:
    return [arg for cap in LAUNCHER_CAPABILITIES for arg in ("--cap-add", cap)]


def slot_line(sandbox: Sandbox, program: str, env: dict[str, str]) -> list[str]:
    base = sandbox.line(program, None, (), env)
    at = base.index("--proc") + 2
    return [base[0], "--as-pid-1", "--unshare-user", *base[1:at], *_launcher_capabilities(), "--tmpfs", "/dev/shm",
            "--mqueue", "/dev/mqueue", "--remount-ro", "/dev", *base[at:], "--chdir", "/", "--"]


class AgentSlots:
    """The pools of one agent: one per sandbox (the case's network) and recorder bridge."""

    def __init__(self) -> None:
        self._pools: dict[tuple, SlotPool] = {}

    def pool(self, sandbox: Sandbox, program: str, env: dict[str, str]) -> SlotPool:
        key = (sandbox.network, program, env.get("SCARBOOK_RECORDER_SOCKET"), env.get("SCARBOOK_RECORDER_PORT"))
        pool = self._pools.get(key)
        if pool is None:
            wipe = [*sandbox.hidden, "/dev/shm", "/dev/mqueue", "/dev/pts"]
            private = [d for d in sandbox.private if os.path.isdir(d)]  # (as the line binds them)
            pool = self._pools[key] = SlotPool(slot_line(sandbox, program, env), private, wipe)
        return pool

    async def close(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.close()

    def close_now(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close_now()
