"""The `python` adapter: the agent is `module:function(task, cwd)`, sync or async, in-process."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scarbook.errors import ScarbookError
from scarbook.models import AgentResult


class PythonAgent:
    def __init__(self, target: str, project_root: Path | None = None) -> None:
        self.target = target
        self.project_root = project_root
        self.label = f"python: {target}"
        self.env_allow: tuple[str, ...] = ()  # in-process: it sees scarbook's own environment
        self._fn: Callable[..., Any] | None = None

    def _load(self) -> Callable[..., Any]:
        if self._fn is None:
            module_name, _, attr = self.target.partition(":")
            if self.project_root and str(self.project_root) not in sys.path:
                sys.path.insert(0, str(self.project_root))
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:
                raise ScarbookError(f"agent.function {self.target!r}: cannot import {module_name!r} ({exc}) — "
                                    "check the module name and that it is importable from the project root") from None
            fn = getattr(module, attr, None)
            if not callable(fn):
                where = f" ({module.__file__})" if getattr(module, "__file__", None) else ""
                raise ScarbookError(f"agent.function {self.target!r}: {module_name}{where} has no function {attr!r} — "
                                    "name a function it defines, as module:function")
            self._fn = fn
        return self._fn

    def preflight(self) -> None:
        self._load()

    def sandbox_for(self, network: bool | None) -> None:
        """Never confined: it runs inside scarbook's process (its row in agents/spec.py: SANDBOX = False)."""
        return None

    async def run(self, task: str, cwd: Path, env: dict[str, str], timeout_s: float,
                  log_dir: Path, stem: str, *, network: bool | None = None) -> AgentResult:
        fn = self._load()
        stderr_path = log_dir / f"{stem}.stderr.log"
        start = time.monotonic()
        # In-process agents share os.environ; they learn the SCARBOOK_* paths through keyword-free
        # convention: the function may accept an `env` parameter.
        kwargs = {"env": env} if "env" in inspect.signature(fn).parameters else {}
        try:
            if inspect.iscoroutinefunction(fn):
                value = await asyncio.wait_for(fn(task, cwd, **kwargs), timeout_s)
            else:
                # A sync function cannot be killed; on timeout its thread is abandoned, not stopped.
                value = await asyncio.wait_for(asyncio.to_thread(fn, task, cwd, **kwargs), timeout_s)
        except TimeoutError:
            return AgentResult(timed_out=True, crashed=f"timed out after {timeout_s:g}s",
                               duration_s=time.monotonic() - start)
        except Exception as exc:  # the agent crashed: a failure of the agent, kept with its traceback
            trace = traceback.format_exc()
            stderr_path.write_text(trace, encoding="utf-8")
            return AgentResult(crashed=f"agent raised {type(exc).__name__}: {exc}", exit_code=1,
                               stderr_path=str(stderr_path), duration_s=time.monotonic() - start,
                               stderr_tail=trace[-4096:])
        return AgentResult(output="" if value is None else str(value), exit_code=0,
                           duration_s=time.monotonic() - start)
