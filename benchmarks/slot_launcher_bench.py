"""What would bring the sandbox under 1.5x `isolation: none` (issue 38): a run's sandbox made inside a long-lived
one, by a small compiled launcher, against one bwrap per run. A prototype (C, compiled here with `cc`), not
scarbook's.

    .venv/bin/python benchmarks/slot_launcher_bench.py              # 300 runs a configuration, 3 rounds
    .venv/bin/python benchmarks/slot_launcher_bench.py --runs 1000 --rounds 5

benchmarks/bwrap_cost_bench.py shows where one bwrap per run goes: its mount work (it reads
/proc/self/mountinfo whole after every bind), not its namespaces. benchmarks/sandbox_slot_bench.py tried one
sandbox per concurrency slot with a launcher in Python, and saved nothing: its fork and protocol cost as much
as bwrap's mounts. Here the launcher is C and builds each run's view with the new mount API (open_tree +
move_mount: no mountinfo read). It runs inside scarbook's own bwrap line (started once, `--cap-add ALL`:
capabilities in the sandbox's user namespace only) and does, per run, what that line does per run:

- `ns`: clone(NEWNS | NEWPID | NEWIPC): the run's PID 1, which forks and execs the program (setsid) and waits;
- `ns+proc`: and mounts the PID namespace's own /proc;
- `full`: and /proc/sys, sysrq-trigger, irq and bus read-only, fresh tmpfs over /tmp, the home folder and
  /dev/shm, the interpreter's folder shown again under the home (cloned before it is covered), a fresh tmpfs
  over workspaces/ holding only the run's folder and its transcript and usage files (clones), made read-only,
  and the bounding capability set dropped before the exec.

Against: `bare` (fork + exec of the same program by the same C loop) and `bwrap per run` (fork + exec of
scarbook's bwrap line around the program; the loop is a subreaper and reaps the sandboxes' PID 1s, so their
CPU is counted). CPU is the loop's getrusage (itself and every process it reaped), a run: the same way for
every configuration. Rounds interleave them; each figure is the median over rounds.

What this prototype leaves out of a product: the slot's start (once a session and slot), handing a run's
folder to a running slot (an fd of the session folder opened before it is hidden; open_tree relative to it),
the exit status protocol, and the audit of a launcher that holds capabilities (in the slot's user namespace)
while a hostile agent runs beside it. Runs of one slot share its network, UTS, cgroup and user namespaces
one after another (each run's processes are gone before the next starts: its PID namespace).

Measured (2-core shared VM at a load of 13-20, root, 300 runs a configuration, 3 rounds, 2026-12-05): bare
0.67 ms CPU a run; one bwrap per run 5.89 ms (8.8x, +5.2 ms); the slot launcher's namespaces 0.93 ms (+0.26),
with /proc 0.94 (+0.27), everything scarbook's line does per run 1.30 ms (1.9x, +0.63 ms): an eighth of
bwrap's per-run cost. At 1,000 runs of process_bench's agent, `isolation: none` spends ~5.5 ms of CPU a run,
so +0.6 ms would put the sandbox near 1.1x none, where one bwrap per run (+5.2-6.3 ms) puts it at 2x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarbook.agents.sandbox import Sandbox, find_bwrap  # noqa: E402

LAUNCHER_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#define OPEN_TREE_CLONE_ 1
#define MOVE_MOUNT_F_EMPTY_PATH_ 4
#define MOUNT_FLAGS (MS_NOSUID | MS_NODEV)

/* argv: N MODE PROG WORKSPACE TRANSCRIPT USAGE PRIVATE RESHOW HIDDEN... | N spawn ARGV... */
static int mode; static char **arg;
static int args;
static char stack[1 << 16];

static int die(const char *what) { perror(what); return 90; }
static void mkdirs(const char *path) {
    char p[PATH_MAX]; snprintf(p, sizeof p, "%s", path);
    for (char *c = p + 1; *c; c++) if (*c == '/') { *c = 0; mkdir(p, 0755); *c = '/'; }
    mkdir(p, 0755);
}
static int clone_of(const char *path) { return syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE_ | O_CLOEXEC); }
static int put(int tree, const char *at) {
    int r = syscall(SYS_move_mount, tree, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH_); close(tree); return r;
}
static int pid1(void *unused) {
    (void)unused;
    const char *prog = arg[3];
    if (mode >= 1 && mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) return die("private");
    if (mode >= 2 && mount("proc", "/proc", "proc", MOUNT_FLAGS | MS_NOEXEC, NULL)) return die("proc");
    if (mode >= 3) {
        const char *ws = arg[4], *tr = arg[5], *us = arg[6], *private = arg[7], *reshow = arg[8];
        static const char *cover[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};
        for (int i = 0; i < 4; i++)
            if (!mount(cover[i], cover[i], NULL, MS_BIND | MS_REC, NULL)
                && mount("none", cover[i], NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MOUNT_FLAGS, NULL)) return die("cover");
        int t_ws = clone_of(ws), t_tr = clone_of(tr), t_us = clone_of(us), t_re = clone_of(reshow);
        if (t_ws < 0 || t_tr < 0 || t_us < 0 || t_re < 0) return die("open_tree");
        for (int i = 9; i < args; i++)
            if (mount("tmpfs", arg[i], "tmpfs", MOUNT_FLAGS, "mode=0755")) return die(arg[i]);
        if (mount("tmpfs", "/dev/shm", "tmpfs", MOUNT_FLAGS, "mode=1777")) return die("/dev/shm");
        mkdirs(reshow);
        if (put(t_re, reshow)) return die("reshow");
        if (mount("tmpfs", private, "tmpfs", MOUNT_FLAGS, "mode=0755")) return die("private tmpfs");
        mkdirs(ws);
        close(open(tr, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        close(open(us, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        if (put(t_ws, ws) || put(t_tr, tr) || put(t_us, us)) return die("move_mount");
        if (mount("none", private, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MOUNT_FLAGS, NULL)) return die("ro");
        for (int c = 0; c <= 63; c++) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
    }
    pid_t p = fork();
    if (p == 0) { setsid(); execl(prog, prog, (char *)NULL); _exit(127); }
    int st; waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}
int main(int argc, char **argv) {
    int n = atoi(argv[1]); arg = argv; args = argc;
    if (!strcmp(argv[2], "spawn")) {
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for (int i = 0; i < n; i++) {
            pid_t c = fork();
            if (c == 0) { execv(argv[3], argv + 3); _exit(127); }
            int st; waitpid(c, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "run %d: status %x\n", i, st); return 1; }
            while (waitpid(-1, &st, 0) > 0) ;  /* the sandbox's PID 1, handed to this subreaper */
        }
    } else {
        mode = atoi(argv[2]);
        int flags = SIGCHLD | (mode >= 1 ? CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC : 0);
        for (int i = 0; i < n; i++) {
            pid_t c = clone(pid1, stack + sizeof stack, flags, NULL);
            if (c < 0) return die("clone");
            int st; waitpid(c, &st, 0);
            if (!WIFEXITED(st) || WEXITSTATUS(st)) { fprintf(stderr, "run %d: status %x\n", i, st); return 1; }
        }
    }
    struct rusage me, kids;
    getrusage(RUSAGE_SELF, &me); getrusage(RUSAGE_CHILDREN, &kids);
    double s = me.ru_utime.tv_sec + me.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec
             + (me.ru_utime.tv_usec + me.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
    printf("%f\n", s * 1000 / n);
    return 0;
}
"""

