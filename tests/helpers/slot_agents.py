"""Hostile agents for the sandbox slot tests (tests/agents/test_slot*.py), run through `scarbook eval`.

`slot_project` writes agent.py, which plays the role roles[$SCARBOOK_RUN] (a run number -> a name below) with
its stdout going to result.json in its workspace; a role's JSON is what it saw or did. With `-j 1` one slot
serves every run in order, so a probe after a hostile run shows what that run left for the next one.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

# the syscalls Python has no call for, by architecture (as scarbook/proc/slot_launcher.py)
CALLS = {"x86_64": {"add_key": 248, "keyctl": 250}, "aarch64": {"add_key": 217, "keyctl": 219}}

# SLOT, given to every role: which slot ran the run, its PID namespace (one per slot; one per run where each run
# gets a bwrap of its own) and its PID 1's start time (a namespace's number is used again once it is gone)

# every place a run could write: /tmp, home, /dev and its tmpfs, every rw mount but the run's own view (its folder,
# the io files beside it, and what holds them: made for each run, covering the launcher's writable workspaces/)
WRITABLE = """\
import os
mine = os.path.dirname(os.getcwd()) + "/"
ROOTS = ["/tmp", os.environ["HOME"], "/dev", "/dev/shm", "/dev/mqueue"]
for line in open("/proc/self/mountinfo"):
    f = line.split()
    if "rw" in f[5].split(",") and not f[4].startswith(("/proc", "/sys", mine)) and not mine.startswith(f[4] + "/"):
        ROOTS.append(f[4])
ROOTS = list(dict.fromkeys(ROOTS))
"""


DISPATCH = """\
import json, os, sys
roles = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "roles.json")))
role = roles.get(os.environ["SCARBOOK_RUN"], "plain")
code = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "roles", role + ".py")).read()
if role in ("probe", "hostile"):
    code = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "roles", "writable.py")).read() + code
sys.stdout = open("result.json", "w")
sys.argv = [role]
exec(compile(code, role, "exec"), {"__name__": "__main__", "ADD_KEY": %(add_key)d, "KEYCTL": %(keyctl)d,
                                    "SLOT": os.readlink("/proc/self/ns/pid") + "@" + open("/proc/1/stat").read().rsplit(")", 1)[1].split()[19]})
sys.stdout.flush()
"""

ROLES = {
    "plain": r"""
import json, os
print(json.dumps({"cwd": os.getcwd(), "pid": os.getpid(), "workspace": os.environ.get("SCARBOOK_WORKSPACE"),
                  "slot": SLOT, "pid1": open("/proc/1/comm").read().strip()}))
""",
    # what a run can see of what runs before it left: files and attributes of every writable place, SysV, keys,
    # sockets, processes, the launcher's nice value
    "probe": r"""
import ctypes, json, os, socket
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
seen = {"procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())),
        "pid": os.getpid(), "cwd": os.getcwd(), "roots": {}, "slot": SLOT}
for r in ROOTS:
    st = os.lstat(r)
    if not os.path.isdir(r):
        seen["roots"][r] = [oct(st.st_mode)]
        continue
    try:
        attrs = sorted(os.listxattr(r))
    except OSError:
        attrs = []
    seen["roots"][r] = [oct(st.st_mode), st.st_mtime_ns, attrs, sorted(os.listdir(r))]
seen["sysv"] = {kind: open(f"/proc/sysvipc/{kind}").read().splitlines()[1:] for kind in ("shm", "msg", "sem")}
seen["keys"] = [libc.syscall(KEYCTL, 10, ctypes.c_long(r), b"user", n, 0) > 0
                for r in (-3, -4, -5) for n in (b"scar", b"scar-p")]
p = libc.syscall(KEYCTL, 22, -1, ctypes.c_long(-3))
seen["persistent"] = p >= 0 and libc.syscall(KEYCTL, 10, ctypes.c_long(p), b"user", b"scar-p", 0) > 0
for name, addr, fam in (("abstract", "\0scar-abstract", socket.AF_UNIX), ("tcp", ("127.0.0.1", 47311), socket.AF_INET)):
    s = socket.socket(fam)
    seen[name] = s.connect_ex(addr)
seen["unix-names"] = [l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:] if "scar" in l]
seen["mq"] = sorted(os.listdir("/dev/mqueue"))
seen["nice1"] = open("/proc/1/stat").read().rsplit(")", 1)[1].split()[16]
print(json.dumps(seen))
""",
    # leaves all it can: files, folders, attributes and modes in every writable place, SysV objects, a POSIX
    # queue, keys in every keyring, and a setsid double-forked daemon holding sockets and the shm segment
    "hostile": r"""
