"""`scarbook eval` and friends on real project folders: the table, exit codes, reports, presets,
tags, retention, init, show, and help text for every command."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import click
import pytest

from scarbook.cli import main
from scarbook.run.session import NONE_NOTE

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")

BUNDLED = {"fix-json-config": (8, 2), "rename-function": (9, 1), "review-api-claims": (9, 1),
           "write-one-line": (9, 1)}  # the demo agent's blocks of ten, whatever the seed


def _rows(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    assert lines[0].split()[:5] == ["case", "pass", "fail", "err", "rate"]
    out = {}
    for line in lines[2:]:
        if not line.strip():
            break
        out[line.split()[0]] = line.split()
    return out


def test_eval_bundled_cases_prints_the_table_and_passes(project) -> None:
    from scipy.stats import binomtest

    project.bundled(gate=None)  # the product's default gate: evidence
    result = project.cli("eval", "--runs", "10")
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert sorted(rows) == sorted(BUNDLED)
    for cid, (p, f) in BUNDLED.items():
        row = rows[cid]
        assert row[1:5] == [str(p), str(f), "0", f"{100 * p // (p + f)}%"], row
        ci = binomtest(p, p + f).proportion_ci(method="wilson")
        assert " ".join(row[5:7]) == f"{100 * ci.low:3.0f}–{100 * ci.high:3.0f}%".strip()
        # 8/10 and 9/10 cannot show a rate of at least 80% (evidence mode, issue 22): undecided, exit 0
        assert row[-2] == "undecided" and len(row[-1]) == 10 and row[-1].count("✗") == f
    assert rows["write-one-line"][9] == "green" and rows["fix-json-config"][9] == "yellow"
    summary = next(ln for ln in result.stdout.splitlines() if ln.startswith("session "))
    assert summary.endswith("finished; 40 runs — 35 pass, 5 fail, 0 error")
    assert "write-one-line: undecided at 9/10 — needs about 34 more runs to show it meets 80%" in result.stdout
    progress = [ln for ln in result.stderr.splitlines() if ln.startswith("[")]
    assert len(progress) == 40 and progress[-1].startswith("[40/40] ")


def test_a_case_below_its_threshold_exits_1(project) -> None:
    project.bundled()
    path = project.cases_dir / "write-one-line" / "case.yaml"
    path.write_text(path.read_text().replace("threshold: 0.8", "threshold: 0.95"))
    # point mode, the rate >= threshold rule (9/10 < 95%); evidence mode would call it undecided
    result = project.cli("eval", "write-one-line", "fix-json-config", "--runs", "10", "-q", "--gate", "point")
    assert result.exit_code == 1
    rows = _rows(result.stdout)
    assert rows["write-one-line"][-2] == "BELOW" and rows["fix-json-config"][-2] == "ok"
    assert result.stdout.splitlines()[-1] == "below threshold: write-one-line"
    assert "gate: point mode (red when a rate is below its threshold); at the observed rates the chance of a red " \
           "by chance is 32% — `gate: {mode: evidence}` keeps it under 5%" in result.stdout
    assert result.stderr == ""  # -q: no progress lines


def test_all_errors_exit_3(project) -> None:
    bad = project.root / "agent.sh"
    bad.write_text("#!/nonexistent/interpreter\n")  # executable, but exec fails: the harness cannot run it
    bad.chmod(0o755)
    project.config("agent: {type: command, argv: [./agent.sh]}\n")
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "--runs", "2", "-q")
    assert result.exit_code == 3
    assert _rows(result.stdout)["c"][1:5] == ["0", "0", "2", "–"]
    assert "0 pass, 0 fail, 2 error" in result.stdout


@pytest.mark.parametrize("text,message", [
    ("runs: zero\n", "{path}:1: runs must be an integer of at least 1, got 'zero' — write e.g. runs: 20"),
    ("agent: {type: demo}\nthreshhold: 0.8\n",
     "{path}:2: unknown key 'threshhold' — scarbook.yaml takes: agent, agents, runs, concurrency, timeout_s, threshold, "
     "bands, presets, judge, stale_after_days, keep, cases_dir, workspaces_dir, isolation, network, executor, "
         "max_read_bytes, retry_infra, causes, gate, record"),
    ("agent: {type: shell}\n", "{path}:1: agent.type must be one of demo, command, python, claude-code, codex, got 'shell' — write e.g. "
     "agent: {type: command, argv: [./agent, \"{task}\"]}"),
    ("agent:\n  type: demo\n  colour: red\n",
     "{path}:3: unknown key 'colour' for a demo agent — a demo agent takes: type, seed, profile, draws"),
    # the fix's example was 2e+07, which YAML reads as a string and this very check refused
    ("max_read_bytes: 1e100\n", "{path}:1: max_read_bytes must be an integer of at least 1, got '1e100' — write e.g. "
     "max_read_bytes: 20000000"),
    # no type: written: it was "for a  executor — an  executor takes"
    ("executor: {address: auto, bogus: 1}\n", "{path}:1: unknown key executor.bogus for a local executor — a local "
     "executor takes: type, address, num_cpus, resources, runtime_env, max_workspace_bytes"),
])
def test_bad_config_exits_2_with_the_message(project, text: str, message: str) -> None:
    path = project.config(text)
    project.case("c", "id: c\ntask: t\nchecks: [{type: file_exists, path: a}]\n")
    result = project.cli("eval", "--runs", "1")
    assert result.exit_code == 2
    assert result.stderr == "scarbook: " + message.replace("{path}", str(path)) + "\n"


def test_a_cases_dir_that_does_not_exist_is_said_by_list_and_eval(project) -> None:
    """A typo in cases_dir: `scarbook list` printed its header over nothing, and eval said to add a case to a
    folder that is not there."""
    path = project.config("agent: {type: demo}\ncases_dir: casse\n")
    said = (f"no cases{{}}: {project.root / 'casse'} does not exist — add a case with the TUI (`scarbook`) or "
            "`scarbook import`, or point cases_dir in scarbook.yaml at your cases folder")
    listed = project.cli("list")
    assert (listed.exit_code, listed.stdout) == (0, said.format("") + "\n")
    result = project.cli("eval", "--runs", "1")
    assert (result.exit_code, result.stderr) == (2, "scarbook: " + said.format(" to run") + "\n")
    path.write_text("agent: {type: demo}\n")  # cases/ there and empty
    listed = project.cli("list")
    assert listed.stdout == f"no cases in {project.cases_dir} — add one with the TUI (`scarbook`) or `scarbook import`\n"


def test_usage_errors_exit_2(project) -> None:
    project.bundled()
    for args, message in [
        (("--preset", "nope"), "no preset 'nope' — scarbook.yaml defines: daily, prompt-change, release"),
        # `--preset "$P"`, `--agents "$A"` with the variable unset ran scarbook.yaml's runs, and agent: alone, unsaid
        (("--preset", ""), "no preset '' — scarbook.yaml defines: daily, prompt-change, release"),
        (("--agents", ""), "--agents '' names no agent (was the variable it came from unset?) — give two or more "
                           "names of scarbook.yaml's agents:, e.g. --agents baseline,candidate"),
        (("--runs", "0"), "--runs must be a whole number of runs, 1 or more, or 'auto', got '0'"),
        # 1.5 is a positive number, as the message said; '²' passed str.isdigit and met int(): a traceback
        (("--runs", "1.5"), "--runs must be a whole number of runs, 1 or more, or 'auto', got '1.5'"),
        (("--runs", "²"), "--runs must be a whole number of runs, 1 or more, or 'auto', got '²'"),
        (("--runs", "2", "--preset", "daily"), "give --runs or --preset, not both"),
        (("no-such-case",), f"no case 'no-such-case' in {project.cases_dir} — `scarbook list` shows the cases"),
        (("--tag", "nope"), f"no cases to run in {project.cases_dir} with tag nope — add one with the TUI "
                            "(`scarbook`) or `scarbook import`"),
    ]:
        result = project.cli("eval", *args)
        assert (result.exit_code, result.stderr) == (2, f"scarbook: {message}\n"), args


def test_json_and_junit_reports(project, tmp_path: Path) -> None:
    from scipy.stats import binomtest

    project.bundled()
    jpath, xpath = tmp_path / "out" / "report.json", tmp_path / "junit.xml"
    result = project.cli("eval", "--runs", "10", "--label", "prompt-v2", "--json", str(jpath), "--junit", str(xpath), "-q")
    assert result.exit_code == 0
    rep = json.loads(jpath.read_text())
    assert rep["exit_code"] == 0 and rep["session"]["label"] == "prompt-v2" and rep["session"]["state"] == "finished"
    cases = {c["case_id"]: c for c in rep["cases"]}
    assert {cid: (c["passes"], c["fails"], c["errors"]) for cid, c in cases.items()} == {
        cid: (p, f, 0) for cid, (p, f) in BUNDLED.items()}
    ci = binomtest(8, 10).proportion_ci(method="wilson")
    assert (cases["fix-json-config"]["lo"], cases["fix-json-config"]["hi"]) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert len(rep["runs"]) == 40 and {r["status"] for r in rep["runs"]} == {"pass", "fail"}

    suite = ET.parse(xpath).getroot()
    assert suite.tag == "testsuite" and suite.get("name") == "scarbook prompt-v2"
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("4", "0", "0")
    tc = {t.get("name"): t for t in suite.findall("testcase")}
    assert sorted(tc) == sorted(BUNDLED)
    out = tc["write-one-line"].find("system-out").text.splitlines()
    assert out[0] == "pass rate 90% (9/10), 95% CI 60-98%, pass^5 50%, 0 errors, threshold 80%"
    assert len(out) == 11 and all(line.startswith("run ") for line in out[1:])


@pytest.mark.parametrize("where", ["under a file", "a read-only folder"])
def test_a_report_that_cannot_be_written_is_said_before_any_run(project, tmp_path: Path, where: str) -> None:
    """--json where no file can be written: one message naming the file and the fix (never a
    traceback), exit 2 before any run (issue 25: preflight tries each report's folder; this test said
    the runs went ahead and the report failed after them)."""
    from scarbook.history.store import History

    if where == "under a file":
        (tmp_path / "a-file").write_text("")
        jpath, why = tmp_path / "a-file" / "report.json", f"{tmp_path / 'a-file'} is a file, not a folder"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder (tests/cli/test_unwritable.py uses a read-only mount)")
        (tmp_path / "locked").mkdir()
        (tmp_path / "locked").chmod(0o555)
        jpath, why = tmp_path / "locked" / "report.json", f"cannot create files in {tmp_path / 'locked'}: Permission denied"
    project.config(f"agent: {{type: command, argv: [{sys.executable}, -c, \"open('a', 'w').write('x')\"]}}\n")
    project.case("c", "id: c\ntask: t\nthreshold: 0.1\nchecks: [{type: file_exists, path: a}]\n")
    xpath = tmp_path / "junit.xml"
    result = project.cli("eval", "--runs", "6", "-q", "--json", str(jpath), "--junit", str(xpath))
    assert (result.exit_code, result.stderr) == (
        2, f"scarbook: --json {jpath} cannot be written: {why} — choose a writable path for --json\n")
    assert "Traceback" not in result.output and not jpath.exists() and not xpath.exists()
    assert History(project.workspaces).sessions() == []


def test_a_report_whose_folder_goes_away_during_the_session_is_said_and_the_runs_stay_recorded(project, tmp_path: Path):
    """The preflight found the --json folder writable; the agent then put a file in its place. Writing
    the report after the runs fails: one message naming the file (never a traceback), the JUnit report
    is still written, every run stays in history, and the exit is not green (2)."""
    from scarbook.history.store import History

    out = tmp_path / "out"
    out.mkdir()
    swap = f"import os, pathlib; p = pathlib.Path({str(out)!r}); p.is_dir() and (os.rmdir(p), p.write_text('')); open('a', 'w')"
    project.config(f"agent: {{type: command, argv: [{sys.executable}, -c, {json.dumps(swap)}]}}\nconcurrency: 1\n"
                   "isolation: none\n")  # it reaches outside its workspace
    project.case("c", "id: c\ntask: t\nthreshold: 0.1\nchecks: [{type: file_exists, path: a}]\n")
    jpath, xpath = out / "report.json", tmp_path / "junit.xml"
    result = project.cli("eval", "--runs", "6", "-q", "--json", str(jpath), "--junit", str(xpath))
    assert out.is_file() and "6 pass, 0 fail, 0 error" in result.stdout  # the gate alone would exit 0
    assert (result.exit_code, result.stderr) == (
        2, f"warning: {NONE_NOTE}\nscarbook: cannot write {jpath}: Not a directory — choose a writable path\n")
    assert "Traceback" not in result.output
    assert ET.parse(xpath).getroot().get("tests") == "1"
    history = History(project.workspaces)
    [session] = history.sessions()
    assert session.state == "finished" and len(history.runs(session.id)) == 6


def test_junit_marks_a_case_below_threshold_as_failure(project, tmp_path: Path) -> None:
    project.bundled()
    path = project.cases_dir / "fix-json-config" / "case.yaml"
    path.write_text(path.read_text().replace("threshold: 0.8", "threshold: 0.9"))
    xpath = tmp_path / "junit.xml"
    assert project.cli("eval", "fix-json-config", "--runs", "10", "-q", "--gate", "point",
                       "--junit", str(xpath)).exit_code == 1
    (tc,) = ET.parse(xpath).getroot().findall("testcase")
    assert tc.find("failure").get("message") == ("below threshold: pass rate 80% (8/10), 95% CI 49-94%, pass^5 22%, "
                                                "0 errors, threshold 90%")


def test_preset_and_tag(project) -> None:
    project.bundled(agent_seed=7)  # daily: 15 runs, enough to show a case at 100% meets 80% (issue 39.7)
    result = project.cli("eval", "--preset", "daily", "--tag", "files", "-q")
    assert result.exit_code == 0, result.output
    rows = _rows(result.stdout)
    assert sorted(rows) == ["fix-json-config", "write-one-line"]  # the cases tagged files
    history = project.load().history
    info = history.sessions()[0]
    assert info.runs_per_case == 15 and len(history.runs(info.id)) == 30


def test_retention_prunes_passing_runs_keeps_failed(project) -> None:
    project.bundled()
    assert project.cli("eval", "write-one-line", "--runs", "10", "-q").exit_code == 0
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    for r in runs:
        ws = Path(r.workspace)
        assert ws.parent == project.workspaces / r.session_id / "write-one-line"
        assert ws.is_dir() == (r.status != "pass") == r.workspace_kept, r
    (failed,) = [r for r in runs if r.status == "fail"]
    assert (Path(failed.workspace) / "tmp.txt").read_text().startswith("# tiny-agent\n\nA minimal AI agent.")


def test_keep_all_keeps_every_workspace(project) -> None:
    project.bundled(agent_seed=7)  # 4 runs, all pass: --keep-all keeps passing runs' workspaces too
    assert project.cli("eval", "write-one-line", "--runs", "4", "--keep-all", "-q").exit_code == 0
    history = project.load().history
    runs = history.runs(history.sessions()[0].id)
    assert len(runs) == 4 and all(Path(r.workspace).is_dir() and r.workspace_kept for r in runs)


def test_show_and_sessions(project) -> None:
    project.bundled()
    project.cli("eval", "write-one-line", "--runs", "10", "-q", "--label", "first")
    shown = project.cli("show", "write-one-line")
    assert shown.exit_code == 0
    head = shown.stdout.splitlines()[0]
    assert head.startswith("write-one-line in session ") and head.endswith("[first] (finished), agent demo")
    assert shown.stdout.count("\nrun ") == 10
    assert "  [   fail] 3. line_count: tmp.txt has 7 lines, expected exactly 1" in shown.stdout
    assert "  [skipped] 4. only_changed: not run: check 3 (line_count) did not pass" in shown.stdout
    missing = project.cli("show", "fix-json-config")
    assert (missing.exit_code, missing.stderr) == (2, "scarbook: case 'fix-json-config' has no recorded runs — "
                                                      "run `scarbook eval fix-json-config`\n")
    typo = project.cli("show", "fix-json-confg")
    assert (typo.exit_code, typo.stderr) == (2, f"scarbook: no case 'fix-json-confg' in {project.root / 'cases'} — "
                                                "`scarbook list` shows the cases\n")
    sessions = project.cli("sessions")
    (row,) = sessions.stdout.splitlines()[1:]
    assert row.split()[1:7] == ["first", "finished", "10", "9", "1", "0"]
    listed = project.cli("list")
    row = next(ln for ln in listed.stdout.splitlines() if ln.startswith("write-one-line"))
    assert row.split()[1:4] == ["90%", "60–98%", "9/1/0"]


def test_init_in_an_empty_folder(tmp_path: Path) -> None:
    from click.testing import CliRunner

    target = tmp_path / "my-agent"
    result = CliRunner().invoke(main, ["init", str(target)])
    assert result.exit_code == 0, result.output
    assert (target / "cases").is_dir()
    assert (target / ".gitignore").read_text() == "# scarbook: run scratch dirs and history\n/workspaces/\n"
    from scarbook.config import STARTER_CONFIG, load_config

    assert (target / "scarbook.yaml").read_text() == STARTER_CONFIG
    cfg = load_config(target / "scarbook.yaml")  # the starter loads cleanly
    assert (cfg.agent, cfg.runs, cfg.keep, cfg.presets["release"]) == ({"type": "demo"}, 20, "failed", 40)
    again = CliRunner().invoke(main, ["init", str(target)])
    assert again.stdout.splitlines()[0] == f"{target / 'scarbook.yaml'} already exists; left as it is"
    assert (target / ".gitignore").read_text().count("/workspaces/") == 1
    empty = CliRunner().invoke(main, ["-C", str(target), "eval"])
    assert empty.exit_code == 2
    assert empty.stderr == (f"scarbook: no cases to run in {target.resolve() / 'cases'} — add one with the TUI "
                            "(`scarbook`) or `scarbook import`\n")


def _all_commands(group: click.Group, prefix: str = ""):
    for name in group.list_commands(click.Context(group)):  # (the top level loads each command's module here)
        cmd = group.get_command(click.Context(group), name)
        assert cmd is not None, name
        yield prefix + name, cmd
        if isinstance(cmd, click.Group):
            yield from _all_commands(cmd, prefix + name + " ")


@pytest.mark.parametrize(("word", "where"), [
    ("compare", "two sessions are compared with `scarbook diff A B`, two agents in one session with `scarbook eval "
                "--agents A,B`"),
    ("run", "cases are run with `scarbook eval`")])
def test_another_tools_word_for_a_command_says_where_scarbook_does_it(word, where) -> None:
    """`scarbook compare` (promptfoo's word, and the README's "A against B") said only "No such command 'compare'"."""
    from click.testing import CliRunner

    result = CliRunner().invoke(main, [word, "a", "b"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: No such command '{word}': {where}."


def test_every_command_has_help_text() -> None:
    from click.testing import CliRunner

    commands = list(_all_commands(main))
    assert {"eval", "list", "show", "sessions", "init", "import-cases"} <= {n for n, _ in commands}
    for name, cmd in commands:
        assert (cmd.help or "").strip(), f"`scarbook {name}` has no help text"
        result = CliRunner().invoke(main, [*name.split(), "--help"])
        first = " ".join(cmd.help.strip().splitlines()[0].split())
        assert result.exit_code == 0 and first in " ".join(result.stdout.split()), name
        for param in cmd.params:
            if isinstance(param, click.Option) and param.name != "help":
                assert param.help, f"`scarbook {name}` option {param.opts[0]} has no help text"


def test_every_commands_help_ends_with_examples_that_parse() -> None:
    """A newcomer reads `scarbook X --help` for how X is used: most commands showed options and no command line.
    Each shows at least one under "Examples:", one a line, and each is one its command's parser takes (an example
    naming an option the command lacks would fail here)."""
    from click.testing import CliRunner

    for name, _ in [("", main), *_all_commands(main)]:
        result = CliRunner().invoke(main, [*name.split(), "--help"])
        assert result.exit_code == 0, name
        shown = result.stdout.split("Examples:\n\n", 1)
        assert len(shown) == 2, f"`scarbook {name} --help` shows no examples"
        lines = [line.strip() for line in shown[1].splitlines() if line.strip()]
        assert lines and all(f"{line} ".startswith(f"scarbook {name}".strip() + " ") for line in lines), name
        for line in lines:
            words = shlex.split(line)[1:]
            leaf, path = main, []
            while isinstance(leaf, click.Group) and words and words[0] in leaf.list_commands(click.Context(leaf)):
                path.append(words.pop(0))
                leaf = leaf.get_command(click.Context(leaf), path[-1])
            assert leaf is main and not words or not isinstance(leaf, click.Group), line  # (`scarbook`: the TUI)
            ctx = click.Context(leaf, info_name=" ".join(path))
            leaf.make_parser(ctx).parse_args(words)  # an unknown option or a missing value raises


def test_cli_start_does_not_load_the_anthropic_sdk() -> None:
    # Importing the SDK costs over a second here; `scarbook list` must answer well under that.
    import subprocess
    import sys

    code = "import sys, scarbook.cli; print(sorted(m for m in ('anthropic', 'httpx', 'textual') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
