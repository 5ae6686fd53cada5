"""Emptying the trash (scarbook/cases/trash.py): purge deletes for good and never follows a link out of
the trash; a planted link in the trash is listed with its problem and never restored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scarbook.cases.trash import list_trash, purge_trash, restore_case, to_purge, trash_case
from scarbook.errors import ScarbookError
from tests.cases.test_admin import make, tree


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    """A folder outside the project that a planted link points to: it must survive everything."""
    folder = tmp_path / "precious"
    (folder / "sub").mkdir(parents=True)
    (folder / "case.yaml").write_text("id: evil\ntask: t\nchecks: [{type: file_exists, path: x}]\n")
    (folder / "sub" / "keep.txt").write_text("mine")
    return folder


def test_purge_deletes_an_entry_for_good_and_the_rest_stays(project):
    make(project, "alpha")
    make(project, "beta")
    a, b = trash_case(project.load(), "alpha"), trash_case(project.load(), "beta")
    assert purge_trash(project.load(), to_purge(project.load(), "alpha")) == [a]
    assert not a.path.exists() and [e.name for e in list_trash(project.load())] == [b.name]
    with pytest.raises(ScarbookError) as exc:
        restore_case(project.load(), "alpha")
    assert str(exc.value).startswith("nothing named 'alpha' in the trash")


def test_purge_unlinks_links_inside_a_trashed_case_and_never_what_they_point_to(project, precious):
    folder = make(project, "alpha")
    os.symlink(precious, folder / "seed" / "outside")  # a link copied into a case, or planted in it
    os.symlink(precious / "sub" / "keep.txt", folder / "file-link")
    trash_case(project.load(), "alpha")
    purge_trash(project.load(), to_purge(project.load(), None))
    assert list_trash(project.load()) == []
    assert tree(precious) == {"case.yaml": (precious / "case.yaml").read_bytes(), "sub/keep.txt": b"mine"}


@pytest.mark.parametrize("planted", ["case", "entry"])
def test_a_planted_link_in_the_trash_is_listed_with_its_problem_never_restored_and_purge_removes_only_the_link(
        project, precious, planted):
    trash = project.workspaces / ".trash"
    name = "evil--20261203T150000Z"
    if planted == "case":  # a deletion folder whose case/ points out of the trash
        (trash / name).mkdir(parents=True)
        (trash / name / "trashed.json").write_text(json.dumps({"case_id": "evil", "trashed_at": "2026-12-03T15:00:00",
                                                               "origin": "cases/evil", "title": "t"}))
        link = trash / name / "case"
    else:  # the deletion folder itself is a link
        trash.mkdir(parents=True)
        link = trash / name
    os.symlink(precious, link)
    [entry] = list_trash(project.load())
    said = (f"{link} is a symlink to {precious}, not a case scarbook deleted (planted?): it is never restored — "
            f"`scarbook case purge {name}` removes the link only")
    assert (entry.name, entry.case_id, entry.problem) == (name, "evil", said)
    with pytest.raises(ScarbookError) as exc:
        restore_case(project.load(), "evil")
    assert str(exc.value) == said
    assert not (project.cases_dir / "evil").exists()
    assert purge_trash(project.load(), to_purge(project.load(), name)) == [entry]
    assert not os.path.lexists(trash / name) and list_trash(project.load()) == []
    assert (precious / "sub" / "keep.txt").read_text() == "mine" and (precious / "case.yaml").is_file()


def test_a_trash_folder_that_is_a_link_is_refused_and_nothing_is_deleted(project, precious):
    project.workspaces.mkdir(parents=True, exist_ok=True)
    os.symlink(precious, project.workspaces / ".trash")
    said = (f"{project.workspaces / '.trash'} is a symlink to {precious}: scarbook reads and empties only a real "
            f"trash folder — remove the link (rm {project.workspaces / '.trash'}); what it points to is not scarbook's")
    make(project, "alpha")
    for step in (lambda: list_trash(project.load()), lambda: to_purge(project.load(), None),
                 lambda: trash_case(project.load(), "alpha")):
        with pytest.raises(ScarbookError) as exc:
            step()
        assert str(exc.value) == said
    assert (precious / "sub" / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in precious.iterdir()) == ["case.yaml", "sub"]  # no lock file, no case moved in
    assert (project.cases_dir / "alpha" / "case.yaml").is_file()