import ctypes, json, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
rt = ctypes.CDLL("librt.so.1", use_errno=True)
done = {}
done["mq"] = rt.mq_open(b"/scar", os.O_CREAT | os.O_RDWR, ctypes.c_uint(0o600), None) >= 0 or ctypes.get_errno()
for r in ROOTS:
    st = os.lstat(r)
    if not os.path.isdir(r):  # a device node: changed to what it is (a no-op that must still be refused)
        for what, act in (("chmod", lambda: os.chmod(r, st.st_mode & 0o7777)),
                          ("utime", lambda: os.utime(r, ns=(st.st_atime_ns, st.st_mtime_ns))),
                          ("chown", lambda: os.chown(r, st.st_uid, st.st_gid))):
            try:
                act(); done.setdefault("nodes", {}).setdefault(r, []).append(what)
            except OSError:
                pass
        continue
    for what, act in (("file", lambda: open(r + "/scar-left", "w").write("x")),
                      ("dir", lambda: os.mkdir(r + "/scar-dir", 0)),
                      ("xattr", lambda: os.setxattr(r, "user.scar", b"1")),
                      ("utime", lambda: os.utime(r, (12345, 12345))),
                      ("chmod", lambda: os.chmod(r, 0o555))):
        try:
            act(); done.setdefault(r, []).append(what)
        except OSError:
            pass
done["shm"] = libc.shmget(0x5ca4, 4096, 0o1600)
done["msg"] = libc.msgget(0x5ca4, 0o1600)
done["sem"] = libc.semget(0x5ca4, 1, 0o1600)
for ring in (-3, -4, -5):
    done[f"key{ring}"] = libc.syscall(ADD_KEY, b"user", b"scar", b"x", 1, ctypes.c_long(ring))
p = libc.syscall(KEYCTL, 22, -1, ctypes.c_long(-3))
done["persistent"] = p >= 0 and libc.syscall(ADD_KEY, b"user", b"scar-p", b"x", 1, ctypes.c_long(p))
sys.stdout.flush()
if os.fork() == 0:  # a daemon: setsid and a double fork, holding sockets and the shm segment
    os.setsid()
    if os.fork() == 0:
        a = socket.socket(socket.AF_UNIX); a.bind("\0scar-abstract"); a.listen()
        t = socket.socket(); t.bind(("127.0.0.1", 47311)); t.listen()
        libc.shmat(done["shm"], None, 0)
        time.sleep(300)
    os._exit(0)
time.sleep(0.2)
done["slot"] = SLOT
print(json.dumps(done))
""",
    # signals, ptrace and /proc reads at the launcher (PID 1), its mount namespace, and the hostname the slot's runs
    # share
    "at-launcher": r"""
import ctypes, json, os, signal, socket, time
libc = ctypes.CDLL(None, use_errno=True)
got = {}
for s in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGSEGV", "SIGABRT", "SIGKILL", "SIGSTOP"):
    try:
        os.kill(1, getattr(signal, s)); got[s] = "sent"
    except OSError as e:
        got[s] = e.strerror
time.sleep(0.2)
got["state"] = [l for l in open("/proc/1/status") if l.startswith("State")][0].split()[1]
for name, req in (("ptrace-attach", 16), ("ptrace-seize", 0x4206)):
    got[name] = "attached" if libc.ptrace(req, 1, None, None) == 0 else os.strerror(ctypes.get_errno())
for path in ("/proc/1/environ", "/proc/1/mem", "/proc/1/fd/0", "/proc/1/fdinfo/0", "/proc/1/cwd", "/proc/1/root",
             "/proc/1/ns/mnt"):
    try:
        if path.endswith(("/0", "cwd", "root")) and "fdinfo" not in path:
            os.readlink(path)
        else:
            open(path, "rb").read(1)
        got[path] = "read"
    except OSError as e:
        got[path] = e.strerror
try:
    socket.sethostname("scar"); got["hostname"] = "changed"
except OSError as e:
    got["hostname"] = e.strerror
got["slot"] = SLOT
print(json.dumps(got))
""",
    # renices its launcher (refused: the launcher holds capabilities the run has not) and lowers its limits
    "lower-launcher": r"""
import json, os, resource
got = {}
try:
    os.setpriority(os.PRIO_PROCESS, 1, 7); got["renice"] = "reniced"
except OSError as e:
    got["renice"] = e.strerror
try:
    soft, hard = resource.prlimit(1, resource.RLIMIT_NOFILE)
    resource.prlimit(1, resource.RLIMIT_NOFILE, (soft - 1, hard - 1)); got["prlimit"] = "lowered"
except OSError as e:
    got["prlimit"] = e.strerror
print(json.dumps(got))
""",
    # 40 fork-and-exit chains (a new pid every moment) and 20 breeders, racing the launcher's kill
    "fork-race": r"""
import os, time
def chain():
    while True:
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            time.sleep(0.001)
def breeder(n):
    for _ in range(n):
        try:
            if os.fork() == 0:
                return breeder(n - 1)
        except OSError:
            pass
    time.sleep(300)
