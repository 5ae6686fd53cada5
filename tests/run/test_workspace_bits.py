"""An agent that takes its own workspace's bits away (chmod 0 .) cannot turn a run it failed into an infra
error. scarbook made that folder and owns it: it gives itself read, write and search on it back (that
folder, by its inode, never through a link) and reads what the agent left. Before, a scarbook bound by the
file bits (not root, as on CI; setpriv drops the override when the tests run as root) could not diff the
workspace: 'could not diff the workspace: Permission denied', cause infra, retried (the agent ran again at
the user's expense), then an error, exit 3 instead of 1. Real agent processes, unconfined and sandboxed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.hostile_project import eval_bound_by_file_bits, inline_agent

AGENT = """
import os
k = int(os.environ["SCARBOOK_RUN"])
open("out.txt", "w").write("BAD\\n" if k == 1 else "GOOD\\n")
os.chmod(".", 0 if k == 1 else 0o100)  # nothing at all; search only
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_workspace_the_agent_closed_is_read_all_the_same(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: not_contains, path: out.txt, text: BAD}\n",
                 extra="retry_infra: 1\nconcurrency: 1\n")
    done, runs = eval_bound_by_file_bits(project, 2)
    assert [(r["status"], r["reason"]) for r in runs] == [
        ("fail", "check 1 (not_contains): out.txt contains 'BAD' at line 1 but must not"),
        ("pass", "all checks passed"),
    ], done.stderr
    assert runs[0]["cause"]["kind"] == "agent" and len(runs[0]["attempts"]) == 1  # not retried
    assert not Path(runs[1]["workspace"]).exists()  # the passing run's folder was pruned as usual
    assert done.returncode == 1, done.stdout + done.stderr
