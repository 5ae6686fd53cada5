"""The CLI over import / diff / lint / --runs auto, on real files and the real demo agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from scarbook.cases.io import load_case
from scarbook.cli import main
from tests.helpers.judge_server import judge_server, tool_reply  # noqa: F401
from tests.helpers.paths import REPO, TRANSCRIPTS
from tests.helpers.pattern_agent import PATTERN_AGENT

# the demo agent runs in this process (tests/helpers/inprocess_demo.py): these tests are about what scarbook
# shows and computes, not about the agent's process
pytestmark = pytest.mark.usefixtures("inprocess_demo")


@pytest.fixture
def bundled(tmp_path, monkeypatch):
    monkeypatch.setenv("SCARBOOK_DEMO_DELAY", "0")
    shutil.copytree(REPO / "cases", tmp_path / "cases")
    shutil.copy(REPO / "scarbook.yaml", tmp_path / "scarbook.yaml")
    return tmp_path


def run(root: Path, *args: str, input: str | None = None):
    if not (root / "scarbook.yaml").exists():  # a project (every command needs one): all defaults
        (root / "scarbook.yaml").write_text("")
    return CliRunner().invoke(main, ["-C", str(root), *args], input=input, catch_exceptions=False)


def test_import_claude_code_log_writes_a_draft_case_with_artifact_and_seeds(tmp_path):
    res = run(tmp_path, "import", str(TRANSCRIPTS / "claude_code_session.jsonl"), "--id", "cc-scar",
              "--artifact", "2", "--seed-suggested")
    assert res.exit_code == 0, res.output
    case = load_case(tmp_path / "cases" / "cc-scar")
    assert case.task == "Extract the first line of README.md and write it to tmp.txt"
    assert case.scar.artifact_at == "tmp.txt"
    assert (case.root / case.scar.failed_artifact).read_text() == "# tiny-agent\nA tiny agent!\n"
    assert (case.root / "seed" / "README.md").read_text().startswith("# tiny-agent\n")
    assert (case.root / "seed" / "docs" / "notes.md").is_file()
    assert not (case.root / "seed" / "tmp.txt").exists()  # the agent's own writes are not seeds
    # the draft's only check (file_exists) passes the failed artifact: verify says so
    verify = run(tmp_path, "verify", "cc-scar")
    assert verify.exit_code == 1
    assert "cc-scar  misses the scar" in verify.output


def test_import_list_writes_nothing(tmp_path):
    res = run(tmp_path, "import", str(TRANSCRIPTS / "claude_code_session.jsonl"), "--list")
    assert res.exit_code == 0
    assert "format: claude-code" in res.output
    assert "  2  file         file tmp.txt (final content)" in res.output
    assert not (tmp_path / "cases").exists()


def test_import_unknown_file_names_what_it_saw_in_one_line(tmp_path):
    res = run(tmp_path, "import", str(TRANSCRIPTS / "unknown.json"), "--list")
    assert res.exit_code == 2
    assert res.output == (
        f"scarbook: {TRANSCRIPTS / 'unknown.json'}: not a transcript scarbook can read: a JSON object with keys hello; "
        f"no format is close; `scarbook import {TRANSCRIPTS / 'unknown.json'} --format plain` keeps the whole file as "
        "the failed artifact\n")


def test_diff_names_the_regressed_case_and_gates_with_fail_on_regression(bundled):
    assert run(bundled, "eval", "-q", "-n", "20", "-l", "before").exit_code == 0
    cfg = bundled / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("type: demo", "type: demo\n  profile: regressed"))
    assert run(bundled, "eval", "-q", "-n", "20", "-l", "after").exit_code == 1
    res = run(bundled, "diff", "before", "after")
    assert res.exit_code == 0, res.output
    lines = {line.split()[0]: line for line in res.output.splitlines() if line[:1].isalpha()}
    assert lines["write-one-line"].rstrip().endswith("regressed")
    for cid in ("fix-json-config", "rename-function", "review-api-claims"):
        assert lines[cid].rstrip().endswith("no detectable change")
    assert "regressed: write-one-line" in res.output
    assert run(bundled, "diff", "before", "after", "--fail-on-regression").exit_code == 1


def test_diff_refuses_when_checks_changed_unless_forced(bundled):
    run(bundled, "eval", "-q", "-n", "3", "write-one-line")
    case_yaml = bundled / "cases" / "write-one-line" / "case.yaml"
    case_yaml.write_text(case_yaml.read_text().replace("equals: 1", "max: 2"))
    run(bundled, "eval", "-q", "-n", "3", "write-one-line")
    res = run(bundled, "diff")
    assert res.exit_code == 2
    assert ("scarbook: cases changed their task or checks between the sessions: write-one-line — their rates "
            "measure different things; re-run them, or pass --force") in res.output
    assert run(bundled, "diff", "--force").exit_code == 0


def test_diff_refuses_a_skip_judge_session_against_a_judged_one_unless_forced(bundled, judge_server, monkeypatch):
    # Issue 12 repro: a --skip-judge (partial) session and a judged one were compared without a word.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    judge_server.default = tool_reply([("PASS", "one line")])
    cfg = bundled / "scarbook.yaml"
    cfg.write_text(cfg.read_text().replace("judge:\n", f"judge:\n  base_url: {judge_server.url}\n  max_retries: 0\n")
                   .replace("type: demo", "type: demo\n  seed: 7"))  # its first 3 runs pass the rules
    case_yaml = bundled / "cases" / "write-one-line" / "case.yaml"
    case_yaml.write_text(case_yaml.read_text().replace(
        "checks:\n", "checks:\n  - {type: llm_judge, artifact: tmp.txt, rubric: [tmp.txt holds one line]}\n"))
    assert run(bundled, "eval", "-q", "-n", "3", "write-one-line", "-l", "judged").exit_code == 0
    assert judge_server.requests  # the judged session did grade
    run(bundled, "eval", "-q", "-n", "3", "write-one-line", "--skip-judge", "-l", "rules-only")
    skipped_id = next(line.split()[0] for line in run(bundled, "sessions").output.splitlines() if "rules-only" in line)
    res = run(bundled, "diff", "judged", "rules-only")
    assert res.exit_code == 2
    assert res.stderr.startswith(f"scarbook: session {skipped_id} skipped its judge checks (--skip-judge: partial) "
                                 "and session ")
    assert res.stderr.rstrip().endswith("graded them — their rates measure different checks; compare two judged "
                                        "sessions (re-run without --skip-judge), or pass --force")
    forced = run(bundled, "diff", "judged", "rules-only", "--force")
    assert forced.exit_code == 0
    assert f"warning (--force): session {skipped_id} skipped its judge checks" in forced.stdout


def test_lint_flags_the_vague_rubric_of_the_seed_story(tmp_path):
    folder = tmp_path / "cases" / "review"
    folder.mkdir(parents=True)
    (folder / "case.yaml").write_text(
        "id: review\ntask: review the draft\nchecks:\n  - type: llm_judge\n    rubric:\n"
        "      - Evaluate whether this review output is good\n")
    res = run(tmp_path, "lint")
    assert res.exit_code == 0
    assert "vague-item" in res.output and "judge-only" in res.output
    assert run(REPO, "lint").output.startswith("no hints for 4 cases")


def test_runs_auto_decides_and_reports_runs_spent_vs_fixed_n(bundled):
    out = bundled / "r.json"
    res = run(bundled, "eval", "-q", "--runs", "auto", "--max-runs", "40", "--json", str(out))
    report = json.loads(out.read_text())
    decisions = report["session"]["decisions"]
    assert set(decisions) == {"fix-json-config", "rename-function", "review-api-claims", "write-one-line"}
    assert "adaptive (--runs auto):" in res.output
    spent = len(report["runs"])
    assert spent < 40 * 4  # decided cases stopped early
    per_case = {c: sum(1 for r in report["runs"] if r["case_id"] == c) for c in decisions}
    for cid, verdict in decisions.items():
        if verdict != "undecided":
            assert per_case[cid] < 40
        else:
            assert per_case[cid] == 40


def test_diff_refuses_two_skip_judge_sessions_they_have_no_rates(bundled):
    # Issue 22: two --skip-judge sessions compared as 0% vs 0% ("no detectable change" from 2 fails to 8).
    case_yaml = bundled / "cases" / "write-one-line" / "case.yaml"
    case_yaml.write_text(case_yaml.read_text().replace(
        "checks:\n", "checks:\n  - {type: llm_judge, artifact: tmp.txt, rubric: [tmp.txt holds one line]}\n"))
    for label in ("a", "b"):
        run(bundled, "eval", "-q", "-n", "3", "write-one-line", "--skip-judge", "-l", label)
    res = run(bundled, "diff", "a", "b")
    assert res.exit_code == 2
    assert "both skipped their judge checks (--skip-judge: partial): their runs that passed the rule checks are " \
           "unjudged, so neither has a pass rate to compare" in res.stderr
    forced = run(bundled, "diff", "a", "b", "--force")
    assert forced.exit_code == 0
    row = next(line for line in forced.stdout.splitlines() if line.startswith("write-one-line"))
    assert "n/a" in row and "no detectable change" in row and "%" not in row.split("n/a")[0]


ALWAYS_WRITES = """
async def run(task, cwd):
    (cwd / "out.txt").write_text("ok")
    return "done"