for i in range(60):
    if os.fork() == 0:
        os.setsid()
        chain() if i < 40 else breeder(3)
        os._exit(0)
time.sleep(0.3)
print("{}")
""",
    # what of the host and of other runs it can see, whether it can move, replace or unmount what holds its folder,
    # and which capabilities it has
    "peek": r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
ws = os.getcwd()
case = os.path.dirname(ws); session = os.path.dirname(case); root = os.path.dirname(session)
got = {"cwd": ws, "workspace": os.environ["SCARBOOK_WORKSPACE"], "workspaces": sorted(os.listdir(root)),
       "session": sorted(os.listdir(session)), "case": sorted(os.listdir(case)), "tmp": sorted(os.listdir("/tmp")),
       "caps": {l.split(":")[0]: l.split()[1] for l in open("/proc/self/status") if l.startswith("Cap")}}
def syscall(r):
    if r != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
for what, act in (("write-beside", lambda: open(case + "/x", "w")),
                  ("rename-own-folder", lambda: os.rename(ws, ws + "-moved")),
                  ("replace-transcript", lambda: os.rename(os.environ["SCARBOOK_TRANSCRIPT"], case + "/t")),
                  ("chmod-case-folder", lambda: os.chmod(case, 0o777)),
                  ("umount-workspaces", lambda: syscall(libc.umount2(root.encode(), 2))),
                  ("umount-own-folder", lambda: syscall(libc.umount2(ws.encode(), 2))),
                  ("new-mount-namespace", lambda: syscall(libc.unshare(0x00020000)))):
    try:
        act(); got[what] = "done"
    except OSError as e:
        got[what] = e.strerror
got["slot"] = SLOT
print(json.dumps(got))
""",
    # a daemon that outlives the timeout unless the slot ends it
    "sleeper": r"""
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
print("{}")
import sys; sys.stdout.flush()
time.sleep(120)
""",
    # says it started (the test kills its launcher then), leaves a daemon and a file, and waits
    "waits": r"""
import os, time
open("kept.txt", "w").write("kept")
if os.fork() == 0:
    os.setsid()
    time.sleep(120)
    os._exit(0)
open("started", "w").close()
time.sleep(120)
""",
    # a folder tree in /tmp deeper than the launcher's Python can walk: the slot cannot be wiped
    "deep": r"""
import os
os.chdir("/tmp")
for _ in range(1500):
    os.mkdir("d")
    os.chdir("d")
print("{}")
""",
    # writes out.txt and says so in its transcript by the absolute path it saw
    "writes-absolute": r"""
import json, os
open("out.txt", "w").write("x")
with open(os.environ["SCARBOOK_TRANSCRIPT"], "a") as fh:
    fh.write(json.dumps({"type": "task", "text": "t"}) + "\n")
    fh.write(json.dumps({"type": "tool_call", "id": "c1", "name": "write_file",
                         "input": {"path": os.path.join(os.getcwd(), "out.txt"), "content": "x"}}) + "\n")
print(json.dumps({"cwd": os.getcwd()}))
""",
    "segv": r"""
import os, signal
os.kill(os.getpid(), signal.SIGSEGV)
""",
}


def slot_project(project, roles: dict[int, str], *, isolation: str = "slot", timeout_s: float = 30,
                 keep: str = "all", checks: str = "", agent_extra: str = "") -> None:
    """agent.py, roles.json and roles/ in the project; scarbook.yaml with the agent, `isolation`, keep: `keep`;
    one case `c` whose checks are that the role wrote result.json, and `checks`."""
    calls = CALLS.get(os.uname().machine, CALLS["x86_64"])
    (project.root / "agent.py").write_text(DISPATCH % calls)
    (project.root / "roles").mkdir(exist_ok=True)
    for name, code in {**ROLES, "writable": WRITABLE}.items():
        (project.root / "roles" / f"{name}.py").write_text(textwrap.dedent(code))
    (project.root / "roles.json").write_text(json.dumps({str(k): v for k, v in roles.items()}))
    project.config(f"agent: {{type: command, argv: [{sys.executable}, {project.root / 'agent.py'}]{agent_extra}}}\n"
                   f"timeout_s: {timeout_s}\nisolation: {isolation}\nkeep: {keep}\n")
    project.case("c", f"id: c\ntask: t\nchecks:\n  - {{type: file_exists, path: result.json}}\n{checks}",
                 {"README.md": "# tiny-agent\n"})


def results(project) -> dict[int, tuple]:
    """k -> (the run record, what its role printed, or None)."""
    history = project.load().history
    (session,) = history.sessions()
    out = {}
    for run in history.runs(session.id):
        path = os.path.join(run.workspace, "result.json")
        try:
            with open(path) as fh:
                said = json.load(fh)
        except (OSError, ValueError):
            said = None
        out[run.k] = (run, said)
    return out
