"""Issue 38.6: `scarbook --help` imports only what it uses. It took 1.35 s against 0.15 s for `python -c
pass` (load ~10): every command's module was imported to list the commands, and with them the project,
the cases, the checks, every transcript reader, the reports and asyncio. The commands are now listed
from a table (cli.LAZY_COMMANDS) and a command's module is imported when that command runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from scarbook.cli import LAZY_COMMANDS, load_commands

WHAT_LOADED = ("import json, sys\nfrom scarbook.entry import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
               "print(json.dumps(sorted(sys.modules)), file=sys.__stderr__)")


def _modules_after(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", WHAT_LOADED, *args], capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_scarbook_help_imports_no_command_and_nothing_they_need() -> None:
    loaded = _modules_after("--help")
    ours = sorted(m for m in loaded if m.startswith("scarbook"))
    # (scarbook.text, the writer's cleaning, is loaded by the first line scarbook itself says: click prints the help)
    assert ours == ["scarbook", "scarbook.cli", "scarbook.cli.common", "scarbook.entry", "scarbook.errors"], ours
    assert not {"asyncio", "yaml", "msgspec", "textual", "rich", "anthropic", "ray"} & loaded
    # nor what a line of scarbook's own pulled in for one call (hashlib: OpenSSL's library, ~10 ms)
    assert not {"secrets", "hashlib", "dataclasses"} & loaded, {"secrets", "hashlib", "dataclasses"} & loaded


def test_a_commands_help_imports_its_own_module_only() -> None:
    loaded = {m for m in _modules_after("sessions", "--help") if m.startswith("scarbook.cli.")}
    assert loaded == {"scarbook.cli.common", "scarbook.cli.sessions_cmd"}


def test_the_table_names_every_command_with_its_module_and_lists_it_as_click_would() -> None:
    """The table cannot drift: each module's commands are in it under that module, and the line
    `scarbook --help` prints for each is the one click makes from the command's own help."""
    modules = sorted({module for module, _ in LAZY_COMMANDS.values()})
    real: dict[str, tuple[str, click.Command]] = {}
    for module in modules:
        for command in load_commands(module):
            real[command.name or ""] = (module, command)
    assert sorted(real) == sorted(LAZY_COMMANDS)
    for name, (module, command) in real.items():
        assert LAZY_COMMANDS[name][0] == module, name
        assert not command.short_help and not command.hidden and not command.deprecated, name
        stand_in = click.Command(name, help=LAZY_COMMANDS[name][1])
        for limit in (20, 45, 72, 120, 400):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)


def test_each_command_has_its_own_module_named_after_it() -> None:
    """`scarbook X` is in scarbook/cli/X_cmd.py, alone; every *_cmd.py module is a command's (issue 32.5: `diff`
    and `lint` were in numbers_cmd.py, `case` and `init`/`list`/`show` in case_cmd.py and cases_cmd.py)."""
    import scarbook.cli

    for name, (module, _) in LAZY_COMMANDS.items():
        assert module == name.replace("-", "_") + "_cmd", name
        assert [c.name for c in load_commands(module)] == [name], module
    on_disk = {p.stem for p in Path(scarbook.cli.__file__).parent.glob("*_cmd.py")}
    assert on_disk == {module for module, _ in LAZY_COMMANDS.values()}


LOADED_FIRST = ("from scarbook.cli import LAZY_COMMANDS, load_commands\n"
                "for module in {m for m, _ in LAZY_COMMANDS.values()}:\n    load_commands(module)\n")
WIDTHS = ("60", "200")
# `scarbook --help` at each width, in one process (click reads $COLUMNS at each listing), after LOADED_FIRST's
# code or none; the listings are JSON on stderr.
LISTINGS = ("import contextlib, io, json, os, sys\n{first}"
            "from scarbook.entry import main\n"
            "listed = {{}}\n"
            "for width in " + repr(WIDTHS) + ":\n"
            "    os.environ['COLUMNS'] = width\n"
            "    out = io.StringIO()\n"
            "    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
            "        main()\n"
            "    listed[width] = out.getvalue()\n"
            "print(json.dumps(listed), file=sys.stderr)\n")


