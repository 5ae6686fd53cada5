"""Under pytest-xdist, the test modules are rewritten and compiled once, by the controller, before any worker starts.

pytest rewrites each test module's asserts and caches the result in `__pycache__/` (the rewritten `.pyc`).
From a fresh checkout there is no cache yet, and every xdist worker collects the whole suite in the same order
at the same time: each rewrote and compiled all the test modules itself (~6 s of CPU a worker, four workers),
and each compiled the `scarbook` modules it imported. Here the controller does it first, split over two
processes, with pytest's own functions: the workers then read the cached code, as on any later run. What is
collected and how it runs is unchanged; a module whose cache is fresh is left alone (a later run costs a
stat and a read per module).
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

import pytest

from tests.helpers.paths import REPO


def _test_modules(config: pytest.Config) -> list[Path]:
    """The test modules the run's folders hold (a run naming files runs in one process: nothing to share)."""
    here = config.invocation_params.dir
    folders = [(here / arg.split("::")[0]).resolve() for arg in config.args]
    patterns = config.getini("python_files")
    found: set[Path] = set()
    for folder in folders:
        if folder.is_dir():
            for pattern in patterns:
                found.update(folder.rglob(pattern))
    return sorted(found)


def _rewrite(config: pytest.Config, modules: list[Path]) -> None:
    """pytest's own import hook steps (AssertionRewritingHook.exec_module) up to the cached `.pyc`, without
    running the module."""
    from _pytest.assertion.rewrite import (
        PYC_TAIL,
        _read_pyc,
        _rewrite_test,
        _write_pyc,
        assertstate_key,
        get_cache_dir,
        try_makedirs,
    )

    state = config.stash[assertstate_key]
    for fn in modules:
        cache_dir = get_cache_dir(fn)
        pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
        if _read_pyc(fn, pyc) is not None or not try_makedirs(cache_dir):
            continue
        try:
            source_stat, co = _rewrite_test(fn, config)
        except SyntaxError:
            continue  # collection reports it, as it would have
        _write_pyc(state, co, source_stat, pyc)


def _compile(config: pytest.Config, share: int, of: int) -> None:
    modules = _test_modules(config)
    _rewrite(config, modules[share::of])
    # the package (and the test helpers) as plain bytecode: cheap next to the rewrite, but paid by every worker
    if share == 0:
        compileall.compile_dir(REPO / "scarbook", quiet=2)
    else:
        compileall.compile_dir(REPO / "tests" / "helpers", quiet=2)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """On the xdist controller, before its own sessionstart starts the workers."""
    config = session.config
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    if getattr(config.option, "assertmode", "rewrite") != "rewrite":
        return
    try:
        if not hasattr(os, "fork"):
            _compile(config, 0, 1)
            return
        child = os.fork()
        if child == 0:  # the other half, on the other CPU
            try:
                _compile(config, 1, 2)
            finally:
                os._exit(0)
        try:
            _compile(config, 0, 2)
        finally:
            os.waitpid(child, 0)
    except (ImportError, AttributeError, OSError):
        pass  # pytest's internals moved, or the folder is read-only: the workers compile as before
