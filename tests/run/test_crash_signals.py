"""An agent that dies of a signal its own code raised (SIGSEGV, SIGABRT: a crash, or os.abort()) failed; only a
signal from outside (SIGKILL, SIGTERM: the OOM killer, a person) is the machine's. Before, every signal was
infra: the run ran again and, still crashing, ended an error — out of the rate's denominator — so an agent
that knew a run went wrong could os.abort() to lift its rate (3 passes + 2 errors read 100% where 3/5 is 60%)
and a segfaulting agent was blamed on the machine. A crash whose stderr shows the machine's sign (C++'s
std::bad_alloc before abort) stays infra. Real agent processes, unconfined and sandboxed (where bwrap reports
the signal as 128+N)."""

from __future__ import annotations

import pytest

from tests.helpers.hostile_project import eval_json, inline_agent

AGENT = """
import os, signal, sys
k = int(os.environ["SCARBOOK_RUN"])
open("out.txt", "w").write("GOOD" if k <= 3 else "BAD")
if k == 4:
    os.abort()
if k == 5:
    os.kill(os.getpid(), signal.SIGSEGV)
if k == 6:
    sys.stderr.write("terminate called after throwing an instance of 'std::bad_alloc'\\n")
    sys.stderr.flush()
    os.abort()
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_crash_of_the_agents_own_is_its_fail_not_the_machines(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: not_contains, path: out.txt, text: BAD}\n",
                 extra="retry_infra: 1\nthreshold: 0.9\n")
    result, doc, runs = eval_json(project, 6)
    said = [(r["status"], r["cause"] and (r["cause"]["kind"], r["cause"]["rule"], r["cause"]["evidence"]),
             len(r["attempts"])) for r in runs[3:]]
    assert said == [
        ("fail", ("agent", "agent-crashed", "killed by signal 6 (SIGABRT), which its own code raised: the agent crashed"),
         1),
        ("fail", ("agent", "agent-crashed", "killed by signal 11 (SIGSEGV), which its own code raised: the agent "
                                            "crashed"), 1),
        ("error", ("infra", "out-of-memory", "stderr: terminate called after throwing an instance of 'std::bad_alloc'"),
         2),
    ]  # ('error', infra killed-by-signal, 2 attempts) for the first two before
    assert [r["status"] for r in runs[:3]] == ["pass"] * 3
    (case,) = doc["cases"]
    assert (case["passes"], case["fails"], case["errors"]) == (3, 2, 1)  # (3, 0, 3) before: 100%
    assert result.exit_code == 3  # run 6's infra error leaves the session without a verdict (as before)
