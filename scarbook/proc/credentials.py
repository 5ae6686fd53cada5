"""Model-API credentials in scarbook's environment: which variables hold them (one list), and keeping
them out of that environment while agents run.

    with withheld([*CREDENTIALS, judge_key_env]):   # a session: the keys leave os.environ ...
        environ()["ANTHROPIC_API_KEY"]              # ... and are read from here (the judge, the recorder)

An unconfined agent runs as the user, so it can read /proc/<pid>/environ of scarbook (its parent)
and of every process scarbook started with scarbook's environment. So for a session each withheld
variable is read once and taken out of os.environ (no program started after that inherits it), its
value is blanked in the environment block the process was started with (what /proc/<pid>/environ
shows: Linux; elsewhere there is no such file to read), and it is kept here, in memory, until the
session ends — then it goes back into os.environ (never into the block) for the next session of the
same process. The watchdog (proc/watchdog.py) starts with an empty environment.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

# Every variable that holds a model API's credential and that an agent preset passes through (or a
# user lists in agent.env for the SDKs). Under record: each is the recorder's dummy for the agent.
CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CODEX_API_KEY")

_held: dict[str, str] = {}
_depth = 0
_lock = threading.Lock()


class _Environ(Mapping[str, str]):
    """os.environ, and the variables withheld from it for a session."""

    def __getitem__(self, name: str) -> str:
        try:
            return os.environ[name]
        except KeyError:
            with _lock:
                return _held[name]

    def __iter__(self) -> Iterator[str]:
        with _lock:
            held = list(_held)
        return iter(dict.fromkeys([*os.environ, *held]))

    def __len__(self) -> int:
        return sum(1 for _ in self)


_ENVIRON = _Environ()


def environ() -> Mapping[str, str]:
    """Where to read a credential (and any other variable): os.environ, and what a session withholds."""
    return _ENVIRON


@contextmanager
def withheld(names: Iterable[str]) -> Iterator[None]:
    """Take `names` out of scarbook's environment (see the module doc) until the block ends; nested
    and concurrent blocks share them, and they go back when the last one ends."""
    global _depth
    names = [n for n in dict.fromkeys(names) if n]
    with _lock:
        _depth += 1
        taken = {n: os.environ.pop(n) for n in names if n in os.environ}
        _held.update(taken)
    blank_start_environment(names)
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if not _depth:
                for name, value in _held.items():
                    os.environ.setdefault(name, value)  # (a value set meanwhile wins)
                _held.clear()


_blanked: set[str] = set()


def blank_start_environment(names: Iterable[str]) -> list[str]:
    """Blank the values of `names` in the environment block this process was started with (the
    memory /proc/self/environ reads, from env_start to env_end in /proc/self/stat), in place; the
    names blanked. Linux only; a no-op elsewhere and where /proc cannot be read."""
    wanted = {n.encode() for n in names if n not in _blanked}
    if not wanted or not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end: fields 50 and 51 of proc(5)
    except (OSError, ValueError, IndexError):
        return []
    import ctypes

    if end <= start:
        return []
    block = (ctypes.c_char * (end - start)).from_address(start)
    data, at, done = block.raw, 0, []
    for entry in data.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        if eq and name in wanted and value:
            ctypes.memset(start + at + len(name) + 1, 0, len(value))
            done.append(name.decode())
        at += len(entry) + 1
    _blanked.update(done)
    return done
