"""Blame the case, not the agent: a case or config that every run would trip over is refused when it is
loaded, by file, line and fix — and one bad case never hides the others from `scarbook list`."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

GOOD = "id: good\ntask: t\nchecks: [{type: file_exists, path: a}]\n"

# (case.yaml text, line, problem — fix) as `scarbook list` prints it after "invalid case: <path>:"
BAD_CASES = [
    pytest.param("id: bad\ntask: t\nchecks:\n  - {type: command, run: 'true', timeout_s: -5}\n", 4,
                 "command.timeout_s must be a positive number of seconds, got -5 — write e.g. timeout_s: 60",
                 id="command-timeout-negative"),
    pytest.param("id: bad\ntask: t\nchecks:\n  - {type: command, run: 'true', timeout_s: .nan}\n", 4,
                 "command.timeout_s must be a positive number of seconds, got nan — write e.g. timeout_s: 60",
                 id="command-timeout-nan"),
    # a case's own timeout of .inf was accepted: a hung agent then held its run, and the session, forever
    pytest.param("id: bad\ntask: t\ntimeout_s: .inf\nchecks: [{type: file_exists, path: a}]\n", 3,
                 "timeout_s must be a positive number of seconds, got inf — write e.g. timeout_s: 120",
                 id="case-timeout-inf"),
    pytest.param("id: bad\ntask: t\ntimeout_s: .nan\nchecks: [{type: file_exists, path: a}]\n", 3,
                 "timeout_s must be a positive number of seconds, got nan — write e.g. timeout_s: 120",
                 id="case-timeout-nan"),
    pytest.param("id: bad\ntask: t\nchecks:\n  - type: regex\n    path: a.txt\n    pattern: 'a(b'\n", 6,
                 "regex.pattern is not a valid regular expression: missing ), unterminated subpattern at "
                 "position 1 — fix the pattern (Python `re` syntax; quote it in single quotes in YAML)",
                 id="invalid-regex"),
    pytest.param("id: bad\ntask: t\nchecks: [{type: output_regex, pattern: '*x'}]\n", 3,
                 "output_regex.pattern is not a valid regular expression: nothing to repeat at position 0 — "
                 "fix the pattern (Python `re` syntax; quote it in single quotes in YAML)",
                 id="invalid-output-regex"),
    # re read it as the characters [:alph and a ], with a FutureWarning; the regex package that matches reads a class
    pytest.param("id: bad\ntask: t\nchecks: [{type: output_regex, pattern: '^[[:alpha:]]+$'}]\n", 3,
                 "output_regex.pattern is not a valid regular expression: `[:alpha:]` is a POSIX class (grep's "
                 "syntax), which Python's re does not have (re reads its [, : and letters as characters of the set): "
                 "write `[^\\W\\d_]` for [[:alpha:]], and \\[ for a [ in a set — fix the pattern (Python `re` "
                 "syntax; quote it in single quotes in YAML)", id="posix-class"),
    pytest.param("id: bad\ntask: t\nseed:\n  .: text\nchecks: [{type: file_exists, path: a}]\n", 4,
                 "seed: path '.' names the workspace root itself, not a file in it — "
                 "use a path relative to the workspace root, inside it",
                 id="seed-key-dot"),
    # every run errored in seeding: 'No such file or directory', 'File exists: a', 'Not a directory: notes'
    pytest.param("id: bad\ntask: t\nseed:\n  docs/: text\nchecks: [{type: file_exists, path: a}]\n", 4,
                 "seed: path 'docs/' ends in '/': it names a folder, and a seed entry is a file — "
                 "name the file, e.g. docs/notes.txt", id="seed-key-folder"),
    pytest.param("id: bad\ntask: t\nseed:\n  a: x\n  ./a: y\nchecks: [{type: file_exists, path: a}]\n", 5,
                 "seed: './a' and 'a' name the same file — keep one of them", id="seed-key-twice"),
    pytest.param("id: bad\ntask: t\nseed:\n  notes: x\n  notes/a.txt: y\nchecks: [{type: file_exists, path: a}]\n",
                 5, "seed: 'notes/a.txt' puts a file inside 'notes', which is a seed file too — rename one of them",
                 id="seed-file-inside-a-file"),
    # a blank tag was accepted: no `--tag` can pick a case by it, and the library filter shows nothing for it
    pytest.param("id: bad\ntask: t\ntags: ['', x]\nchecks: [{type: file_exists, path: a}]\n", 3,
                 "tags: tag 1 is empty: no --tag can select a case by it — write the tag's word, or remove it",
                 id="tag-empty"),
    pytest.param("id: bad\ntask: t\ntags:\n  - files\n  - ' '\nchecks: [{type: file_exists, path: a}]\n", 5,
                 "tags: tag 2 is blank (' '): no --tag can select a case by it — write the tag's word, or remove it",
                 id="tag-blank"),
    # the TUI editor's tags field is "files, json": a comma in a tag came back as two tags, spaces around it as none
    pytest.param("id: bad\ntask: t\ntags: [files, 'a,b']\nchecks: [{type: file_exists, path: a}]\n", 3,
                 "tags: tag 2 ('a,b') holds a comma: the editor's tags field would save it as 2 tags — write each as "
                 "its own tag, or join the words with '-'", id="tag-comma"),
    pytest.param("id: bad\ntask: t\ntags:\n  - ' files'\nchecks: [{type: file_exists, path: a}]\n", 4,
                 "tags: tag 1 (' files') has spaces around it: --tag files does not select it, and the editor would "
                 "save it without them — write 'files'", id="tag-spaces"),
    pytest.param("id: bad\ntask: t\nchecks: [{type: file_exists, path: a}]\nchecks: [{type: file_absent, path: a}]\n", 4,
                 "duplicate key 'checks' (first given at line 3) — keep one of them: YAML would silently use the last",
                 id="duplicate-key"),
    pytest.param("id: bad\ntask: t\nchecks:\n  - {type: contains, path: a, text: x, text: y}\n", 4,
                 "duplicate key 'text' (first given at line 4) — keep one of them: YAML would silently use the last",
                 id="duplicate-key-in-check"),
    pytest.param("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                 "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n", 1,
                 "more than 100,000 values once its aliases (*name) are expanded — "
                 "write the values out instead of nesting aliases of aliases",
                 id="alias-bomb"),
    pytest.param("id: bad\ntask: t\nchecks: " + "[" * 5000 + "]" * 5000 + "\n", 3,
                 "nested more than 64 levels deep — flatten the structure", id="5000-brackets"),
    pytest.param("id: bad\ntask: t\nchecks: " + "[" * 500 + "]" * 500 + "\n", 3,
                 "nested more than 64 levels deep — flatten the structure", id="500-brackets"),
]


@pytest.mark.parametrize("text, line, message", BAD_CASES)
def test_a_bad_case_is_refused_at_load_and_the_others_still_list(project, text: str, line: int, message: str) -> None:
    project.case("good", GOOD)
    path = project.case("bad", text)
    start = time.monotonic()
    result = project.cli("list")
    assert time.monotonic() - start < 5  # a bomb costs a bounded amount of work
    assert result.stderr == f"invalid case: {path}:{line}: {message}\n"
    assert result.exit_code == 2
    assert [ln.split()[0] for ln in result.stdout.splitlines()[1:]] == ["good"]


def test_a_huge_case_file_is_refused_before_it_is_read(project) -> None:
    project.case("good", GOOD)
    path = project.case("bad", GOOD.replace("good", "bad"))
    with open(path, "a") as fh:
        fh.write("# " + "x" * (50 << 20) + "\n")  # a 50 MB case file
    start = time.monotonic()
    result = project.cli("list")
    assert time.monotonic() - start < 5
    assert result.stderr == (f"invalid case: {path}: file is {path.stat().st_size:,} bytes, more than the 1,048,576 "
                             "scarbook reads — keep big files in seed/ or scar/ and name them from the case\n")
    assert result.exit_code == 2
    assert [ln.split()[0] for ln in result.stdout.splitlines()[1:]] == ["good"]


@pytest.mark.parametrize("folder, target, message", [
    ("seed", "../scar/evidence.txt", "seed file is a symlink that leads out of the seed folder (to {case}/scar/evidence.txt) "
                                     "— copy the file into seed/ instead of linking it"),
    ("seed", "../scar", "seed file is a symlink that leads out of the seed folder (to {case}/scar) "
                        "— copy the file into seed/ instead of linking it"),
    ("scar", "/etc/passwd", "scar file is a symlink that leads out of the case folder (to /etc/passwd) "
                            "— copy the file into scar/ instead of linking it"),
])
def test_seed_and_scar_links_that_leave_their_folder_are_refused(project, folder: str, target: str,
                                                                  message: str) -> None:
    project.case("good", GOOD)
    path = project.case("bad", GOOD.replace("good", "bad"), {"ok.txt": "ok"})
    case = path.parent
    (case / "scar").mkdir()
    (case / "scar" / "evidence.txt").write_text("the incident")
    link = case / folder / "leak"
    os.symlink(target, link)
    result = project.cli("list")
    assert result.stderr == f"invalid case: {link}: {message.format(case=case.resolve())}\n"
    assert result.exit_code == 2
    assert [ln.split()[0] for ln in result.stdout.splitlines()[1:]] == ["good"]


def _refused_at_load(project, message: str) -> None:
    """`list` shows the good case and names the bad one; `eval bad --dry-run` refuses it, exit 2."""
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (2, message + "\n")
    assert [ln.split()[0] for ln in result.stdout.splitlines()[1:]] == ["good"]
    result = project.cli("eval", "bad", "--dry-run")
    assert (result.exit_code, result.stderr.splitlines()[0]) == (2, message)


def test_a_seed_link_to_a_missing_file_is_refused_at_load(project) -> None:
    """A link in seed/ to a file that is not there loaded: list and eval --dry-run said nothing, and every run's
    seeding was an error ('No such file or directory'), exit 3."""
    project.case("good", GOOD)
    path = project.case("bad", GOOD.replace("good", "bad"), {"ok.txt": "ok", "docs/a.md": "a"})
    link = path.parent / "seed" / "docs" / "b.md"
    os.symlink("missing.md", link)
    message = (f"invalid case: {link}: seed file is a symlink to {link.parent.resolve() / 'missing.md'}, which does "
               "not exist: no run can seed it — point the link at a file in seed/, or remove it")
    _refused_at_load(project, message)
    (link.parent / "missing.md").write_text("b")
    assert project.cli("list").exit_code == 0


FOLDER_LOOP = ("seed folder is a symlink loop: it leads back to {real}, a folder seeding reaches it through, so "
               "seeding (which follows links) would copy that folder into itself without end — remove the link, or "
               "put the files it should seed in seed/")


@pytest.mark.parametrize("links, named, message", [
    # a link to itself, and two links to each other: the system gives up following them (ELOOP)
    ({"docs/b.md": "b.md"}, "docs/b.md", "seed file is a symlink loop (seed/docs/b.md → seed/docs/b.md): it never "
                                         "leads to a file, so no run can seed it — point the link at a file in "
                                         "seed/, or remove it"),
    ({"docs/b.md": "c.md", "docs/c.md": "b.md"}, "docs/b.md",
     "seed file is a symlink loop (seed/docs/b.md → seed/docs/c.md → seed/docs/b.md): it never leads to a file, so no "
     "run can seed it — point the link at a file in seed/, or remove it"),
    # a folder's link to a folder it is in, and two folders' links to each other: seeding follows them round
    ({"docs/up": ".."}, "docs/up", FOLDER_LOOP.format(real="{seed}")),
    ({"docs/deeper/up": ".."}, "docs/deeper/up", FOLDER_LOOP.format(real="{seed}/docs")),
    ({"docs/to-x": "../x", "x/to-docs": "../docs"}, "x/to-docs", FOLDER_LOOP.format(real="{seed}/docs")),
], ids=["itself", "two-files", "to-seed", "to-its-folder", "two-folders"])
def test_a_symlink_loop_in_seed_is_refused_at_load_as_one(project, links, named, message) -> None:
    """A seed link that leads round a loop was called a link to something 'which does not exist'; a folder link that
    leads back to a folder above it loaded, and every run's seeding was an error ('Too many levels of symbolic
    links: …/docs/deeper/up/deeper/up/…'), exit 3."""
    project.case("good", GOOD)
    path = project.case("bad", GOOD.replace("good", "bad"), {"ok.txt": "ok", "docs/a.md": "a", "x/k.txt": "k"})
    seed = path.parent / "seed"
    for rel, target in links.items():
        (seed / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, seed / rel)
    _refused_at_load(project, f"invalid case: {seed / named}: {message.format(seed=seed.resolve())}")


