"""scarbook.cases.folder_save: a case is saved with its seed and scar files all or nothing, and no reader
(an eval in another terminal, the library's scan, lint) ever sees a case.yaml whose seed is not there yet.

The copy step is watched from inside (shutil.copy2 wrapped): what a reader would see at that moment is
recorded, or the copy is made to fail, deterministically."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scarbook.cases.editing import SeedChanges, save_form_case
from scarbook.cases.io import load_case, load_cases
from scarbook.cases.lineage import CaseIdLog
from scarbook.errors import CaseError
from scarbook.models import Case, Check
from tests.helpers.paths import TRANSCRIPTS
from tests.helpers.read_only import READ_ONLY_WHY, read_only

REAL_COPY = shutil.copy2


def new_case(case_id: str, title: str = "wrote two") -> Case:
    return Case(id=case_id, task="write one line to out.txt", title=title,
                checks=[Check("file_exists", {"path": "out.txt"})])


def seed_sources(tmp_path: Path, **files: str) -> dict[str, Path]:
    out = {}
    for name, text in files.items():
        src = tmp_path / "src" / name
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text)
        out[name.replace("_", ".")] = src
    return out


def listing(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (hidden ones too) with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def fail_copy(monkeypatch, at: int, error: BaseException | None = None) -> None:
    """shutil.copy2's `at`-th call raises `error` (default: the disk is full); the others copy."""
    calls = []

    def copy(src, dst, **kw):
        calls.append(dst)
        if len(calls) == at:
            raise error if error is not None else OSError(errno.ENOSPC, "No space left on device", str(dst))
        return REAL_COPY(src, dst, **kw)

    monkeypatch.setattr(shutil, "copy2", copy)


def test_a_reader_never_sees_a_new_case_before_its_seed_is_there(project, tmp_path, monkeypatch):
    """While the seed files are copied, the case is not in cases/ (not loaded, not a broken case, no
    case.yaml at its place); once saved, it is whole."""
    project.bundled()
    folders = project.load()
    srcs = seed_sources(tmp_path, README_md="# hello\n", data_json="{}\n")
    looks = []

    def copy(src, dst, **kw):
        found = load_cases(folders.cases_dir)
        looks.append(([c.id for c in found.cases if c.id == "two-lines"], [str(p) for p in found.problems],
                      (folders.cases_dir / "two-lines" / "case.yaml").exists()))
        return REAL_COPY(src, dst, **kw)

    monkeypatch.setattr(shutil, "copy2", copy)
    saved = save_form_case(folders, new_case("two-lines"), is_new=True, staged={}, seed=SeedChanges(add=srcs))
    assert looks == [([], [], False), ([], [], False)]  # both copies ran with no case (and no broken one) in view
    folder = folders.cases_dir / "two-lines"
    assert saved.seed_listing == ["README.md", "data.json"] and load_case(folder).seed_dir == folder / "seed"
    assert listing(folder)["seed/README.md"] == b"# hello\n"
    assert sorted(os.listdir(folders.cases_dir)) == ["fix-json-config", "rename-function", "review-api-claims",
                                                     "two-lines", "write-one-line"]  # no hidden folder left


def test_an_edit_lands_its_seed_before_the_case_yaml_that_goes_with_it(project, tmp_path, monkeypatch):
    """An edited case: while the seed file is copied in, case.yaml is still the old one (written last)."""
    project.bundled()
    folders = project.load()
    folder = folders.cases_dir / "write-one-line"
    old_yaml = (folder / "case.yaml").read_bytes()
    looks = []

    def copy(src, dst, **kw):
        looks.append((folder / "case.yaml").read_bytes() == old_yaml)
        return REAL_COPY(src, dst, **kw)

    monkeypatch.setattr(shutil, "copy2", copy)
    case = load_case(folder)
    case.title = "retitled"
    saved = save_form_case(folders, case, is_new=False, staged={},
                           seed=SeedChanges(add=seed_sources(tmp_path, notes_txt="n\n")))
    assert looks == [True]
    assert load_case(folder).title == "retitled" and saved.seed_listing == ["README.md", "notes.txt"]
    assert not [p for p in os.listdir(folder) if p.startswith(".")]


