"""Cases on disk: every bad input gives the exact message a user sees (file, line, fix); one bad case
never hides the others; saving round-trips and is atomic."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scarbook.cases.io import load_case, load_cases, save_case
from scarbook.errors import CaseError
from scarbook.fs.yamlio import atomic_write_text
from scarbook.models import Case, Check, Scar
from tests.helpers.hostile_project import without_dac_override
from tests.helpers.paths import REPO

CHECK_TYPES = ("file_exists, file_absent, contains, not_contains, regex, line_count, json_valid, only_changed, "
               "output_contains, output_regex, tool_called, tool_not_called, tool_order, max_tool_calls, max_turns, "
               "max_tokens, max_cost_usd, no_writes_outside, command, llm_judge")  # cost order (issue 28: trajectory)
PATH_FIX = "use a path relative to the workspace root, inside it"


def _error(project, cid: str, text: str, seed: dict[str, str] | None = None) -> tuple[Path, str]:
    path = project.case(cid, text, seed)
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    return path, str(info.value)


def test_malformed_yaml_names_the_line_and_where_the_quote_opened(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: "Extract the first line
        checks: []
        """)
    assert msg == (f"{path}:4: malformed YAML: found unexpected end of stream (while scanning a quoted scalar "
                   "that starts at line 2) — fix the syntax (check indentation, quotes and colons)")


def test_malformed_yaml_bad_indentation(project) -> None:
    path, msg = _error(project, "bad", "id: bad\n  task: x\nchecks: []\n")
    assert msg == f"{path}:2: malformed YAML: mapping values are not allowed here — fix the syntax " \
                  "(check indentation, quotes and colons)"


def test_unknown_top_level_key_names_its_line(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        colour: red
        checks: [{type: file_exists, path: a}]
        """)
    assert msg == (f"{path}:3: unknown key 'colour' — a case takes: id, title, task, tags, threshold, timeout_s, "
                   "network, seed, checks, scar")


def test_unknown_check_type(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        checks:
          - {type: file_exists, path: a}
          - {type: file_exits, path: a}
        """)
    assert msg == f"{path}:5: unknown check type 'file_exits' — did you mean 'file_exists'? use one of: {CHECK_TYPES}"


def test_unknown_key_inside_a_check(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        checks:
          - type: contains
            path: a
            txt: hello
        """)
    assert msg == f"{path}:6: unknown key 'txt' in contains check — contains takes: path, text, artifact"


def test_wrong_type(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        checks:
          - type: line_count
            path: a
            equals: "one"
        """)
    assert msg == f"{path}:6: line_count.equals must be an integer, got str — write equals as an integer"


