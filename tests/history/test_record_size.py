"""A run record keeps the first names of each kind of change (models/run.KEPT_NAMES) and counts the rest: an agent
that leaves 200,000 files made a 42 MB line in history. The checks ran on the whole list before it was cut."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.only_changed_run import only_changed_run

KEPT_NAMES = 500  # models/run.KEPT_NAMES

FILES = 20_000
AGENT = f"""\
for i in range({FILES}):
    open(f"{{i:05d}}.txt", "w").close()
open("tmp.txt", "w").write("ok")
"""


def test_a_run_that_leaves_many_files_is_recorded_small_saying_how_many_were_left_out(project, tmp_path: Path) -> None:
    """Before: the line held every one of the 20,001 names (over 240 KB here; 42 MB for 200,000 files)."""
    run, reported = only_changed_run(project, AGENT, tmp_path / "r.json", "timeout_s: 120\n")
    (line,) = (project.workspaces / "history").glob("*/runs-c.jsonl")
    assert len(line.read_bytes()) < 16_000  # 7,365 bytes when measured
    kept = [f"{i:05d}.txt" for i in range(KEPT_NAMES)]
    assert (run.diff.created, run.diff.left_out) == (kept, {"created": FILES + 1 - KEPT_NAMES})
    # the check ran on every name: the first five outside the allowed list, and more
    assert run.checks[0].detail == ("changed outside the allowed list: created 00000.txt, 00001.txt, 00002.txt, "
                                    "00003.txt, 00004.txt …")
    assert reported["diff"] == {"created": kept, "modified": [], "deleted": [], "left_out": {"created": 19_501}}
    shown = project.cli("show", "c").output.splitlines()
    assert f"  diff: created {', '.join(kept)}; and 19,501 more created files not kept (a run's record keeps the " \
           "first 500 names of each)" in shown
    assert project.cli("report", "--html", str(tmp_path / "r.html")).exit_code == 0
    assert ("<li>… and 19,501 more created files not kept (a run&#x27;s record keeps the first 500 names of "
            "each)</li>") in (tmp_path / "r.html").read_text()