@pytest.mark.parametrize("interrupt", [False, True], ids=["disk full", "ctrl-c"])
def test_a_new_case_that_fails_mid_save_leaves_no_case_and_no_hidden_folder(project, tmp_path, monkeypatch,
                                                                             interrupt):
    project.bundled(agent_seed=3)
    assert project.cli("eval", "write-one-line", "-n", "1").exit_code == 1  # runs recorded under the id
    folders = project.load()
    shutil.rmtree(folders.cases_dir / "write-one-line")  # removed by hand: a new case may take the id
    before = sorted(os.listdir(folders.cases_dir))
    log = CaseIdLog(folders.workspaces_dir)
    srcs = seed_sources(tmp_path, a_txt="a\n", b_txt="b\n")
    fail_copy(monkeypatch, 2, KeyboardInterrupt() if interrupt else None)
    with pytest.raises(KeyboardInterrupt if interrupt else CaseError) as err:
        save_form_case(folders, new_case("write-one-line"), is_new=True, staged={}, seed=SeedChanges(add=srcs))
    if not interrupt:
        assert str(err.value) == (f"{folders.cases_dir / 'write-one-line'}: could not write the case: No space left "
                                  f"on device — make {folders.cases_dir} a writable folder with free space; "
                                  "nothing was saved")
    assert sorted(os.listdir(folders.cases_dir)) == before  # neither the case nor a hidden folder
    assert log.load() == {}  # the id's fresh start was put back: its old runs still count for nobody new


def test_an_edit_that_fails_mid_save_leaves_the_case_as_it_was(project, tmp_path, monkeypatch):
    """Two seed files added (one replacing README.md), one removed, the title changed: the second copy
    fails, and case.yaml, seed/ and scar/ are byte for byte as before."""
    project.bundled()
    folders = project.load()
    folder = folders.cases_dir / "write-one-line"
    (folder / "seed" / "old.txt").write_text("keep me\n")
    before = listing(folder)
    case = load_case(folder)
    case.title = "retitled"
    fail_copy(monkeypatch, 2)
    with pytest.raises(CaseError) as err:
        save_form_case(folders, case, is_new=False, staged={},
                       seed=SeedChanges(add=seed_sources(tmp_path, README_md="new\n", z_txt="z\n"), remove={"old.txt"}))
    assert err.value.problem == "could not write the case: No space left on device"
    assert listing(folder) == before


