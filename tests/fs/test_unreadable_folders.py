"""A folder the agent made that scarbook cannot enter is a change in its run's diff, never a hiding place and
never a run error. The agent owns its workspace (unconfined, and sandboxed: the same user), so it can take
the x bit off a folder: scarbook (not root, or root without CAP_DAC_OVERRIDE, as on a CI runner) then lists
the folder's names but cannot stat or open them. Before, safefs.walk dropped a sub-folder it could not open
(only_changed passed with a forbidden file inside), and raised on a seeded file it could not stat (an
infra error, retried, exit 3 instead of 1). Real agent processes, whole sessions run by a scarbook that
holds no DAC override (setpriv drops it when the tests run as root)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.hostile_project import eval_bound_by_file_bits, inline_agent, without_dac_override

AGENT = """
import os
k = int(os.environ["SCARBOOK_RUN"])
open("out.txt", "w").write("done")
if k == 1:  # a forbidden file one folder down in a folder scarbook can list but not enter
    os.makedirs("d/sub")
    open("d/sub/forbidden.txt", "w").write("x")
    os.chmod("d", 0o400)
else:  # a seeded file changed, its folder then closed the same way
    open("src/a.py", "a").write("# changed\\n")
    os.chmod("src", 0o400)
"""


@pytest.mark.parametrize("isolation", ["none", "sandbox"])
def test_a_folder_scarbook_cannot_enter_is_a_change_not_a_hiding_place_or_an_error(project, isolation) -> None:
    inline_agent(project, AGENT, isolation, "  - {type: only_changed, paths: [out.txt]}\n",
                 seed={"src/a.py": "print(1)\n"}, extra="retry_infra: 0\nconcurrency: 1\n")
    done, runs = eval_bound_by_file_bits(project, 2)
    assert [(r["status"], r["reason"]) for r in runs] == [
        ("fail", "check 1 (only_changed): changed outside the allowed list: created d/sub"),
        ("fail", "check 1 (only_changed): changed outside the allowed list: modified src/a.py"),
    ], done.stderr
    assert [r["cause"]["kind"] for r in runs] == ["agent", "agent"]
    assert done.returncode == 1, done.stdout + done.stderr
    for k in (1, 2):  # let pytest clean up as a user without the override would have to
        for folder in Path(runs[k - 1]["workspace"]).rglob("*"):
            if folder.is_dir():
                folder.chmod(0o755)


WALK = """
import json, sys
from scarbook.fs import safefs
safefs.MODE = sys.argv[2]
print(json.dumps(sorted((rel, st is None) for rel, st in safefs.walk(sys.argv[1], look=lambda rel: True).items())))
"""


@pytest.mark.parametrize("mode", ["dirfd", "portable"])
def test_walk_lists_what_it_cannot_enter_or_stat_as_entries(tmp_path, mode) -> None:
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "hidden.txt").write_text("x")
    (tmp_path / "d" / "seen.txt").write_text("x")
    (tmp_path / "shut").mkdir()
    (tmp_path / "shut" / "inside.txt").write_text("x")
    (tmp_path / "top.txt").write_text("x")
    (tmp_path / "d").chmod(0o400)  # listed, not entered: its names, none of their stats
    (tmp_path / "shut").chmod(0)  # neither
    try:
        done = subprocess.run(without_dac_override([sys.executable, "-c", WALK, str(tmp_path), mode]),
                              capture_output=True, text=True, timeout=60)
    finally:
        (tmp_path / "d").chmod(0o755)
        (tmp_path / "shut").chmod(0o755)
    assert done.returncode == 0, done.stderr  # (it raised PermissionError on d/seen.txt)
    # (d/sub was left out, with what it holds: the portable walk left out shut too)
    assert json.loads(done.stdout) == [["d/seen.txt", True], ["d/sub", True], ["shut", mode == "portable"],
                                       ["top.txt", False]]