# (scarbook.yaml text, line, message)
BAD_CONFIGS = [
    pytest.param("agent: {type: command, argv: [./agent], max_output_bytes: lots}\n", 1,
                 "agent.max_output_bytes must be a positive whole number of bytes, got 'lots' — "
                 "write e.g. max_output_bytes: 1000000", id="max-output-bytes-lots"),
    pytest.param("runs: 2\nruns: 3\n", 2,
                 "duplicate key 'runs' (first given at line 1) — keep one of them: YAML would silently use the last",
                 id="duplicate-key"),
]


@pytest.mark.parametrize("text, line, message", BAD_CONFIGS)
def test_a_bad_config_names_its_line(project, text: str, line: int, message: str) -> None:
    path = project.config(text)
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (2, f"scarbook: {path}:{line}: {message}\n")


def test_workspaces_dir_that_is_a_file_is_a_config_error(project) -> None:
    (project.root / "runs.txt").write_text("not a folder")
    path = project.config("workspaces_dir: runs.txt\n")
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: {path}:1: workspaces_dir names {project.root / 'runs.txt'}, which is a file, not a folder "
           "— point workspaces_dir at a folder, or move that file aside\n")


@pytest.mark.parametrize(("folder", "key"), [("cases", "cases_dir"), ("workspaces", "workspaces_dir")])
def test_a_default_folder_that_is_a_file_is_named_without_a_line_the_file_does_not_have(project, folder, key) -> None:
    """scarbook.yaml does not set it: the message pointed at the line where its first key is."""
    path = project.config("# comments first\n\nruns: 3\n")
    shutil.rmtree(project.root / folder, ignore_errors=True)
    (project.root / folder).write_text("not a folder")
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: {path}: {key} (by default {folder}) names {project.root / folder}, which is a file, not a "
           f"folder — move that file aside, or set {key} in scarbook.yaml to a folder\n")