@pytest.fixture(scope="module")
def listings() -> dict[str, dict[str, str]]:
    """The listing at each width from a process that loaded no command, and from one that loaded them all
    first (two processes: a listing in the first must not be what the second lists)."""
    def listed(first: str) -> dict[str, str]:
        done = subprocess.run([sys.executable, "-c", LISTINGS.format(first=first), "--help"], capture_output=True,
                              text=True, timeout=120, env={"PATH": ""})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stderr.strip().splitlines()[-1])

    return {"lazy": listed(""), "loaded": listed(LOADED_FIRST)}


@pytest.mark.parametrize("width", WIDTHS)
def test_the_listing_is_the_same_before_and_after_the_commands_are_loaded(width, listings) -> None:
    listed = listings["lazy"][width]
    assert listed == listings["loaded"][width]
    assert "  eval " in listed and "  import-cases " in listed


# What `scarbook eval --dry-run` must not load (issue 38.6): it reads scarbook.yaml and the cases, plans
# and prices the session, and runs nothing — so none of the runner, the agents' adapters, the judge's
# grader or SDK, the recorder, the reports, the rule checks or a transcript reader, and no event loop.
NOT_FOR_A_DRY_RUN = (
    "asyncio", "anthropic", "ray", "textual", "ruamel", "tinydb", "filelock", "difflib", "zipfile", "xml.etree",
    "scarbook.cli.drive", "scarbook.cli.eval_run", "scarbook.cli.outcome", "scarbook.run.runner",
    "scarbook.run.session", "scarbook.run.ray", "scarbook.agents.command", "scarbook.agents.python",
    "scarbook.proc.spawn", "scarbook.checks.rules", "scarbook.checks.trajectory", "scarbook.checks.sequence",
    "scarbook.judge.factory", "scarbook.judge.grader", "scarbook.judge.judge", "scarbook.record.recording",
    "scarbook.record.replay", "scarbook.record.proxy", "scarbook.reports", "scarbook.history.store",
    "scarbook.session.against", "scarbook.session.report", "scarbook.transcripts.detect",
    "scarbook.transcripts.formats", "scarbook.transcripts.model", "scarbook.fs.yaml_edit",
    # nor a run's or a session's records (a dozen dataclasses, ~10 ms: scarbook.models loads each name's module
    # on first use), what a check sees, a shard, a re-run's pick of history or the credentials' keeper
    "scarbook.models.run", "scarbook.models.judge_detail", "scarbook.models.session", "scarbook.checks.context",
    "scarbook.run.shard", "scarbook.proc.credentials",
    # nor what the judge is sent (its prompt, read for a request or a fingerprint), nor the case wing's
    # protocol of a project's folders (an annotation of the plan's)
    "scarbook.judge.prompt", "scarbook.cases.folders",
)