def test_wrong_type_top_level(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nthreshold: 2\nchecks: [{type: file_exists, path: a}]\n")
    assert msg == f"{path}:3: threshold must be a number between 0 and 1, got 2 — write e.g. threshold: 0.8"


def test_missing_required_field(project) -> None:
    path, msg = _error(project, "bad", "id: bad\nchecks: [{type: file_exists, path: a}]\n")
    assert msg == f"{path}:1: missing required key 'task' — add 'task: ...'"


def test_missing_required_field_of_a_check(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nchecks:\n  - {type: contains, path: a}\n")
    assert msg == f"{path}:4: contains check is missing required key 'text' — add text: ..."


def test_line_count_needs_a_bound(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nchecks:\n  - {type: line_count, path: a}\n")
    assert msg == f"{path}:4: line_count check needs one of: equals, min, max — add e.g. equals: 1"


@pytest.mark.parametrize(("check", "problem"), [
    ("{type: line_count, path: a, equals: -1}", "line_count.equals must be 0 or more, got -1 — write e.g. equals: 1"),
    ("{type: line_count, path: a, max: -2}", "line_count.max must be 0 or more, got -2 — write e.g. max: 1"),
    ("{type: line_count, path: a, min: 5, max: 2}",
     "line_count.min (5) is more than line_count.max (2): no file can pass — swap them, or fix the one that is wrong"),
    ("{type: command, run: '  '}", "command.run is empty: the shell runs nothing and exits 0, so it would pass every "
                                   "run — write the command to run, e.g. run: python -m pytest -q"),
    ("{type: output_contains, text: ''}", "output_contains.text is empty: every text contains it, so the check "
                                          "decides nothing — write the text to look for"),
    ("{type: regex, path: a, pattern: ''}", "regex.pattern is empty: every text matches it, so the check decides "
                                            "nothing — write the pattern to look for"),
    ("{type: json_valid, path: a, pointer: name}", "json_valid.pointer 'name' must start with '/' (a JSON pointer, "
                                                   "RFC 6901): every run would fail it — write e.g. pointer: /name"),
    ("{path: a}", "a check has no 'type' — add type: one of file_exists, file_absent, contains, not_contains, regex, "
                  "line_count, json_valid, only_changed, output_contains, output_regex, tool_called, tool_not_called, "
                  "tool_order, max_tool_calls, max_turns, max_tokens, max_cost_usd, no_writes_outside, command, "
                  "llm_judge"),
])
def test_a_check_no_run_can_pass_or_without_a_type_is_named(project, check, problem) -> None:
    """line_count with a negative bound, or min above max, was accepted: every run of the case failed it,
    said as the agent's fault, as was a JSON pointer without its leading '/'; a command check with an empty run,
    or a text or pattern that is empty, passed every run. A check without a type was
    'unknown check type None'."""
    path, msg = _error(project, "bad", f"id: bad\ntask: x\nchecks:\n  - {check}\n")
    assert msg == f"{path}:4: {problem}"


def test_id_differs_from_folder(project) -> None:
    path, msg = _error(project, "folder", "id: other-name\ntask: x\nchecks: [{type: file_exists, path: a}]\n")
    assert msg == (f"{path}:1: id 'other-name' differs from its folder name 'folder' — rename the folder to "
                   "'other-name' or set 'id: folder'")


def test_check_path_escape_via_dotdot(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nchecks:\n  - {type: file_exists, path: ../etc/passwd}\n")
    assert msg == (f"{path}:4: file_exists.path: path '../etc/passwd' contains '..' and would leave the workspace"
                   f" — {PATH_FIX}")


def test_check_path_absolute(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nchecks:\n  - {type: contains, path: /etc/passwd, text: root}\n")
    assert msg == (f"{path}:4: contains.path: path '/etc/passwd' is absolute; paths are relative to the "
                   f"workspace root — {PATH_FIX}")


def test_check_path_with_a_nul_character(project) -> None:
    """No file can have a NUL in its name: a case naming one is refused at load, not a ValueError in every run."""
    path, msg = _error(project, "bad", 'id: bad\ntask: x\nchecks:\n  - {type: file_exists, path: "a\\0b.txt"}\n')
    assert msg == (f"{path}:4: file_exists.path: path 'a\\x00b.txt' holds a NUL character, which no file name can "
                   f"hold — {PATH_FIX}")


def test_check_path_deeper_than_a_run_walks(project) -> None:
    deep = "/".join(["d"] * 120) + "/a.txt"
    path, msg = _error(project, "bad", f"id: bad\ntask: x\nchecks:\n  - {{type: file_exists, path: {deep}}}\n")
    assert msg == (f"{path}:4: file_exists.path: path 'd/d/d/d/d/d/d/d/d/d/d/d/d/d/d/…/d/d/d/d/d/d/d/a.txt' is nested "
                   f"more than 100 folders deep; no run walks a workspace deeper — {PATH_FIX}")


def test_only_changed_path_escape(project) -> None:
    path, msg = _error(project, "bad", "id: bad\ntask: x\nchecks:\n  - {type: only_changed, paths: [a, ../b]}\n")
    assert msg == f"{path}:4: only_changed.paths: path '../b' contains '..' and would leave the workspace — {PATH_FIX}"


def test_inline_seed_path_escape(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        seed:
          notes.txt: fine
          ../outside.txt: no
        checks: [{type: file_exists, path: a}]
        """)
    assert msg == f"{path}:5: seed: path '../outside.txt' contains '..' and would leave the workspace — {PATH_FIX}"


def test_seed_file_symlink_out_of_the_case(project, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    path = project.case("bad", "id: bad\ntask: x\nchecks: [{type: file_exists, path: a}]\n", {"ok.txt": "ok"})
    link = path.parent / "seed" / "secret.txt"
    os.symlink(outside, link)
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == (f"{link}: seed file is a symlink that leads out of the seed folder (to {outside}) — "
                               "copy the file into seed/ instead of linking it")


def test_seed_nested_deeper_than_a_workspace_walk_is_refused_at_load(project) -> None:
    """seed/ with folders 120 deep loaded; every run was then an infra error retried in vain, and `scarbook verify`
    (and the certification after `scarbook import --seed-suggested`) a TooDeep traceback."""
    path = project.case("deep", "id: deep\ntask: x\nchecks: [{type: file_exists, path: a}]\n", {"ok.txt": "ok"})
    deep = path.parent / "seed" / "/".join(["d"] * 120)
    deep.mkdir(parents=True)
    (deep / "f.txt").write_text("x")
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == (f"{path.parent / 'seed'}: seed/ holds folders nested more than 100 deep "
                               "(d/d/d/…/d/d/d, 101 deep); no run walks a workspace deeper — flatten the folder")
    shutil.rmtree(path.parent / "seed" / "/".join(["d"] * 101))  # 100 deep is a workspace a run walks
    assert load_case(path.parent).id == "deep"


def test_seed_symlink_inside_the_case_is_fine(project) -> None:
    path = project.case("ok", "id: ok\ntask: x\nchecks: [{type: file_exists, path: a}]\n", {"a.txt": "a"})
    os.symlink("a.txt", path.parent / "seed" / "b.txt")
    assert load_case(path.parent).id == "ok"


def test_seed_folder_that_is_a_symlink(project, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    path = project.case("bad", "id: bad\ntask: x\nchecks: [{type: file_exists, path: a}]\n")
    os.symlink(tmp_path / "elsewhere", path.parent / "seed")
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == (f"{path.parent / 'seed'}: seed must be a real folder inside the case — "
                               "replace it with a folder of files")


@pytest.mark.parametrize("name", ["seed", "scar"])
@pytest.mark.parametrize("kind", ["file", "dangling link", "link to a file"])
def test_a_seed_or_scar_that_is_not_a_real_folder(project, tmp_path: Path, name, kind) -> None:
    """Each is refused on one lstat (issue 38.6: reading a case looked at seed/ and scar/ four times each)."""
    path = project.case("bad", "id: bad\ntask: x\nchecks: [{type: file_exists, path: a}]\n")
    sub = path.parent / name
    shutil.rmtree(sub, ignore_errors=True)
    if kind == "file":
        sub.write_text("x")
    else:
        target = tmp_path / "target.txt"
        if kind == "link to a file":
            target.write_text("x")
        os.symlink(target, sub)
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    assert str(info.value) == (f"{sub}: {name} must be a real folder inside the case — replace it with a folder of files")


def test_missing_scar_file(project) -> None:
    path, msg = _error(project, "bad", """\
        id: bad
        task: x
        checks: [{type: file_exists, path: a}]
        scar:
          date: 2026-11-14
          transcript: scar/transcript.jsonl
        """)
    folder = path.parent
    assert msg == (f"{path}:6: scar.transcript names scar/transcript.jsonl, which does not exist in {folder} — "
                   f"add the file {folder / 'scar/transcript.jsonl'} or remove scar.transcript")


@pytest.mark.parametrize(("make", "what"), [
    (os.mkdir, "a directory"),
    pytest.param(os.mkfifo, "a FIFO", id="fifo",
                 marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")),
])
def test_a_scar_file_that_is_not_a_file_says_what_it_is(project, make, what) -> None:
    """It was "names scar/transcript.jsonl, which does not exist — add the file", beside the folder the user sees."""
    path = project.case("odd", "id: odd\ntask: x\nchecks: [{type: file_exists, path: a}]\n"
                               "scar:\n  transcript: scar/transcript.jsonl\n")
    (path.parent / "scar").mkdir()
    make(path.parent / "scar" / "transcript.jsonl")
    with pytest.raises(CaseError) as info:
        load_case(path.parent)
    where = path.parent / "scar" / "transcript.jsonl"
    assert str(info.value) == (f"{path}:5: scar.transcript names scar/transcript.jsonl, which is {what}, not a file — "
                               f"replace {where} with the file, or remove scar.transcript")


def test_no_case_yaml(project) -> None:
    folder = project.cases_dir / "empty"
    folder.mkdir()
    with pytest.raises(CaseError) as info:
        load_case(folder)
    assert str(info.value) == f"{folder / 'case.yaml'}: no case.yaml in this case folder — add case.yaml or remove the folder"


@pytest.mark.skipif(os.name == "nt", reason="POSIX file bits")
def test_a_cases_folder_or_a_case_folder_closed_to_the_user_is_named_with_the_fix(project) -> None:
    """A cases/ this user cannot list was a PermissionError traceback from `scarbook list` and `eval` (and a crash
    of the TUI's library read); a case folder it cannot look into was said to have no case.yaml."""
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    cases, folder = project.cases_dir, project.cases_dir / "c"
    scarbook = [sys.executable, "-c", "from scarbook.entry import main; main()", "-C", str(project.root), "list"]
    try:
        folder.chmod(0)
        done = subprocess.run(without_dac_override(scarbook), capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (2, (
            f"invalid case: {folder / 'case.yaml'}: cannot look into the case folder: Permission denied — make "
            f"{folder} readable and searchable (chmod u+rx {folder})\n"))
        folder.chmod(0o755)
        cases.chmod(0)
        done = subprocess.run(without_dac_override(scarbook), capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (2, (
            f"invalid case: {cases}: cannot list the cases folder: Permission denied — make it readable and searchable "
            f"(chmod u+rx {cases}), or point cases_dir in scarbook.yaml at another folder\n"))
    finally:
        folder.chmod(0o755)
        cases.chmod(0o755)


@pytest.mark.parametrize(("make", "why"), [
    (os.mkdir, "{path} is a directory, not a regular file"),
    pytest.param(os.mkfifo, "{path} is a FIFO, not a regular file", id="fifo",
                 marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")),
    pytest.param(lambda p: os.symlink(p, p), "Too many levels of symbolic links", id="link-loop",
                 marks=pytest.mark.skipif(os.name == "nt", reason="POSIX wording")),
])
def test_a_case_yaml_that_is_not_a_file_says_what_it_is(project, make, why) -> None:
    """It is there, so "no case.yaml in this case folder — add case.yaml" would send the user looking for
    a file they can see: the message says what stands in its place."""
    path = project.cases_dir / "odd" / "case.yaml"
    path.parent.mkdir()
    make(path)
    result = project.cli("list")
    assert result.exit_code == 2
    assert result.stderr == (f"invalid case: {path}: cannot read the file: {why.format(path=path)} — "
                             "make it a readable file\n")


def test_one_bad_case_does_not_hide_the_others(project) -> None:
    project.case("good-a", "id: good-a\ntitle: First good\ntask: x\nchecks: [{type: file_exists, path: a}]\n")
    bad = project.case("bad", "id: bad\ntask: x\nchecks:\n  - {type: nope}\n")
    project.case("good-b", "id: good-b\ntitle: Second good\ntask: x\nchecks: [{type: file_exists, path: a}]\n")
    found = load_cases(project.cases_dir)
    assert [c.id for c in found.cases] == ["good-a", "good-b"]
    assert [str(p) for p in found.problems] == [f"{bad}:4: unknown check type 'nope' — use one of: {CHECK_TYPES}"]

    result = project.cli("list")
    assert result.exit_code == 2
    rows = result.stdout.splitlines()
    assert rows[0].split()[:2] == ["case", "rate"]
    assert [r.split()[0] for r in rows[1:]] == ["good-a", "good-b"]
    assert "never" in rows[1] and rows[1].endswith("First good")
    assert result.stderr == f"invalid case: {bad}:4: unknown check type 'nope' — use one of: {CHECK_TYPES}\n"


def _full_case() -> Case:
    return Case(
        id="round-trip", task="Extract the first line of README.md and write it to tmp.txt",
        title="A title: with a colon", tags=["files", "false-claim"], threshold=0.75, timeout_s=30.0,
        seed_files={"README.md": "# tiny-agent\n\nA minimal AI agent.\n", "sub/notes.txt": "n"},
        checks=[Check("file_exists", {"path": "tmp.txt"}),
                Check("line_count", {"path": "tmp.txt", "equals": 1}),
                Check("json_valid", {"path": "c.json", "pointer": "/a/0", "equals": {"k": [1, None]}}),
                Check("command", {"run": "python3 -c 'print(1)'", "timeout_s": 5}),
                Check("llm_judge", {"rubric": ["tmp.txt has one line"], "artifact": "output"})],
        scar=Scar(date="2026-11-14", what_went_wrong="wrote the whole README", family="false-completion-claim"))


def test_save_then_load_round_trips(project) -> None:
    case = _full_case()
    path = save_case(case, project.cases_dir)
    assert path == project.cases_dir / "round-trip" / "case.yaml"
    loaded = load_case(path.parent)
    for attr in ("id", "task", "title", "tags", "threshold", "timeout_s", "seed_files", "scar"):
        assert getattr(loaded, attr) == getattr(case, attr), attr
    assert [c.to_dict() for c in loaded.checks] == [c.to_dict() for c in case.checks]
    assert loaded.root == path.parent
    assert sorted(p.name for p in path.parent.iterdir()) == ["case.yaml"]  # no temp file left behind


def test_save_refuses_a_case_that_would_not_load(project) -> None:
    case = Case(id="bad", task="x", checks=[Check("contains", {"path": "../a", "text": "t"})])
    with pytest.raises(CaseError) as info:
        save_case(case, project.cases_dir)
    path = project.cases_dir / "bad" / "case.yaml"
    assert str(info.value) == f"{path}: contains.path: path '../a' contains '..' and would leave the workspace — {PATH_FIX}"
    assert not path.exists()


def test_save_keeps_the_old_file_when_dumping_fails(project) -> None:
    path = save_case(_full_case(), project.cases_dir)
    before = path.read_bytes()
    broken = _full_case()
    broken.checks[2].params["equals"] = object()  # passes the schema ("any"), cannot be written as YAML
    with pytest.raises(yaml.representer.RepresenterError, match="cannot represent an object"):
        save_case(broken, project.cases_dir)
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == ["case.yaml"]


def test_atomic_write_leaves_old_file_when_the_write_fails_midway(tmp_path: Path) -> None:
    path = tmp_path / "case.yaml"
    path.write_text("id: old\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "id: new\n" + "x" * 100_000 + "\ud800")  # fails while writing
    assert path.read_text() == "id: old\n"
    assert os.listdir(tmp_path) == ["case.yaml"]


def test_import_cases_converts_workspace_prefixes(project, tmp_path: Path) -> None:
    src = tmp_path / "cases.json"
    src.write_text(json.dumps([
        {"id": "write-one-line", "task": "Extract the first line of README and write it to tmp.txt",
         "checks": [{"type": "file_exists", "path": "workspace/tmp.txt"},
                    {"type": "contains", "path": "workspace/tmp.txt", "text": "# tiny-agent"},
                    {"type": "llm_judge", "rubric": ["Does tmp.txt contain exactly one line"]}]},
        {"id": "second", "task": "Do it", "checks": [{"type": "file_exists", "path": "workspace/out/a.txt"}]},
    ]))
    result = project.cli("import-cases", str(src))
    assert result.exit_code == 0, result.output
    case = load_case(project.cases_dir / "write-one-line")
    assert [c.to_dict() for c in case.checks] == [
        {"type": "file_exists", "path": "tmp.txt"},
        {"type": "contains", "path": "tmp.txt", "text": "# tiny-agent"},
        {"type": "llm_judge", "rubric": ["Does tmp.txt contain exactly one line"], "artifact": "output"}]
    assert load_case(project.cases_dir / "second").checks[0].params == {"path": "out/a.txt"}
    assert result.stdout.splitlines()[-1] == ("imported 2 cases; cases that need files in the workspace need "
                                              "a seed/ folder")
    again = project.cli("import-cases", str(src))
    assert again.exit_code == 2
    assert again.stderr == (f"scarbook: these cases already exist in {project.cases_dir}: write-one-line, second — "
                            "use --force to overwrite them\n")


def test_import_cases_duplicate_ids(project, tmp_path: Path) -> None:
    src = tmp_path / "cases.json"
    src.write_text(json.dumps([{"id": "a", "task": "t", "checks": [{"type": "file_exists", "path": "workspace/x"}]},
                               {"id": "a", "task": "u", "checks": [{"type": "file_exists", "path": "workspace/y"}]}]))
    result = project.cli("import-cases", str(src))
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: {src}: duplicate case id 'a' — give each case its own id\n"
    assert not (project.cases_dir / "a").exists()  # nothing half-imported


def test_import_cases_bad_entry_and_bad_json(project, tmp_path: Path) -> None:
    src = tmp_path / "cases.json"
    src.write_text('[{"id": "b", "task": "t", "checks": [{"type": "nope"}]}]')
    result = project.cli("import-cases", str(src))
    assert result.exit_code == 2
    assert result.stderr == f"scarbook: {src}: entry 0 (b): unknown check type 'nope' — use one of: {CHECK_TYPES}\n"
    src.write_text('[{"id": "b", "task": "t",\n')
    result = project.cli("import-cases", str(src))
    assert result.stderr == f"scarbook: {src}:2: not valid JSON: Expecting property name enclosed in double quotes — fix the JSON syntax\n"


def _shape(data):
    """Data with the line maps that error messages rely on, as plain values to compare."""
    if isinstance(data, dict):
        return ("map", data.line, dict(data.lines), {k: _shape(v) for k, v in data.items()})
    if isinstance(data, list):
        return ("seq", data.line, list(data.lines), [_shape(v) for v in data])
    return data


def test_the_fast_yaml_loader_reads_every_bundled_case_as_the_pure_one_does(monkeypatch) -> None:
    import scarbook.fs.yamlio as yamlio

    if yamlio._FAST_LOADER is None:
        pytest.skip("PyYAML here has no libyaml")
    files = sorted((REPO / "cases").glob("*/case.yaml"))
    assert len(files) >= 3
    texts = [f.read_text() for f in files] + ["a: &x {b: 1}\nc:\n  <<: *x\n  d: [1, 2.5, yes, null, '3']\n"]
    fast = [_shape(yamlio.load_yaml_text(t, "f.yaml")) for t in texts]
    monkeypatch.setattr(yamlio, "_FAST_LOADER", None)
    assert fast == [_shape(yamlio.load_yaml_text(t, "f.yaml")) for t in texts]