"""


def _always_passes(root: Path):
    """`eval --runs auto` of one case at 80% that always passes: above at 12 of 12, its interval 74–100%."""
    (root / "cases" / "always").mkdir(parents=True)
    (root / "cases" / "always" / "case.yaml").write_text(
        "id: always\ntask: write out.txt\nthreshold: 0.8\nchecks:\n  - {type: file_exists, path: out.txt}\n")
    (root / "margin_agent.py").write_text(ALWAYS_WRITES)
    (root / "scarbook.yaml").write_text("agent: {type: python, function: margin_agent:run}\nconcurrency: 1\n")
    return run(root, "eval", "--runs", "auto")


def test_runs_auto_names_its_margin_where_its_interval_reaches_past_the_threshold(tmp_path):
    """12 passes of 12 at 80%: the rule (70% against 90%) says above, and the interval after the stop is
    74–100%, which reaches under 80%. Before, the CLI said 'decided above after 12 runs' beside '74–100%' with
    nothing about the margin the rule decided with; now the decision line and the summary name it (one
    function, run/gate.adaptive_words, that the live screen shows too)."""
    res = _always_passes(tmp_path)
    assert "always: decided above 80% (within its 10-point margin: its runs rule out 70% or less) after 12 runs" \
        in res.output, res.output
    assert ("always: above 80% (within its 10-point margin: its runs rule out 70% or less) — its 95% interval "
            "74–100% still reaches under 80%") in res.output, res.output


def test_the_table_names_a_runs_auto_decision_within_its_margin_in_its_gate_column(tmp_path):
    """The table's gate column said a bare "ok" beside 74–100% (the margin only in a line under it); it now says
    "above (10-pt margin)", as the step summary's cell, and the column widens for it so the runs strip stays under
    its heading (a table without such a case keeps its 10-wide column: tests/cli/test_eval.py)."""
    lines = _always_passes(tmp_path).stdout.splitlines()
    assert lines[:3] == [
        "case                     pass fail  err  rate  95% CI      pass@k pass^k  band   gate                 runs",
        "-" * 106,
        "always                     12    0    0  100%   74–100%      100%   100%  green  above (10-pt margin) " + "✓" * 12]


def test_runs_auto_names_the_true_margin_where_its_hypothesis_is_clipped(tmp_path):
    """At 8% the rule weighs 1% (8 − 10 points, kept off 0) against 18%, and at 95% 85% against 99% (95 + 10, kept
    off 1): "above 8%" rules out 1% or less, 7 points under the line, and "below 95%" 99% or more, 4 points over
    it. The CLI said "within its 10-point margin" for both (and the table "above (10-pt margin)")."""
    for cid, threshold, pattern in (("rare", 0.08, "pfffffffffp"), ("common", 0.95, "ppppppppppff")):
        (tmp_path / "cases" / cid).mkdir(parents=True)
        (tmp_path / "cases" / cid / "case.yaml").write_text(
            f"id: {cid}\ntask: {pattern}\nthreshold: {threshold}\nchecks:\n  - {{type: file_exists, path: out.txt}}\n")
    (tmp_path / "pattern_agent.py").write_text(PATTERN_AGENT)
    (tmp_path / "scarbook.yaml").write_text("agent: {type: python, function: pattern_agent:run}\nconcurrency: 1\n")
    res = run(tmp_path, "eval", "--runs", "auto")
    assert res.exit_code == 1, res.output
    assert "rare: decided above 8% (within its 7-point margin: its runs rule out 1% or less) after 11 runs" \
        in res.output, res.output
    assert "common: decided below 95% (within its 4-point margin: its runs rule out 99% or more) after 12 runs" \
        in res.output, res.output
    rows = {line.split()[0]: line for line in res.stdout.splitlines()[2:4]}
    assert " above (7-pt margin) " in rows["rare"] and " BELOW (4-pt margin) " in rows["common"], rows
