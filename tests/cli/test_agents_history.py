"""A session of several agents (issue 36) beyond its own table: --runs auto spends runs where the comparison
is open, --shard deals whole cases so every agent's runs of a case share a shard, `scarbook merge` joins them,
and the readers of one rate per case (list, trends, diff, baseline) read the baseline agent's runs;
`scarbook report` prints every agent."""

from __future__ import annotations

import json
import shutil
from collections import Counter

from tests.cli.test_eval_agents import AGENT, CASE

CONFIG = """\
agent: {type: demo}
isolation: none
concurrency: 8
agents:
  base: {type: command, argv: [./agent.sh, "9"]}
  never: {base: base, argv: [./agent.sh, "0"]}
  twin: {base: base}
"""


def _project(project, cases=("alpha", "beta", "gamma")):
    script = project.root / "agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    project.config(CONFIG, gate=None)
    for cid in cases:
        project.case(cid, CASE.format(cid=cid))
    return project


def test_runs_auto_stops_a_case_once_its_comparison_is_decided(project, tmp_path) -> None:
    """90% against 0%: decided worse at the first look (10 blocks); 90% against itself never closes at ±5
    points, so it runs to the cap (40 blocks)."""
    _project(project, cases=("alpha", "beta"))
    project.config(CONFIG + "  half: {base: base, argv: [./agent.sh, \"9\"]}\n", gate=None)
    out = tmp_path / "auto.json"
    result = project.cli("eval", "--agents", "base,never", "--runs", "auto", "--max-runs", "40", "-q", "--json", str(out))
    assert result.exit_code == 1, result.stdout + result.stderr
    report = json.loads(out.read_text())
    per_case = Counter(r["case_id"] for r in report["runs"])
    assert per_case == {"alpha": 20, "beta": 20}  # 10 blocks of 2 runs: decided at the first look
    assert report["session"]["gate"]["looks"] == [10, 20, 40]
    rows = {c["case"]: c["comparisons"][0] for c in report["agents"]["cases"]}
    assert {r["decision"] for r in rows.values()} == {"worse"}

    same = tmp_path / "same.json"
    result = project.cli("eval", "alpha", "--agents", "base,twin", "--runs", "auto", "--max-runs", "40", "-q",
                         "--json", str(same))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(json.loads(same.read_text())["runs"]) == 80  # open to the cap: 40 blocks of 2


def test_shards_keep_every_agents_runs_of_a_case_together_and_merge(project, tmp_path) -> None:
    _project(project)
    machines = []
    for i in (1, 2):
        machine = tmp_path / f"machine-{i}"
        shutil.copytree(project.root, machine / "proj")
        result = project.__class__(machine / "proj").cli("eval", "--agents", "base,never", "--runs", "10", "-q",
                                                        "--shard", f"{i}/2", "--session-id", "ci-7")
        assert result.exit_code == 0, result.stdout + result.stderr
        machines.append(machine / "proj")
    held = {}
    for i, machine in enumerate(machines, 1):
        folder = machine / "workspaces" / "history" / f"ci-7.shard-{i}-of-2"
        for runs_file in folder.glob("runs-*.jsonl"):
            runs = [json.loads(line) for line in runs_file.read_text().splitlines()]
            if runs:
                cid = runs[0]["case_id"]
                assert cid not in held, f"{cid} was split across shards"
                held[cid] = i
                assert Counter(r["agent"] for r in runs) == {"base": 10, "never": 10}
    assert sorted(held) == ["alpha", "beta", "gamma"] and set(held.values()) == {1, 2}

    out = tmp_path / "merged.json"
    merged = project.cli("merge", *[str(m / "workspaces" / "history") for m in machines], "--json", str(out))
    assert merged.exit_code == 1, merged.stdout + merged.stderr
    report = json.loads(out.read_text())
    assert [a["name"] for a in report["session"]["agents"]] == ["base", "never"]
    assert {c["comparisons"][0]["decision"] for c in report["agents"]["cases"]} == {"worse"}


def test_one_rate_per_case_is_the_baseline_agents(project) -> None:
    """`scarbook list`, `scarbook trends` and `scarbook baseline set` read the baseline agent's runs of a
    session of several agents (90%), never the mix with the candidate's (45%)."""
    _project(project, cases=("alpha",))
    assert project.cli("eval", "--agents", "base,never", "--runs", "10", "-q").exit_code == 1
    listing = project.cli("list")
    row = next(line for line in listing.stdout.splitlines() if line.startswith("alpha"))
    assert "90%" in row and "45%" not in row and "base (--agents)" in row
    trends = json.loads(project.cli("trends", "--json").stdout)
    point = trends["cases"][0]["points"][-1]
    assert point["passes"] == 9 and point["fails"] == 1
    # `scarbook diff` of two such sessions compares the baselines' runs (9/10 both times: no change)
    assert project.cli("eval", "--agents", "base,never", "--runs", "10", "-q").exit_code == 1
    diff = project.cli("diff", "previous", "latest")
    assert diff.exit_code == 0, diff.stdout + diff.stderr
    line = next(line for line in diff.stdout.splitlines() if line.startswith("alpha"))
    assert line.count("90%") == 2 and "45%" not in line
    # and says whose runs those are (before: only the config note, naming both agents of each session)
    heads = diff.stdout.splitlines()[:2]
    assert [h.split("  ", 1)[1] for h in heads] == ["(eval --agents base,never: the baseline base's runs)"] * 2, heads
    # `scarbook report` prints the session's comparison, every agent
    report = project.cli("report", "latest")
    assert report.stdout.splitlines()[0].split()[:4] == ["case", "base", "(baseline)", "never"], report.stdout
    assert "never: -90 points on the mean of 1 case (worse)" in report.stdout
    assert project.cli("baseline", "set").exit_code == 0
    blessed = json.loads((project.root / "scarbook-baseline.json").read_text())
    assert (blessed["cases"]["alpha"]["passes"], blessed["cases"]["alpha"]["fails"]) == (9, 1)


def test_a_report_later_reads_the_margin_the_session_ran_with(project) -> None:
    """The session records gate.compare (GateRecord.compare): `scarbook report` reads its comparison with the
    margin it ran under, whatever scarbook.yaml says now."""
    _project(project, cases=("alpha",))
    project.config(CONFIG + "gate: {compare: {baseline: base, margin: 0.1}}\n", gate=None)
    ran = project.cli("eval", "--agents", "base,twin", "--runs", "10", "-q")
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert "gate ±10 pts" in ran.stdout.splitlines()[0]
    session = json.loads(next((project.workspaces / "history").glob("*/session.json")).read_text())["session"]["1"]
    assert session["gate"]["compare"] == {"baseline": "base", "margin": 0.1}
    project.config(CONFIG + "gate: {compare: {baseline: base, margin: 0.05}}\n", gate=None)
    report = project.cli("report", "latest")
    assert "gate ±10 pts" in report.stdout.splitlines()[0], report.stdout


def agents_session(project, agents: str, label: str = "ab") -> str:
    """A project of one case (alpha) and a recorded session of `eval --agents AGENTS -n 2 -l LABEL`: its id."""
    _project(project, cases=("alpha",))
    first = project.cli("eval", "--agents", agents, "--runs", "2", "-q", "-l", label)
    assert first.exit_code in (0, 3), first.stdout + first.stderr
    return next(p.name for p in (project.workspaces / "history").iterdir())