def test_an_edit_whose_case_yaml_cannot_be_written_puts_the_seed_back(project, tmp_path, monkeypatch):
    """The last step fails (case.yaml on a full disk) after the seed files were moved: they go back."""
    import scarbook.cases.io as io

    project.bundled()
    folders = project.load()
    folder = folders.cases_dir / "write-one-line"
    before = listing(folder)

    def full(path, text, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(io, "atomic_write_text", full)
    case = load_case(folder)
    case.title = "retitled"
    with pytest.raises(CaseError) as err:
        save_form_case(folders, case, is_new=False, staged={},
                       seed=SeedChanges(add=seed_sources(tmp_path, README_md="new\n", z_txt="z\n"),
                                        remove={"README.md"}))
    assert err.value.fix == f"make {folder} a writable folder with free space; nothing was saved"
    assert listing(folder) == before


@pytest.mark.parametrize("is_new", [True, False], ids=["new", "edit"])
def test_a_seed_file_gone_before_the_save_is_refused_and_nothing_is_saved(project, tmp_path, is_new):
    project.bundled()
    folders = project.load()
    gone = tmp_path / "gone.txt"
    case = new_case("seedless") if is_new else load_case(folders.cases_dir / "write-one-line")
    case.title = "retitled"
    before = {p: listing(p) for p in folders.cases_dir.iterdir()}
    with pytest.raises(CaseError) as err:
        save_form_case(folders, case, is_new=is_new, staged={},
                       seed=SeedChanges(add={"gone.txt": gone, **seed_sources(tmp_path, ok_txt="ok\n")}))
    assert str(err.value) == (f"{gone}: seed file gone.txt could not be copied: No such file or directory — attach it "
                              "again from where it is now, or remove it from the form; nothing was saved")
    assert {p: listing(p) for p in folders.cases_dir.iterdir()} == before


def test_a_crashed_saves_hidden_folder_is_no_case_and_goes_with_the_next_save(project, tmp_path):
    """A save killed mid-copy (power cut, kill -9) leaves only a hidden folder: no case for eval, lint or
    the library; the next new case's save takes it away."""
    project.bundled()
    folders = project.load()
    crashed = folders.cases_dir / ".scarbook-partial-half-1234abcd"
    (crashed / "half" / "seed").mkdir(parents=True)
    (crashed / "half" / "case.yaml").write_text("id: half\ntask: t\nchecks: [{type: file_exists, path: x}]\n")
    found = load_cases(folders.cases_dir)
    assert "half" not in [c.id for c in found.cases] and found.problems == []
    lint = project.cli("lint")
    assert lint.exit_code == 0 and "half" not in lint.output
    save_form_case(folders, new_case("whole"), is_new=True, staged={}, seed=SeedChanges())
    assert not crashed.exists()


def test_a_read_only_cases_folder_is_said_with_the_fix_and_nothing_is_written(project, tmp_path):
    project.bundled()
    src = seed_sources(tmp_path, a_txt="a\n")["a.txt"]
    script = ("from scarbook.cases.editing import SeedChanges, save_form_case\n"
              "from scarbook.errors import CaseError\nfrom scarbook.models import Case, Check\n"
              "from scarbook.project import Project\nimport sys\n"
              "case = Case(id='new-one', task='t', checks=[Check('file_exists', {'path': 'x'})])\n"
              "try:\n"
              f"    save_form_case(Project.discover(sys.argv[1]), case, is_new=True, staged={{}},"
              f" seed=SeedChanges(add={{'a.txt': __import__('pathlib').Path({str(src)!r})}}))\n"
              "except CaseError as exc:\n    print(exc)\n")
    before = sorted(os.listdir(project.cases_dir))
    out = subprocess.run(read_only(project.cases_dir, [sys.executable, "-c", script, str(project.root)]),
                         capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == (f"{project.cases_dir / 'new-one'}: could not write the case: {READ_ONLY_WHY} — "
                                  f"make {project.cases_dir} a writable folder with free space; nothing was saved"), \
        out.stderr
    assert sorted(os.listdir(project.cases_dir)) == before


def test_a_draft_imported_into_a_read_only_cases_folder_is_said_with_the_fix(project):
    """The import screen's writer (cases/drafts.create_draft) let the OSError through: the screen said
    "[Errno 30] Read-only file system: '.../cases/.scarbook-partial-ro-scar-…'" — a hidden folder, no fix."""
    project.bundled()
    script = ("from scarbook.cases.drafts import create_draft\nfrom scarbook.errors import ScarbookError\n"
              "from scarbook.project import Project\nfrom scarbook.transcripts import load_transcript\nimport sys\n"
              "t = load_transcript(sys.argv[2])\n"
              "try:\n    create_draft(t, Project.discover(sys.argv[1]), 'ro-scar', 1, [], None)\n"
              "except ScarbookError as exc:\n    print(exc)\n")
    before = sorted(os.listdir(project.cases_dir))
    log = str(TRANSCRIPTS / "claude_code_session.jsonl")
    out = subprocess.run(read_only(project.cases_dir, [sys.executable, "-c", script, str(project.root), log]),
                         capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == (f"{project.cases_dir / 'ro-scar'}: could not write the case: {READ_ONLY_WHY} — "
                                  f"make {project.cases_dir} a writable folder with free space; nothing was saved"), \
        out.stderr
    assert sorted(os.listdir(project.cases_dir)) == before


def test_an_imported_draft_is_never_seen_before_its_ticked_seeds_and_a_failure_leaves_nothing(project, monkeypatch):
    """The TUI's import (cases/drafts.create_draft) wrote case.yaml, then the seed files the user ticked."""
    import scarbook.cases.drafts as drafts
    from scarbook.transcripts import SeedSuggestion, load_transcript
    from tests.helpers.paths import FIXTURES

    project.bundled()
    folders = project.load()
    log = FIXTURES / "transcripts" / "claude_code_session.jsonl"
    seeds = [SeedSuggestion("README.md", "# tiny-agent\n", "read"), SeedSuggestion("docs/a.md", "a\n", "read")]
    real, looks = drafts.atomic_write_text, []

    def write(path, text, **kw):
        found = load_cases(folders.cases_dir)
        looks.append(("drafted" in [c.id for c in found.cases], found.problems, (folders.cases_dir / "drafted").exists()))
        if len(looks) == 2 and fail:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, text, **kw)

    monkeypatch.setattr(drafts, "atomic_write_text", write)
    before = sorted(os.listdir(folders.cases_dir))
    fail = True
    with pytest.raises(CaseError, match="could not write the case: No space left on device"):
        drafts.create_draft(load_transcript(log), folders, "drafted", 1, seeds, log)
    assert sorted(os.listdir(folders.cases_dir)) == before  # no draft, no hidden folder
    looks.clear()
    fail = False
    folder = drafts.create_draft(load_transcript(log), folders, "drafted", 1, seeds, log)
    assert looks == [(False, [], False), (False, [], False)]
    assert folder == folders.cases_dir / "drafted" and load_case(folder).seed_dir == folder / "seed"
    assert listing(folder / "seed") == {"README.md": b"# tiny-agent\n", "docs/a.md": b"a\n"}
    assert sorted(os.listdir(folders.cases_dir)) == sorted([*before, "drafted"])


def test_scarbook_import_writes_the_draft_whole(project, monkeypatch):
    """`scarbook import --id` built the folder in place (scar files, seed, then case.yaml): a reader between
    saw a folder with no case.yaml — an invalid case that stops `scarbook eval`. Now it appears whole."""
    import scarbook.cases.transcript_draft as transcript_draft
    from tests.helpers.paths import FIXTURES

    project.bundled()
    real, looks = transcript_draft.atomic_write_bytes, []

    def write(path, data, **kw):  # each scar and seed file the draft writes
        looks.append(((project.cases_dir / "drafted").exists(), load_cases(project.cases_dir).problems))
        return real(path, data, **kw)

    monkeypatch.setattr(transcript_draft, "atomic_write_bytes", write)
    log = FIXTURES / "transcripts" / "claude_code_session.jsonl"
    result = project.cli("import", str(log), "--id", "drafted", "--seed-suggested", "--skip-judge")
    assert result.exit_code == 0, result.output
    assert looks and all(look == (False, []) for look in looks), looks
    assert load_case(project.cases_dir / "drafted").seed_dir == project.cases_dir / "drafted" / "seed"
    assert not [p for p in os.listdir(project.cases_dir) if p.startswith(".")]
    taken = project.cli("import", str(log), "--id", "drafted")
    assert taken.exit_code == 2 and f"{project.cases_dir / 'drafted'} already exists; choose another --id" in taken.output


def test_a_new_case_never_replaces_an_empty_folder_made_at_its_name_after_the_check(project, monkeypatch):
    """An empty folder appears at the new case's name between the last check and the rename of the hidden folder
    it was built in: the save refuses (it replaced that folder before: os.rename over an empty folder succeeds),
    with the check's message; the folder stays empty and no hidden folder is left."""
    from tests.cases.test_admin import folder_made_at_the_last_check

    folders = project.load()
    dest = folders.cases_dir / "two-lines"
    folder_made_at_the_last_check(monkeypatch, dest, ".scarbook-partial-two-lines-*/two-lines/case.yaml")
    with pytest.raises(CaseError) as exc:
        save_form_case(folders, new_case("two-lines"), is_new=True, staged={}, seed=SeedChanges())
    assert str(exc.value).endswith(f"a case named 'two-lines' already exists ({dest}); choose another id"), exc.value
    assert dest.is_dir() and os.listdir(dest) == []
    assert os.listdir(folders.cases_dir) == ["two-lines"]
