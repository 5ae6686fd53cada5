"""The offline demo agent behaves like the flaky agent of the story: on write-one-line, out of ten
seeded runs, 7 clean, 2 verbose-but-correct, 1 that dumps the README and claims one line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import BUNDLED_CASES

README = (BUNDLED_CASES / "write-one-line" / "seed" / "README.md").read_text()


def _outcome(lines: list[dict]) -> str:
    calls = [ln for ln in lines if ln["type"] == "tool_call"]
    writes = [c["input"]["content"] for c in calls if c["name"] == "write_file"]
    if writes == [README]:
        return "dump"
    if sum(1 for c in calls if c["name"] == "list_dir") == 3:
        return "verbose"
    assert writes == [README.splitlines()[0] + "\n"], writes
    return "clean"


def _session(project, seed: int):
    project.bundled()
    project.config(f"agent: {{type: demo, seed: {seed}}}\nconcurrency: 4\n")
    result = project.cli("eval", "write-one-line", "--runs", "10", "--keep-all", "-q")
    history = project.load().history
    info = history.sessions()[0]
    return result, info, history.runs(info.id, "write-one-line")


def test_ten_seeded_runs_of_write_one_line(project) -> None:
    result, info, runs = _session(project, seed=11)
    assert result.exit_code == 0, result.output
    outcomes = {}
    for run in runs:
        transcript = project.workspaces / info.id / "write-one-line" / f"{run.k}.transcript.jsonl"
        assert run.transcript_path == str(transcript)
        lines = [json.loads(x) for x in transcript.read_text().splitlines()]
        assert lines[0] == {"type": "task", "text": "Extract the first line of README.md and write it to tmp.txt"}
        assert lines[-1]["type"] == "usage" and lines[-1]["input_tokens"] > 0
        final = [ln["text"] for ln in lines if ln["type"] == "final"]
        assert final == [run.output_excerpt.strip()]
        outcomes[run.k] = _outcome(lines)
    assert sorted(outcomes.values()).count("clean") == 7
    assert sorted(outcomes.values()).count("verbose") == 2
    assert sorted(outcomes.values()).count("dump") == 1
    # The dump is the only failure, caught by line_count, and it claimed one line.
    failed = [r for r in runs if r.status == "fail"]
    assert [outcomes[r.k] for r in failed] == ["dump"]
    assert failed[0].reason == "check 3 (line_count): tmp.txt has 7 lines, expected exactly 1"
    assert failed[0].output_excerpt == "done — the file contains one line\n"
    assert sum(r.status == "pass" for r in runs) / len(runs) == 0.9
    assert sum(r.agent_usage.output_tokens > 0 for r in runs) == 10  # $SCARBOOK_USAGE read back
    row = next(ln for ln in result.stdout.splitlines() if ln.startswith("write-one-line"))
    assert row.split()[:5] == ["write-one-line", "9", "1", "0", "90%"]


def test_the_seed_fixes_the_order(project, tmp_path: Path) -> None:
    _, _, first = _session(project, seed=3)
    order = [r.status for r in first]
    from tests.conftest import ProjectDir

    again = ProjectDir(tmp_path / "again")
    (again.root / "cases").mkdir(parents=True)
    _, _, second = _session(again, seed=3)
    assert [r.status for r in second] == order
    assert order.count("fail") == 1


def test_the_demo_agent_needs_the_standard_library_only() -> None:
    """scarbook runs it as `python -I -S demo.py` (no site-packages, no PYTHONPATH): a start a quarter of
    `-m scarbook.agents.demo`'s, which imported scarbook.agents first. An import from elsewhere breaks it."""
    import ast
    import sys

    import scarbook.agents.demo as demo
    from scarbook.agents import make_agent

    tree = ast.parse(Path(demo.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert imported - {"__future__"} <= sys.stdlib_module_names
    assert make_agent({"type": "demo", "seed": 4}).argv == [sys.executable, "-I", "-S", demo.__file__, "--seed", "4"]


def test_the_in_process_demo_agent_runs_as_the_program_does(project, tmp_path: Path, request) -> None:
    """tests/helpers/inprocess_demo.py stands in for the program in tests about numbers and screens: the same
    outcomes, final answers, transcripts and usage, run by run."""
    from tests.conftest import ProjectDir

    def runs_of(p):
        result, info, runs = _session(p, seed=5)
        transcripts = [(p.workspaces / info.id / "write-one-line" / f"{r.k}.transcript.jsonl").read_text()
                       for r in runs]
        return result.stdout, [(r.k, r.status, r.reason, r.output_excerpt, r.agent_usage) for r in runs], transcripts

    program = runs_of(project)
    built = request.getfixturevalue("inprocess_demo")
    in_process = ProjectDir(tmp_path / "in-process")
    (in_process.root / "cases").mkdir(parents=True)
    assert runs_of(in_process)[1:] == program[1:]
    assert [agent.runs for agent in built] == [10]  # it ran in-process indeed
# -- issue 22: independent draws ----------------------------------------------------------------


def _counts(seed: str, case: str, runs: int) -> int:
    from scarbook.agents.demo import MIXES, draw_outcome

    mix = MIXES["default"][case]
    return sum(draw_outcome(mix, seed, case, k) != next(iter(mix)) for k in range(1, runs + 1))


def test_independent_draws_show_sampling_noise_at_the_cases_true_rate() -> None:
    from scipy.stats import binom, chisquare

    from scarbook.agents.demo import MIXES, draw_outcome

    # 400 sessions of 10 runs of fix-json-config (true pass rate 80%: 8 clean of 10)
    passes = [sum(draw_outcome(MIXES["default"]["fix-json-config"], f"s{i}", "fix-json-config", k) == "clean"
                  for k in range(1, 11)) for i in range(400)]
    assert len(set(passes)) >= 5  # not only 8/10 and 9/10, as the deck dealt
    observed = [sum(p == x for p in passes) for x in range(11)]
    expected = binom.pmf(range(11), 10, 0.8) * 400
    # pool the sparse low counts so the chi-square test is valid
    obs = [sum(observed[:6]), *observed[6:]]
    exp = [sum(expected[:6]), *expected[6:]]
    assert chisquare(obs, exp).pvalue > 0.001


def test_a_seed_fixes_the_independent_draws(project, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SCARBOOK_DEMO_DRAWS")
    _, _, first = _session(project, seed=5)
    from tests.conftest import ProjectDir

    again = ProjectDir(tmp_path / "again")
    (again.root / "cases").mkdir(parents=True)
    _, _, second = _session(again, seed=5)
    assert [r.status for r in second] == [r.status for r in first]


def test_draws_is_a_demo_agent_setting(project) -> None:
    project.bundled()
    project.config("agent: {type: demo, draws: dice}\n")
    result = project.cli("eval", "-q")
    assert result.exit_code == 2
    assert result.stderr == (f"scarbook: {project.root / 'scarbook.yaml'}:1: agent.draws must be independent or deck, "
                             "got 'dice' — write draws: independent (each run drawn on its own) or deck (blocks of ten)\n")