MODES = {"ns": "1", "ns+proc": "2", "full": "3"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    bwrap, cc = find_bwrap(), shutil.which("cc") or shutil.which("gcc")
    if sys.platform != "linux" or bwrap is None or cc is None:
        print("needs Linux, bwrap and a C compiler (cc)")
        return 2
    work = Path(tempfile.mkdtemp(prefix="slot-launcher-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        (work / "launcher.c").write_text(LAUNCHER_C)
        launcher = str(work / "launcher")
        subprocess.run([cc, "-O2", "-o", launcher, str(work / "launcher.c")], check=True)
        ws = work / "workspaces" / "s" / "c" / "0"
        ws.mkdir(parents=True)
        files = tuple(str(ws.parent / name) for name in ("0.transcript.jsonl", "0.usage.jsonl"))
        for f in files:
            Path(f).touch()
        box = Sandbox(bwrap, work, private=(str(work / "workspaces"),))
        prog = shutil.which("true") or "/bin/true"
        reshow = sys.base_prefix  # under a hidden home when Python lives there (pyenv), else shown already
        per_run = box.wrap([prog], ws, files)
        line = box.wrap([launcher], ws, files)
        cut = line.index("--ro-bind")
        inside = [*line[:cut], "--cap-add", "ALL", *line[cut:line.index("--") + 1]]
        configs = {"bare": [launcher, str(opts.runs), "spawn", prog],
                   "bwrap per run": [launcher, str(opts.runs), "spawn", *per_run]}
        for name, mode in MODES.items():
            configs[f"slot launcher: {name}"] = [*inside, launcher, str(opts.runs), mode, prog, str(ws), *files,
                                                 str(work / "workspaces"), reshow, *box.hidden]
        got: dict[str, list[float]] = {}
        for r in range(opts.rounds):
            for name, argv in (configs.items() if r % 2 == 0 else list(configs.items())[::-1]):
                out = subprocess.run(argv, capture_output=True, text=True, cwd=work)
                if out.returncode != 0:
                    sys.exit(f"{name} failed: {out.stderr.strip()}")
                got.setdefault(name, []).append(float(out.stdout.split()[-1]))
        one, five, _ = os.getloadavg()
        print(f"{opts.runs} runs of {prog} a configuration, one at a time, {opts.rounds} rounds (load {one:.1f}, "
              f"5 min {five:.1f}, {os.cpu_count()} cores; uid {os.geteuid()}; {bwrap})")
        bare = statistics.median(got["bare"])
        for name, values in got.items():
            cpu = statistics.median(values)
            print(f"  {name:<28} {cpu:6.2f} ms CPU a run  {cpu / bare:5.2f}x bare  (+{cpu - bare:5.2f} ms)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
