"""Shared fixtures for the core tests: a real project folder in tmp_path, and the CLI driven through
click's CliRunner. Other test modules keep their own fixtures in their own modules."""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, settings

from tests.helpers.collection_imports import note_collection_imports
from tests.helpers.paths import REPO

# Bytecode is written and reused, whatever PYTHONDONTWRITEBYTECODE says: without it every xdist worker
# rewrites and compiles all 130 test modules (3.8 s of CPU each) and every `scarbook` the tests start
# compiles the package again (0.17 s of its 0.4 s). The .pyc files land in __pycache__/ (git ignores it).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
BUNDLED_CASES = REPO / "cases"

# Hypothesis tries the same examples on every run of the suite: no run's outcome depends on the seed it drew
# (CI hung once with the random seed and the fresh .hypothesis of a new checkout; nothing said what it drew),
# and no example saved by an earlier run is replayed. `HYPOTHESIS_PROFILE=fuzz` hunts instead: 40 times the
# examples, a new seed each run, and a failure prints the seed and the blob that reproduce it.
settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("fuzz", max_examples=4000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

# Tests of other things run 1-2 runs and read exit 1 as "a run failed": they keep the point rule
# (rate >= threshold). The gate's own tests (tests/cli/test_gate, test_decisions) use the evidence default.
DEFAULT_CONFIG = """\
agent: {type: demo, seed: 7}
runs: 2
concurrency: 2
timeout_s: 30
threshold: 0.8
gate: {mode: point}
"""


def run_cli(root: Path, *args: str, input: str | None = None) -> Result:
    """Run `scarbook -C root ARGS...` in-process; stdout and stderr are kept apart."""
    from scarbook.cli import main

    return CliRunner().invoke(main, ["-C", str(root), *args], input=input, catch_exceptions=False)


@dataclass
class ProjectDir:
    root: Path

    @property
    def cases_dir(self) -> Path:
        return self.root / "cases"

    @property
    def workspaces(self) -> Path:
        return self.root / "workspaces"

    def config(self, text: str, gate: str | None = "point") -> Path:
        """Write scarbook.yaml; unless it has a gate: section, `gate` pins the gate's mode (point, as
        DEFAULT_CONFIG; None keeps the product's default, evidence)."""
        path = self.root / "scarbook.yaml"
        text = textwrap.dedent(text)
        if gate is not None and not any(line.startswith("gate:") for line in text.splitlines()):
            text = text.rstrip("\n") + f"\ngate: {{mode: {gate}}}\n"
        path.write_text(text, encoding="utf-8")
        return path

    def case(self, cid: str, text: str, seed: dict[str, str] | None = None) -> Path:
        """Write cases/<cid>/case.yaml (dedented) and seed/ files; returns the case.yaml path."""
        folder = self.cases_dir / cid
        folder.mkdir(parents=True, exist_ok=True)
        for rel, body in (seed or {}).items():
            p = folder / "seed" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(body, encoding="utf-8")
        path = folder / "case.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def bundled(self, agent_seed: int | None = None, gate: str | None = "point") -> None:
        """Copy the repository's bundled scar collection and its scarbook.yaml in. Unseeded, the demo
        agent draws from the session id (another outcome each session); agent_seed pins its draw.
        `gate` pins the gate's mode (point, as DEFAULT_CONFIG); None keeps the product's default."""
        shutil.copytree(BUNDLED_CASES, self.cases_dir, dirs_exist_ok=True)
        text = (REPO / "scarbook.yaml").read_text()
        if agent_seed is not None:
            text = text.replace("agent:\n  type: demo\n", f"agent:\n  type: demo\n  seed: {agent_seed}\n")
            assert f"seed: {agent_seed}" in text
        if gate is not None:
            text += f"gate: {{mode: {gate}}}\n"
        (self.root / "scarbook.yaml").write_text(text)

    def cli(self, *args: str, input: str | None = None) -> Result:
        return run_cli(self.root, *args, input=input)

    def load(self):
        from scarbook.project import Project

        return Project.discover(self.root)


@pytest.fixture(scope="session", autouse=True)
def python3_is_this_interpreter(tmp_path_factory):
    """`python3` on PATH is the interpreter running the tests (the bundled rename-function case's check
    runs `python3 main.py` in hundreds of runs). A version manager's shim first on PATH costs far more
    than the check: pyenv's runs a bash script and two dozen processes, about 0.1 s of CPU, per call.
    It is this interpreter without the project's site-packages (a bare venv: its pyvenv.cfg names no
    packages): the venv's own python3 runs setuptools' editable-install finder at every start (pathlib, re,
    importlib.util: a start costs 26 ms of CPU instead of 11), and those checks need only the stdlib."""
    if os.name != "posix":
        yield
        return
    bin_dir = tmp_path_factory.mktemp("python3-bin")
    base = Path(os.path.realpath(sys.executable))
    (bin_dir / "python3").symlink_to(base)
    (bin_dir / "pyvenv.cfg").write_text(f"home = {base.parent}\ninclude-system-site-packages = false\n")
    before = os.environ.get("PATH", "")
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{before}"
    yield
    os.environ["PATH"] = before


@pytest.fixture(autouse=True)
def demo_deck(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo agent draws each run on its own since issue 22; the tests written for its old blocks
    of ten (exactly 8/10 or 9/10 per ten runs, and the TUI snapshots) keep them through
    $SCARBOOK_DEMO_DRAWS. tests/agents/test_demo unsets it to test the independent draws."""
    monkeypatch.setenv("SCARBOOK_DEMO_DRAWS", "deck")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProjectDir:
    """An empty project (scarbook.yaml with the seeded demo agent, an empty cases/) in tmp_path."""
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")
    root = tmp_path / "proj"
    (root / "cases").mkdir(parents=True)
    p = ProjectDir(root)
    p.config(DEFAULT_CONFIG)
    return p


@pytest.fixture(params=["epoll-pidfd", "portable"])
def spawn_mode(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test on both ways of running a program: Linux's epoll + pidfd, and asyncio's own
    subprocess transports (what macOS and Windows use), forced with SCARBOOK_PORTABLE_SPAWN."""
    if request.param == "portable":
        monkeypatch.setenv("SCARBOOK_PORTABLE_SPAWN", "1")
    else:
        from scarbook.proc.spawn import fast_path_available

        monkeypatch.delenv("SCARBOOK_PORTABLE_SPAWN", raising=False)
        if not fast_path_available():
            pytest.skip("no epoll/pidfd on this system")
    return request.param


def pytest_xdist_auto_num_workers(config) -> int | None:
    """`-n auto` (pyproject.toml's addopts): for the whole suite, two xdist workers per CPU this process may
    use (at most 4 more than the CPUs: each worker imports and collects the whole suite, ~5 s of CPU). A
    worker waits much of its time (Textual's Pilot waits for the app to go idle after each key; agents,
    Ray and judge servers are other processes). On 2 CPUs, fresh checkout, quiet machine: 3 workers took
    148 s, 4 took 136 s, 5 took 139 s. A run that names test files or tests (not folders) stays in one
    process: each worker imports and collects on its own, which costs a focused run more than it saves.
    `-n N`, or PYTEST_XDIST_AUTO_NUM_WORKERS=N, spreads such a run anyway."""
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    if config.args_source is pytest.Config.ArgsSource.ARGS and not any(
            Path(arg.split("::")[0]).is_dir() for arg in config.args):
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus + min(cpus, 4)


class _AloneLock:
    """Under pytest-xdist, a test can have stretches during which no other test of the run runs: for
    tests that watch state the whole machine shares (scarbook's sweep of stale processes at each session
    start). Every test holds `run.lock` shared; `alone()` takes it exclusively. A worker takes `gate.lock`
    before either, so one waiting for `alone()` is not starved by the others starting new tests: it waits
    for the tests running now to end, no longer."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.run = self.gate = None

    def __enter__(self) -> _AloneLock:
        if self.folder is not None:
            import fcntl

            self.gate = open(self.folder / "gate.lock", "a")  # noqa: SIM115 (held across the test)
            self.run = open(self.folder / "run.lock", "a")  # noqa: SIM115
            fcntl.flock(self.gate, fcntl.LOCK_EX)
            fcntl.flock(self.run, fcntl.LOCK_SH)
            fcntl.flock(self.gate, fcntl.LOCK_UN)
        return self

    def __exit__(self, *exc: object) -> None:
        for fh in (self.run, self.gate):
            if fh is not None:
                fh.close()  # (closing releases its lock)

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        if self.run is None or self.gate is None:
            yield
            return
        import fcntl

        fcntl.flock(self.run, fcntl.LOCK_UN)  # first: two workers in alone() must not wait on each other
        fcntl.flock(self.gate, fcntl.LOCK_EX)
        fcntl.flock(self.run, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self.run, fcntl.LOCK_SH)
            fcntl.flock(self.gate, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _run_lock(tmp_path_factory) -> Iterator[_AloneLock]:
    folder = None
    if os.environ.get("PYTEST_XDIST_WORKER") and os.name == "posix":
        folder = tmp_path_factory.getbasetemp().parent  # (the workers share it)
    with _AloneLock(folder) as lock:
        yield lock


@pytest.fixture
def alone(_run_lock: _AloneLock) -> Callable[[], contextlib.AbstractContextManager[None]]:
    """`with alone():` — the block runs while no other test of the run does (see _AloneLock)."""
    return _run_lock.alone


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol():
    """After each test (its teardown done), its garbage is collected and what outlives it is frozen out of
    the collector's scans (gc.freeze). Python's full collections scan every tracked object, and a test
    process holds ever more that live on (every imported module, Textual's global caches of rendered
    strips: ~190,000 objects after 30 TUI tests): one full collection took ~0.1 s of CPU and ran every
    few hundred keys, a third of the TUI tests' CPU. Frozen, the collections scan only what the running
    test made. What a test leaves alive lives on as before; only a cycle it later drops is not freed."""
    yield
    gc.collect()
    gc.freeze()


def pytest_configure(config) -> None:
    from tests.helpers.textual_speed import paint_when_looked_at, share_parsed_css, shorter_idle_waits

    share_parsed_css()
    shorter_idle_waits()
    paint_when_looked_at()
    # The collector's young collections every 20,000 allocations instead of 700: with what outlives each test
    # frozen (pytest_runtest_protocol above) and its garbage collected after it, the collections during a test
    # find little to free. Measured with gc.callbacks over 50 TUI, stats and CLI tests in one process: 4.3 s
    # of 33.6 s CPU in the collector at Python's default thresholds, 1.5-2.6 s of 25-31 s at these.
    gc.set_threshold(20_000, 20, 20)


def pytest_collection_finish(session) -> None:
    """What collection imported (the test modules, scarbook, the libraries they name: ~370,000 objects) is frozen
    out of the collector's scans at once, as pytest_runtest_protocol freezes what outlives each test: else the
    first full collection after it, the five pytest runs at the end of a session and the interpreter's own at
    exit each scan it all (~0.2 s of CPU apiece; 1.8 s of a `--collect-only` run's 5.6). What was imported by
    then is noted for tests/core/test_collection_imports.py."""
    note_collection_imports()
    gc.freeze()


def pytest_collection_modifyitems(config, items) -> None:
    """Tests marked needs_proc read /proc (Linux); elsewhere they are skipped, not failed. An xdist_group
    (the Ray tests: minutes on one worker) goes first, so the other workers share the rest meanwhile
    instead of waiting for it at the end."""
    items.sort(key=lambda item: item.get_closest_marker("xdist_group") is None)  # stable: otherwise in order
    if os.path.isdir("/proc/self"):
        return
    skip = pytest.mark.skip(reason="needs /proc (Linux)")
    for item in items:
        if "needs_proc" in item.keywords:
            item.add_marker(skip)


_TERMINAL_SUMMARIES: list[str] = []


def pytest_runtest_logreport(report) -> None:
    """A test may hand a text to the end of the run's output with
    `record_property("terminal_summary", text)` (the corpus table's totals); the user properties travel
    from xdist workers to the process that prints."""
    if report.when == "call":
        _TERMINAL_SUMMARIES.extend(str(value) for name, value in report.user_properties if name == "terminal_summary")


def pytest_terminal_summary(terminalreporter) -> None:
    for text in _TERMINAL_SUMMARIES:
        title, _, body = text.partition("\n")
        terminalreporter.write_sep("-", title)
        terminalreporter.write_line(body)


# a dead xdist worker ends the run with a failure that says why, never a hang (tests/helpers/dead_workers.py)
from tests.helpers.dead_workers import (  # noqa: E402, F401
    pytest_handlecrashitem,
    pytest_timeout_set_timer,
    pytest_xdist_make_scheduler,
)
from tests.helpers.inprocess_demo import inprocess_demo  # noqa: E402, F401  (the fixture, for every test module)
from tests.helpers.precompile import pytest_sessionstart  # noqa: E402, F401  (the test modules compiled once, first)
