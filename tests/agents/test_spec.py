"""The typed agent spec: built once from scarbook.yaml's `agent:` (one row per type), and how argv is resolved."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scarbook.agents import AgentSpec, make_agent
from scarbook.agents.spec import CommandSpec, DemoSpec
from scarbook.run.session import SessionPlan, SessionSite, prepare_session
from tests.helpers.judge_server import judge_server, make_judge, tool_reply  # noqa: F401


def test_from_config_types_every_field():
    spec = AgentSpec.from_config({"type": "command", "argv": ["./a", "{task}"], "env": ["HOME"], "stdin": False,
                                  "max_output_bytes": 10})
    assert spec == CommandSpec(argv=("./a", "{task}"), stdin=False, env=("HOME",), max_output_bytes=10)
    assert AgentSpec.from_config({"type": "python", "function": "m:f"}).function == "m:f"  # type: ignore[attr-defined]
    assert AgentSpec.from_config(None) == DemoSpec()
    # a key no row declares is refused in the words scarbook.yaml's would get (there is no catch-all)
    with pytest.raises(ValueError) as exc:
        AgentSpec.from_config({"type": "demo", "seed": 7, "future_key": 1})
    assert str(exc.value) == "unknown key 'future_key' for a demo agent — a demo agent takes: type, seed, profile, draws"


@pytest.mark.parametrize("arg,expected", [
    ("agent.py", "{root}/agent.py"),  # a project file: absolute, since the agent runs in the workspace
    ("tools/run.sh", "{root}/tools/run.sh"),
    ("{root}/tools/run.sh", "{root}/tools/run.sh"),
    ("missing.py", "missing.py"),  # not a file in the project: kept (it may be one the workspace has)
    ("tools", "tools"),  # a folder: kept
    ("-m", "-m"),
    ("{task}", "{task}"),
    ("/abs/path.py", "/abs/path.py"),
    ("--config={root}/c.yaml", "--config={root}/c.yaml"),
])
def test_resolved_argv(tmp_path, arg, expected):
    (tmp_path / "agent.py").write_text("")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.sh").write_text("")
    spec = CommandSpec(argv=("python", arg))
    assert spec.resolved_argv(tmp_path) == ["python", expected.replace("{root}", str(tmp_path))]


def test_root_in_the_program_itself(tmp_path):
    spec = CommandSpec(argv=("{root}/bin/agent",))
    assert spec.resolved_argv(tmp_path) == [f"{tmp_path}/bin/agent"]
    agent = make_agent(spec, tmp_path)
    assert agent.label == "command: {root}/bin/agent"  # the label (and fingerprint) say what the config says


def test_an_agent_type_this_version_cannot_build_is_a_configuration_error(project):
    p = project.load()
    p = replace(p, config=p.config.with_overrides(agent={"type": "telepathy"}))  # the config is immutable
    prep = prepare_session(SessionSite.of(p), SessionPlan(p.load_cases().cases or [], runs=1))
    assert prep.session is None
    assert "agent.type must be one of demo, command, python, claude-code, codex, got 'telepathy' — write e.g. " \
           'agent: {type: command, argv: [./agent, "{task}"]}' in prep.errors


# -- the run split the Ray executor builds on ---------------------------------------------------


async def test_the_worker_part_pickles_and_the_driver_part_judges_it(tmp_path, judge_server):
    import pickle
    import sys

    from scarbook.cases.io import validate_case_data
    from scarbook.run.session_run import AWAITING_JUDGE, RunContext, judge_part, run_agent_part

    case = validate_case_data({"id": "c", "task": "t", "checks": [
        {"type": "llm_judge", "artifact": "a.txt", "rubric": ["says hello"]},
        {"type": "file_exists", "path": "a.txt"}]}, tmp_path / "case.yaml")
    agent = make_agent({"type": "command", "argv": [sys.executable, "-c", "open('a.txt','w').write('hello' * 100)"]})
    ctx = RunContext("s1", str(tmp_path / "ws"), default_timeout_s=30, judge_max_bytes=64)
    part = pickle.loads(pickle.dumps(await run_agent_part(ctx, pickle.loads(pickle.dumps(agent)), case, 1)))
    assert [(r.type, r.status) for r in part.record.checks] == [("llm_judge", "skipped"), ("file_exists", "pass")]
    assert part.record.checks[0].detail == AWAITING_JUDGE
    (inp,) = part.judge_inputs
    assert inp.index == 0 and inp.artifact.text == ("hello" * 100)[:64] and inp.artifact.truncated
    judge_server.push(tool_reply([("PASS", "it does")]))
    record = await judge_part(part, case, make_judge(judge_server, max_artifact_bytes=64))
    assert (record.status, record.reason, record.judge_calls) == ("pass", "all checks passed", 1)
    assert [r.status for r in record.checks] == ["pass", "pass"]
    assert "hello" in judge_server.user_texts()[0]
