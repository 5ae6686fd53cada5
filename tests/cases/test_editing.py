"""scarbook.cases.editing: what the TUI editor's save does to disk (it ran on the UI thread inside the
editor screen before), with the exact words the editor shows."""

from __future__ import annotations

import pytest
import yaml

from scarbook.cases.editing import SeedChanges, check_form_id, save_form_case
from scarbook.cases.io import load_case
from scarbook.errors import CaseError
from scarbook.models import Case, Check, Scar
from scarbook.project import Project
from tests.helpers.tui_fixtures import fast_demo, project_root  # noqa: F401


def new_case(case_id: str, failed: str | None = None) -> Case:
    return Case(id=case_id, task="write one line to out.txt", title="wrote two",
                checks=[Check("file_exists", {"path": "out.txt"})],
                scar=Scar(failed_artifact=failed) if failed else None)


def test_an_empty_id_is_refused_with_the_editors_words(tmp_path):
    with pytest.raises(CaseError) as err:
        check_form_id(tmp_path / "cases", "", is_new=True)
    assert (err.value.problem, err.value.fix) == ("id is empty", "type an id: lowercase letters, digits, '-' and '_'")
    assert str(err.value) == f"{tmp_path / 'cases' / 'case.yaml'}: id is empty — type an id: lowercase letters, digits, '-' and '_'"


def test_a_new_case_may_not_take_an_existing_cases_id(project_root):  # noqa: F811
    project = Project.discover(project_root)
    with pytest.raises(CaseError) as err:
        save_form_case(project, new_case("write-one-line"), is_new=True, staged={}, seed=SeedChanges())
    assert str(err.value) == (f"{project.cases_dir / 'write-one-line'}: id 'write-one-line' is taken by another case"
                              " — choose another id")
    assert load_case(project.cases_dir / "write-one-line").title.startswith("Wrote the whole README")  # untouched
    check_form_id(project.cases_dir, "write-one-line", is_new=False)  # an edit keeps its own id


def test_a_typed_artifact_path_is_copied_into_scar_and_the_seed_changes_are_applied(project_root, tmp_path):  # noqa: F811
    project = Project.discover(project_root)
    evidence = tmp_path / "evidence.txt"
    evidence.write_text("line one\nline two\n")
    seed_src = tmp_path / "README.md"
    seed_src.write_text("# hello\n")
    saved = save_form_case(project, new_case("two-lines", failed=str(evidence)), is_new=True, staged={},
                           seed=SeedChanges(add={"README.md": seed_src}))
    folder = project.cases_dir / "two-lines"
    assert saved.path == folder / "case.yaml" and saved.moved == {"failed_artifact": "scar/evidence.txt"}
    assert yaml.safe_load(saved.path.read_text())["scar"]["failed_artifact"] == "scar/evidence.txt"
    assert (folder / "scar" / "evidence.txt").read_text() == "line one\nline two\n"
    assert saved.seed_listing == ["README.md"] and (folder / "seed" / "README.md").read_text() == "# hello\n"
    again = save_form_case(project, load_case(folder), is_new=False, staged={},
                           seed=SeedChanges(remove={"README.md"}))
    assert again.seed_listing == [] and not (folder / "seed" / "README.md").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["case.yaml", "scar", "seed"]  # nothing hidden left behind


def test_an_invalid_case_writes_nothing(project_root):  # noqa: F811
    project = Project.discover(project_root)
    case = new_case("no-task")
    case.task = ""
    with pytest.raises(CaseError) as err:
        save_form_case(project, case, is_new=True, staged={"scar/x.txt": b"x"}, seed=SeedChanges())
    assert err.value.problem.startswith("task")
    assert not (project.cases_dir / "no-task").exists()


def test_a_seed_file_gone_before_the_save_is_said_and_nothing_is_saved(project_root, tmp_path):  # noqa: F811
    """Before the save was all or nothing, the case was saved without the file (a warning beside it);
    now the save is refused with the file named, and the case is not written (tests/cases/test_folder_save.py)."""
    project = Project.discover(project_root)
    gone = tmp_path / "gone.txt"
    with pytest.raises(CaseError) as err:
        save_form_case(project, new_case("seedless"), is_new=True, staged={}, seed=SeedChanges(add={"gone.txt": gone}))
    assert (err.value.path, err.value.problem) == (gone, "seed file gone.txt could not be copied: No such file or directory")
    assert not (project.cases_dir / "seedless").exists()
