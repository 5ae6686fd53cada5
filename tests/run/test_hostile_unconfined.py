"""Issue 25 (1, 5): an unconfined agent must not get scarbook to write, delete or read outside
workspaces/ for it. Real agent processes, real files, whole sessions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

PY = sys.executable


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


# Run 1 renames its parent folder (workspaces/<session>/<case>) and puts a link to a folder outside in
# its place. scarbook made runs 2 and 3 in that folder, emptied its 2/ and pruned 1/ there.
SWAP_PARENT = """\
import os, sys
open("tmp.txt", "w").write("x")
if os.environ["SCARBOOK_RUN"] == "1":
    parent = os.path.dirname(os.getcwd())
    os.rename(parent, parent + ".moved")
    os.symlink(sys.argv[1], parent)
"""


def test_a_parent_folder_swapped_for_a_link_makes_the_next_runs_errors_never_writes_outside(project, tmp_path):
    outside = tmp_path / "outside"
    (outside / "1").mkdir(parents=True)
    (outside / "2").mkdir()
    (outside / "1" / "keep.txt").write_text("mine")
    (outside / "2" / "precious.txt").write_text("mine too")
    before = _tree(outside)
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-c', SWAP_PARENT, str(outside)])}}}\n"
                   "isolation: none\nconcurrency: 1\nretry_infra: 0\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: tmp.txt}]\n", {"README.md": "# r\n"})
    result = project.cli("eval", "--runs", "3", "-q")
    assert _tree(outside) == before  # nothing written, emptied or pruned out there
    assert sorted(p.name for p in outside.iterdir()) == ["1", "2"]
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    session_dir = project.workspaces / runs[0].session_id
    assert [(r.k, r.status) for r in runs] == [(1, "error"), (2, "error"), (3, "error")]
    assert runs[0].reason == (f"could not diff the workspace: {session_dir / 'c' / '1'} no longer leads to the "
                              "folder scarbook made for the run (a folder above it was swapped for a link)")
    for r in runs[1:]:
        assert r.reason == (f"could not prepare the workspace {session_dir / 'c' / str(r.k)}: {session_dir / 'c'} "
                            "is a symlink (scarbook does not follow it)")
    assert result.exit_code == 3, result.output
    assert (session_dir / "c.moved" / "1" / "tmp.txt").exists()  # run 1's folder, where the agent moved it


def test_pruning_and_reseeding_never_delete_through_a_swapped_parent(tmp_path):
    from scarbook.fs import safefs
    from scarbook.models import Case
    from scarbook.run.workspace import prepare_workspace, remove_workspace

    outside = tmp_path / "outside"
    (outside / "1").mkdir(parents=True)
    (outside / "2").mkdir()
    (outside / "1" / "keep.txt").write_text("mine")
    (outside / "2" / "precious.txt").write_text("mine too")
    session = tmp_path / "workspaces" / "s1"
    case = Case(id="c", task="t", seed_files={"a/b.txt": "seed"})
    prepare_workspace(case, session / "c" / "1")
    (session / "c").rename(session / "c.moved")
    (session / "c").symlink_to(outside)
    remove_workspace(session / "c" / "1")  # a passing run's folder, pruned
    try:
        prepare_workspace(case, session / "c" / "2")  # the next run's folder, laid fresh
    except safefs.Refused as exc:
        assert str(exc) == f"{session / 'c'} is a symlink (scarbook does not follow it)"
    else:
        raise AssertionError("the next run's folder was laid through the link")
    assert _tree(outside) == {"1/keep.txt": "mine", "2/precious.txt": "mine too"}
    assert _tree(session / "c.moved") == {"1/a/b.txt": "seed"}


# The agent hard-links a file from outside into its workspace: a `contains` check, the review diff and
# "new scar from this run" read it (the last copied it into cases/<id>/scar/).
HARD_LINK = """\
import os, sys
os.link(sys.argv[1], "tmp.txt")
os.link("README.md", "readme-again.md")  # a hard link to a file the seed made: harmless, still read
open("notes.txt", "w").write("my notes\\n")
"""


def test_a_hard_link_to_a_file_outside_is_refused_by_name_like_a_symlink(project, tmp_path):
    from scarbook.cases.drafts import create_draft_case
    from scarbook.tui.widgets.run_detail import describe_run
    from scarbook.views.run_review import load_review, load_run_detail

    secret = tmp_path / "id_rsa"
    secret.write_text("TOPSECRET private key\n")
    project.config(f"agent: {{type: command, argv: {json.dumps([PY, '-c', HARD_LINK, str(secret)])}}}\n"
                   "isolation: none\n")
    project.case("c", "id: c\ntask: t\nchecks:\n  - {type: contains, path: readme-again.md, text: '# tiny'}\n"
                      "  - {type: contains, path: tmp.txt, text: TOPSECRET}\n", {"README.md": "# tiny-agent\n"})
    assert project.cli("eval", "--runs", "1", "-q").exit_code == 1
    loaded = project.load()
    (run,) = loaded.history.runs(loaded.history.sessions()[0].id)
    assert [c.status for c in run.checks] == ["pass", "fail"]
    assert run.reason == "check 2 (contains): tmp.txt is a hard link (it has 2 names; one may be outside the workspace)"
    data = load_review(loaded, run.session_id, run.case_id)
    text = describe_run(run, load_run_detail(loaded, run, data)).plain
    assert "TOPSECRET" not in text
    assert " created  tmp.txt\n   (not shown: tmp.txt is a hard link (it has 2 names; one may be outside the " \
           "workspace))\n" in text
    draft = create_draft_case(loaded, loaded.load_cases().cases[0], run)
    scar = loaded.cases_dir / draft.id / "scar"
    assert all("TOPSECRET" not in p.read_text(errors="replace") for p in scar.rglob("*") if p.is_file())
    assert not (scar / "tmp.txt").exists()