def test_lint_of_a_case_that_does_not_exist(project) -> None:
    project.case("good", GOOD)
    result = project.cli("lint", "nosuch")
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: no case 'nosuch' in {project.cases_dir} — `scarbook list` shows the cases\n")


def test_lint_with_an_invalid_case_names_it_and_exits_2(project) -> None:
    """Issue 37.8: its help says non-zero when a case is invalid; it exited 0."""
    project.case("good", GOOD)
    bad = project.case("bad", "id: bad\ntask: t\nbogus: 1\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("lint")
    assert (result.exit_code, result.stdout) == (2, "no hints for 1 case\n")
    assert result.stderr == (f"invalid case: {bad}:3: unknown key 'bogus' — a case takes: id, title, task, tags, "
                             "threshold, timeout_s, network, seed, checks, scar\n")
    assert project.cli("lint", "good").exit_code == 2  # naming the good case does not make the collection valid


def test_outside_a_project_commands_say_so_and_suggest_init(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    from scarbook.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    result = CliRunner().invoke(main, ["list"])
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: no scarbook.yaml in {empty.resolve()} or any folder above it — run `scarbook init` to start "
           "a scarbook project here, or pass -C PROJECT\n")
    result = CliRunner().invoke(main, [])  # the TUI needs a project too
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: no scarbook.yaml in {empty.resolve()} or any folder above it — run `scarbook init` to start "
           "a scarbook project here, or pass -C PROJECT\n")
    result = CliRunner().invoke(main, ["-C", "/nonexistent", "sessions"])
    assert (result.exit_code, result.stderr) == (
        2, "scarbook: /nonexistent is not a scarbook project (that folder does not exist) — "
           "run `scarbook init /nonexistent` to start one there\n")
    result = CliRunner().invoke(main, ["-C", str(empty), "list"])
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: {empty} is not a scarbook project (there is no scarbook.yaml in it) — "
           f"run `scarbook init {empty}` to start one there\n")