def test_eval_dry_run_imports_only_what_it_uses(tmp_path) -> None:
    import shutil

    from tests.helpers.paths import REPO

    for case in ("write-one-line", "fix-json-config"):
        shutil.copytree(REPO / "cases" / case, tmp_path / "cases" / case)
    (tmp_path / "scarbook.yaml").write_text((REPO / "scarbook.yaml").read_text())
    # in the project's folder: `-C` alone makes click import difflib (it tries -C as a long option first)
    done = subprocess.run([sys.executable, "-c", WHAT_LOADED, "eval", "--dry-run"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("dry run: 2 cases x "), done.stdout + done.stderr  # it did plan and price
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert [m for m in loaded if m.startswith(NOT_FOR_A_DRY_RUN)] == []


def test_the_program_freezes_what_is_alive_as_it_ends() -> None:
    """Python's shutdown runs full collections over every object alive, nearly all of them the modules'
    own: ~15 ms of a 130 ms `scarbook eval --dry-run` (issue 38.6). scarbook.entry.main freezes them out of
    those scans as it returns or exits, whatever the command did."""
    code = ("import gc, sys\nfrom scarbook.entry import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(gc.get_freeze_count(), file=sys.__stderr__)")
    for args in (["--help"], ["eval", "--no-such-option"]):
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
        assert int(done.stderr.strip().splitlines()[-1]) > 10_000, (args, done.stderr[-2000:])


def test_no_collection_runs_while_the_program_starts_and_the_collector_is_on_for_the_command(tmp_path) -> None:
    """Start-up (click, the CLI, the command's modules) makes tens of thousands of objects and no garbage; a
    young collection every 700 of them walked what was made so far (~5 ms of `eval --dry-run`, issue 38.6).
    None runs from main() until the command starts (it opens scarbook.yaml first); the collector is on for it."""
    (tmp_path / "scarbook.yaml").write_text("agent: {type: command, argv: [sh, -c, 'true']}\n")
    case = tmp_path / "cases" / "c"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text("id: c\ntask: t\nchecks:\n  - {type: file_exists, path: a.txt}\n")
    # An audit hook sees the command open scarbook.yaml (its first step) and the case file: a collection
    # before the first is start-up's; at the second, the collector must be on.
    code = ("import gc, sys\nfrom scarbook.entry import main\nseen = []\n"
            "def opened(event, args):\n    if event == 'open' and str(args[0]).endswith(('scarbook.yaml', 'case.yaml')):\n"
            "        seen.append(str(args[0]).rsplit('/', 1)[-1] + (' on' if gc.isenabled() else ' off'))\n"
            "sys.addaudithook(opened)\n"
            "gc.callbacks.append(lambda phase, info: phase == 'start' and seen.append('collection'))\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(seen, gc.isenabled(), file=sys.__stderr__)")
    done = subprocess.run([sys.executable, "-c", code, "eval", "--dry-run"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.startswith("dry run: 1 case x "), done.stdout + done.stderr
    seen, enabled = done.stderr.strip().splitlines()[-1].rsplit(" ", 1)
    assert enabled == "True"
    assert seen.startswith("['scarbook.yaml ") and "'case.yaml on'" in seen, seen


# ... and with rule checks only, nothing the judge's price or the statistics need (--runs auto's estimate
# prints 'at most' its cap: the TUI's launch screen is what says the fewest runs it could stop after)
# nor hashlib (OpenSSL's library: a rubric item's implicit id, a fingerprint and the judge's nonce load it
# when they hash) and secrets
NOT_WITHOUT_A_JUDGE = ("scarbook.judge.estimate", "scarbook.judge.artifact", "scarbook.stats", "scarbook.fs.safefs",
                       "hashlib", "secrets", "_hashlib")


@pytest.mark.parametrize("runs", ["3", "auto"])
def test_a_dry_run_of_rule_checks_loads_neither_the_judge_s_estimate_nor_the_statistics(tmp_path, runs) -> None:
    (tmp_path / "scarbook.yaml").write_text("agent: {type: command, argv: [sh, -c, 'true']}\n")
    for i in range(2):
        case = tmp_path / "cases" / f"c{i}"
        case.mkdir(parents=True)
        (case / "case.yaml").write_text(f"id: c{i}\ntask: t\nchecks:\n  - {{type: file_exists, path: a.txt}}\n")
    done = subprocess.run([sys.executable, "-c", WHAT_LOADED, "eval", "--dry-run", "--runs", runs], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.startswith("dry run: 2 cases x "), done.stdout + done.stderr
    assert "judge: no calls (no llm_judge checks selected)" in done.stdout
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert sorted(m for m in loaded if m.startswith(NOT_WITHOUT_A_JUDGE)) == []


# A session's fixed cost is paid once per `scarbook eval` (a 1,000-run session at -j16 took ~2.8 s, of which
# the start-up was a tenth): a session with no trajectory check and no recording reads no transcript, so it
# loads none of the transcript readers, nor the recorder's checks
NOT_FOR_A_PLAIN_SESSION = ("scarbook.transcripts.run_file", "scarbook.transcripts.detect", "scarbook.transcripts.formats",
                           "scarbook.run.recorded_checks", "scarbook.transcripts.scarbook_native")


def test_a_session_without_trajectory_checks_or_recording_loads_no_transcript_reader(tmp_path) -> None:
    (tmp_path / "scarbook.yaml").write_text("agent: {type: command, argv: [sh, -c, 'echo hi > a.txt']}\n"
                                            "isolation: none\n")
    case = tmp_path / "cases" / "c"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text("id: c\ntask: t\nchecks:\n  - {type: contains, path: a.txt, text: hi}\n")
    done = subprocess.run([sys.executable, "-c", WHAT_LOADED, "eval", "--runs", "2", "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert "finished; 2 runs — 2 pass, 0 fail, 0 error" in done.stdout, done.stdout + done.stderr
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert sorted(m for m in loaded if m.startswith(NOT_FOR_A_PLAIN_SESSION)) == []
