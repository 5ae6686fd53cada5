"""`scarbook eval`'s way down the house (issue 32.4): the face builds one request and nothing below it is
handed the Project.

The command (and the TUI's launch) reads the project once and hands the session layer one `EvalRequest`:
the options, a `SessionSite` (the project folder, scarbook.yaml as read, the history) and the cases as read.
From there each layer receives the values it needs — the site, the config, the judge's settings, the
judge's measured error — and none reaches back up for the project or for history's calibration. Read from
the code's syntax, so it is cheap and the same on every machine.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

PKG = REPO / "scarbook"

# what `scarbook eval` runs through below its command, and what the TUI's launch shares with it
PIPELINE = ("session/plan.py", "session/prepare.py", "session/estimate.py", "session/against.py",
            "session/report.py", "run/plan.py", "run/session.py", "run/runner.py", "run/ray/executor.py",
            "cli/eval_run.py", "cli/drive.py", "cli/estimate.py", "cli/outcome.py", "cli/against.py")


def tree(rel: str) -> ast.Module:
    return ast.parse((PKG / rel).read_text(encoding="utf-8"))


def runtime_imports(module: ast.Module) -> set[str]:
    """The scarbook modules imported outside `if TYPE_CHECKING:` blocks (function-level ones too)."""
    skip: set[int] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = set()
    for node in ast.walk(module):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def functions(module: ast.Module):
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


@pytest.mark.parametrize("rel", PIPELINE)
def test_no_layer_below_the_faces_is_handed_the_project(rel: str) -> None:
    module = tree(rel)
    assert "scarbook.project" not in runtime_imports(module), f"{rel} imports scarbook.project"
    handed = [f"{fn.name}({arg.arg}: {ast.unparse(arg.annotation)})" for fn in functions(module)
              for arg in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)
              if arg.annotation is not None and "Project" in ast.unparse(arg.annotation).replace("ProjectFolders", "")
              and fn.name != "of"]  # SessionSite.of(project): where a face (or a test) makes the site
    assert handed == [], f"{rel}: {handed}"


def test_preparing_a_session_never_reads_the_calibration_itself() -> None:
    """The judge's measured error is handed to run/session.prepare_session (session/prepare.py reads it,
    once), so the run layer never climbs back into history's calibration."""
    assert not {m for m in runtime_imports(tree("run/session.py")) if m.startswith("scarbook.history")}
    prepare = next(fn for fn in functions(tree("run/session.py")) if fn.name == "prepare_session")
    assert "judge_error" in [a.arg for a in prepare.args.kwonlyargs]


def calls_in(fn: ast.AST, name: str) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(name)]


def test_eval_hands_one_request_down_and_the_project_goes_no_further() -> None:
    command = next(fn for fn in functions(tree("cli/eval_cmd.py")) if fn.name == "eval_command")
    [plan] = calls_in(command, "plan_eval")
    assert len(plan.args) == 1 and not plan.keywords, ast.unparse(plan)
    passed = [ast.unparse(call) for call in ast.walk(command) if isinstance(call, ast.Call)
              for arg in (*call.args, *(k.value for k in call.keywords))
              if isinstance(arg, ast.Name) and arg.id in ("project", "ctx")]
    # the project is read (its folder, its config, its cases), never handed on
    assert passed == ["get_project(ctx)"], passed


def test_the_launch_screen_and_eval_start_a_session_through_the_same_use_cases() -> None:
    launch = tree("tui/screens/launch.py")
    app = tree("tui/session_host.py")  # the App's session side, moved out of tui/app.py
    eval_run = tree("cli/eval_run.py")
    [from_launch] = [c for fn in functions(launch) for c in calls_in(fn, "plan_eval")]
    assert len(from_launch.args) == 1 and not from_launch.keywords
    drive = tree("cli/drive.py")
    for face in (app, eval_run, drive):
        assert "scarbook.session.prepare" in runtime_imports(face)
    [prepared] = [fn for fn in functions(drive) if fn.name == "prepare_or_say"]  # noise's, verify --reproduce's
    assert calls_in(prepared, "prepare_eval"), "the CLI prepares through session/prepare.py's prepare_eval"


FACES = sorted(str(p.relative_to(PKG)) for folder in ("cli", "tui") for p in (PKG / folder).rglob("*.py"))


@pytest.mark.parametrize("rel", FACES)
def test_no_face_prepares_a_session_round_the_session_layer(rel: str) -> None:
    """`noise` and `verify --reproduce` called run/session.prepare_session themselves (issue 32): they missed
    what the session layer does for `eval` and the TUI's launch (the judge's calibration read once, the
    plan's defaults, scarbook.yaml's executor). Every face prepares through session/ (plan_eval, prepare_eval)."""
    assert not calls_in(tree(rel), "prepare_session"), f"{rel} prepares a session round session/prepare.py"


@pytest.mark.parametrize("rel", ["cli/noise_cmd.py", "cli/verify_cmd.py"])
def test_noise_and_reproduce_plan_and_prepare_as_eval_does(rel: str) -> None:
    module = tree(rel)
    assert calls_in(module, "plan_eval") and calls_in(module, "prepare_or_say") and calls_in(module, "connect_executor")


def test_the_pipeline_list_names_real_files() -> None:
    assert all(Path(PKG / rel).is_file() for rel in PIPELINE)


def test_the_calibration_is_read_once_as_the_session_is_prepared() -> None:
    """session/prepare.py reads history's calibration and hands it on (Preparation.calibration): the report
    and the TUI's live screen take that reading instead of reading calibration.json and history again."""
    for rel in ("session/report.py", "tui/app.py", "tui/session_host.py", "cli/eval_run.py"):
        assert not calls_in(tree(rel), "calibration_for"), f"{rel} reads the calibration again"
    [report] = [fn for fn in functions(tree("session/report.py")) if fn.name == "report_session"]
    assert "calibration" in [a.arg for a in report.args.args], "report_session is handed the calibration"
    [reported] = calls_in(tree("cli/eval_run.py"), "report_session")
    assert "prep.calibration" in [ast.unparse(a) for a in reported.args]
    assert "calibration=prep.calibration" in ast.unparse(tree("tui/session_host.py"))


def test_preparing_writes_no_case_file_and_the_runner_counts_the_runs() -> None:
    """Preparing a session only checks and builds: the rubric items' ids go into case.yaml as the session
    starts (run/runner.py), so a session refused after it was prepared writes nothing; and the progress
    line's total is the runner's own count (SessionStarted.planned_runs), not a second count in the plan."""
    assert not calls_in(tree("run/session.py"), "write_item_ids")
    assert calls_in(tree("run/runner.py"), "write_item_ids")
    [progress] = calls_in(tree("cli/eval_run.py"), "Progress")
    assert not progress.args[1:] and not progress.keywords, ast.unparse(progress)
    plan = next(n for n in ast.walk(tree("session/plan.py")) if isinstance(n, ast.ClassDef) and n.name == "EvalPlan")
    assert "total_runs" not in {fn.name for fn in functions(plan)}