@pytest.mark.parametrize("with_c", [False, True], ids=["found", "-C"])
def test_a_scarbook_yaml_that_is_a_folder_is_named_not_called_missing(tmp_path: Path, monkeypatch, with_c) -> None:
    """It was "no scarbook.yaml … run `scarbook init`", and init found one there."""
    from click.testing import CliRunner

    from scarbook.cli import main

    root = tmp_path / "proj"
    (root / "scarbook.yaml").mkdir(parents=True)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, [*(["-C", str(root)] if with_c else []), "list"])
    cfg = root.resolve() / "scarbook.yaml"
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: {cfg}: cannot read the file: {cfg} is a directory, not a regular file — make it a readable file\n")


def test_the_readme_case_example_is_the_bundled_case_and_its_judge_check_loads(project) -> None:
    """Issue 37.16: README's case example showed an llm_judge check the bundled case does not have."""
    from scarbook.fs.yamlio import load_yaml_text
    from tests.helpers.paths import REPO

    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## A case\n", 1)[1]
    blocks = section.split("```yaml\n")
    example, judged = blocks[1].split("```")[0], blocks[2].split("```")[0]
    bundled = REPO / "cases" / "write-one-line" / "case.yaml"
    assert load_yaml_text(example, "README.md") == load_yaml_text(bundled.read_text(encoding="utf-8"), bundled)
    with_judge = example.replace("\nscar:", "\n" + judged.rstrip("\n") + "\nscar:", 1)
    project.case("write-one-line", with_judge.replace("  transcript:", "  # transcript:")
                 .replace("  failed_artifact:", "  # failed_artifact:").replace("  good_artifact:", "  # good_artifact:"))
    found = project.load().load_cases()
    assert found.problems == []
    [case] = found.cases
    assert [c.type for c in case.checks][-1] == "llm_judge" and len(case.checks) == 5


# (the seed/ folder's files, the inline seed: mapping, line, problem — fix): each clash errored in every run's
# seeding ('Not a directory', 'Is a directory'), exit 3, and neither `list` nor `eval --dry-run` saw it
SEED_CLASHES = [
    pytest.param({"README.md": "# r\n"}, "  README.md/x: y\n", 4,
                 "seed: 'README.md/x' puts a file inside 'README.md', which is a file in the seed folder "
                 "(seed/README.md) — rename the inline entry, or seed/README.md", id="inline-inside-a-seed-file"),
    pytest.param({"a/b": "b\n"}, "  ok.txt: fine\n  a: x\n", 5,
                 "seed: 'a' is a file, and the seed folder holds a folder 'a' (seed/a/b) — "
                 "rename the inline entry, or the folder seed/a", id="inline-file-where-a-seed-folder-is"),
    pytest.param({"docs/notes/n.md": "n\n"}, "  docs/notes: x\n", 4,
                 "seed: 'docs/notes' is a file, and the seed folder holds a folder 'docs/notes' (seed/docs/notes/n.md) "
                 "— rename the inline entry, or the folder seed/docs/notes", id="nested-folder"),
]


@pytest.mark.parametrize("files, inline, line, message", SEED_CLASHES)
def test_an_inline_seed_that_clashes_with_the_seed_folder_is_refused_at_load(project, files, inline, line,
                                                                               message) -> None:
    project.case("good", GOOD)
    path = project.case("bad", f"id: bad\ntask: t\nseed:\n{inline}checks: [{{type: file_exists, path: a}}]\n", files)
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (2, f"invalid case: {path}:{line}: {message}\n")
    result = project.cli("eval", "bad", "--dry-run")
    assert (result.exit_code, result.stderr.splitlines()[0]) == (2, f"invalid case: {path}:{line}: {message}")


def test_an_inline_seed_beside_the_seed_folder_without_a_clash_still_loads(project) -> None:
    """An inline file of the same name wins over seed/'s (documented), and an empty folder seeds nothing."""
    path = project.case("ok", "id: ok\ntask: t\nseed: {README.md: x, empty: y, docs/more.md: z}\n"
                              "checks: [{type: file_exists, path: a}]\n", {"README.md": "r", "docs/a.md": "a"})
    (path.parent / "seed" / "empty").mkdir()
    result = project.cli("list")
    assert (result.exit_code, result.stderr) == (0, "")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes or unix sockets on this platform")
@pytest.mark.parametrize("kind, what", [("fifo", "a FIFO"), ("socket", "a socket")])
def test_a_seed_entry_that_is_no_file_nor_folder_is_refused_at_load(project, monkeypatch, kind, what) -> None:
    """A FIFO (or a socket, a device) in seed/ loaded: list and eval --dry-run said nothing, and every run's
    seeding was an error ('… is a FIFO, not a regular file'), exit 3."""
    import socket

    project.case("good", GOOD)
    path = project.case("bad", GOOD.replace("good", "bad"), {"ok.txt": "ok", "docs/a.md": "a"})
    odd = path.parent / "seed" / "docs" / "odd"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        with monkeypatch.context() as m, socket.socket(socket.AF_UNIX) as sock:
            m.chdir(odd.parent)  # (a unix socket's path is at most ~107 bytes: bind the short name)
            sock.bind("odd")
    message = (f"invalid case: {odd}: seed file is {what}: no run can seed it (seeding copies regular files) — "
               "replace it with a regular file, or remove it")
    _refused_at_load(project, message)
    odd.unlink()
    assert project.cli("list").exit_code == 0
