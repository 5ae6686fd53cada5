"""`scarbook eval --agents` end to end (issue 36): two real command agents that pass at known rates (90%
and 60% per ten blocks) in one session, decided "worse" where they differ, the blocks, the record, the
JSON report; and every bad input said with exit 2 naming the problem and the known names."""

from __future__ import annotations

import json
from collections import Counter

import pytest

# Each agent reads its run number k from its workspace's name (workspaces/<session>/<case>/<k>) and passes
# on the first `$1` of every ten blocks (block b = (k - 1) / 2 holds one run of each of the two agents):
# a pass rate known exactly, whatever order the blocks ran in. (${PWD##*/}: the shell's own basename, no process)
AGENT = """\
#!/bin/sh
k=${PWD##*/}
block=$(( (k - 1) / 2 ))
if [ $(( block % 10 )) -lt "$1" ]; then echo ok > out.txt; else echo bad > out.txt; fi
echo done
"""

CONFIG = """\
agent: {type: demo}
isolation: none
concurrency: 8
agents:
  base: {type: command, argv: [./agent.sh, "9"]}
  cand: {base: base, argv: [./agent.sh, "6"]}
  twin: {base: base}
gate:
  compare: {baseline: base, margin: 0.05}
"""

CASE = "id: {cid}\ntask: write ok to out.txt\nchecks: [{{type: contains, path: out.txt, text: ok}}]\n"


def _project(project, config: str = CONFIG, cases: tuple[str, ...] = ("alpha", "beta")):
    script = project.root / "agent.sh"
    script.write_text(AGENT)
    script.chmod(0o755)
    project.config(config, gate=None)
    for cid in cases:
        project.case(cid, CASE.format(cid=cid))
    return project


def _table(stdout: str) -> dict[str, list[str]]:
    lines = stdout.splitlines()
    assert lines[0].split()[:4] == ["case", "base", "(baseline)", "cand"], lines[0]
    rows = {}
    for line in lines[2:]:
        if not line.strip():
            break
        rows[line.split()[0]] = line.split()
    return rows


def test_a_worse_candidate_is_decided_worse_where_it_differs_and_the_gate_exits_1(project, tmp_path) -> None:
    _project(project)
    out = tmp_path / "report.json"
    result = project.cli("eval", "--agents", "base,cand", "--runs", "40", "-q", "--json", str(out))
    assert result.exit_code == 1, result.stdout + result.stderr
    rows = _table(result.stdout)
    for cid in ("alpha", "beta"):
        assert rows[cid][1:] == ["90%", "(77–96%)", "36/40", "60%", "(45–74%)", "24/40", "-30", "[-47,", "-11]", "WORSE",
                                 "INFERIOR"]
    assert "cand: -30 points on the mean of 2 cases (undecided)" in result.stdout
    assert "agents: base (baseline) = command: ./agent.sh 9; cand = command: ./agent.sh 6" in result.stdout

    report = json.loads(out.read_text())
    assert report["exit_code"] == 1
    assert [a["name"] for a in report["session"]["agents"]] == ["base", "cand"]
    agents = report["agents"]
    assert agents["baseline"] == "base" and agents["candidates"] == ["cand"]
    alpha = next(c for c in agents["cases"] if c["case"] == "alpha")
    assert alpha["agents"]["base"]["rate"] == 0.9 and alpha["agents"]["cand"]["rate"] == 0.6
    assert alpha["comparisons"][0]["decision"] == "worse"
    assert alpha["comparisons"][0]["margin_decision"] == "inferior"
    assert [a["cost"]["runs"] for a in agents["list"]] == [80, 80]

    # every run records its agent; each block (k = 2b-1, 2b) holds one run of each, in an order drawn per block
    runs = report["runs"]
    assert Counter((r["case_id"], r["agent"]) for r in runs) == {
        (c, a): 40 for c in ("alpha", "beta") for a in ("base", "cand")}
    for cid in ("alpha", "beta"):
        by_k = {r["k"]: r["agent"] for r in runs if r["case_id"] == cid}
        assert sorted(by_k) == list(range(1, 81))
        blocks = [(by_k[2 * b + 1], by_k[2 * b + 2]) for b in range(40)]
        assert all(sorted(pair) == ["base", "cand"] for pair in blocks)
        assert len(set(blocks)) == 2  # the baseline does not always run first

    # history keeps the agents: `scarbook show` says whose each run is
    show = project.cli("show", "alpha", "--session", report["session"]["id"])
    assert show.exit_code == 0
    assert "agent cand: " in show.stdout and "agent base: " in show.stdout
    only = project.cli("show", "alpha", "--session", report["session"]["id"], "--agent", "cand")
    assert only.stdout.count("\nrun ") == 40 and "agent base: " not in only.stdout
    wrong = project.cli("show", "alpha", "--session", report["session"]["id"], "--agent", "other")
    assert wrong.exit_code == 2
    assert wrong.stderr.strip() == f"scarbook: --agent other: session {report['session']['id']} ran the agents base, cand"


def test_the_same_agent_twice_is_not_worse_and_undecided_follows_the_gate(project) -> None:
    _project(project, cases=("alpha",))
    result = project.cli("eval", "--agents", "base,twin", "--runs", "10", "-q")
    assert result.exit_code == 0, result.stdout + result.stderr
    row = result.stdout.splitlines()[2].split()
    assert row[0] == "alpha" and row[-2:] == ["undecided", "undecided"]
    failing = project.cli("eval", "--agents", "base,twin", "--runs", "10", "-q", "--undecided", "fail")
    assert failing.exit_code == 3


def test_a_single_agent_session_is_recorded_as_before(project, tmp_path) -> None:
    _project(project, cases=("alpha",))
    out = tmp_path / "one.json"
    result = project.cli("eval", "--runs", "2", "-q", "--json", str(out))
    assert result.exit_code in (0, 1, 3)
    report = json.loads(out.read_text())
    assert "agents" not in report and "agents" not in report["session"]
    assert all("agent" not in r for r in report["runs"])
    history = next((project.workspaces / "history").glob("*/runs-alpha.jsonl")).read_text()
    assert all("agent" not in json.loads(line) for line in history.splitlines())


KNOWN = "agents in scarbook.yaml: base, cand, twin"


@pytest.mark.parametrize(("args", "message"), [
    (("--agents", "base,nope"), f"scarbook: --agents names 'nope', which is not an agent of scarbook.yaml — {KNOWN}"),
    (("--agents", "base"), "scarbook: --agents compares two or more agents (the first is the baseline), got only "
                           f"'base' — name another; {KNOWN}"),
    (("--agents", "base,cand,base"), f"scarbook: --agents names 'base' twice — each agent runs once a block; {KNOWN}"),
    (("--agents", "cand,base"), "scarbook: gate.compare.baseline is 'base', but --agents puts 'cand' first (the first "
                                "is the baseline) — put base first"),
    (("--agents", "base,cand", "--against", "baseline"),
     "scarbook: --agents cannot be combined with --against: it compares one agent's session with another session; "
     "--agents compares the agents within this session"),
    (("--agents", "base,cand", "--judge-batch"),
     "scarbook: --agents cannot be combined with --judge-batch: a comparison is decided when its verdicts are in; "
     "judge it online"),
])
def test_bad_agents_are_refused_before_any_run(project, args, message) -> None:
    _project(project, cases=("alpha",))
    result = project.cli("eval", "--runs", "3", *args)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == message
    assert not (project.workspaces / "history").exists() or not any((project.workspaces / "history").glob("2*"))


@pytest.mark.parametrize(("agents", "message"), [
    ("  a: {base: b}\n", "{path}:3: agents.a.base names 'b', which is not an agent here — agents in scarbook.yaml: a"),
    ("  a: {base: b}\n  b: {base: a}\n",
     "{path}:4: agents.b.base makes a cycle: a -> b -> a — one agent of the cycle must be written out with its type:"),
    ("  a: {type: demo}\n  a: {type: demo}\n",
     "{path}:4: duplicate key 'a' under agents (first given at line 3) — give each its own name, or keep one of "
     "them (agents holds: a)"),
    ("  a: {type: demo}\n  b: {base: a, args: [--fast]}\n",
     "{path}:4: agents.b.args: 'demo' agents take no arguments — leave args out, or overlay a command, claude-code "
     "or codex agent"),
    ("  a: {type: demo, colour: red}\n",
     "{path}:3: agents.a: unknown key 'colour' for a demo agent — a demo agent takes: type, seed, profile, draws"),
    # a null key read as the name 'None': `~:` made an agent no one wrote
    ("  ~: {type: demo}\n", "{path}:3: agent name '~' must be 1-64 letters, digits, '.', '_' or '-' (starting with a "
                           "letter or digit) — rename it (names are what --agents takes, separated by commas)"),
    # a name the report's decisions use: "WORSE: -33 points on the mean of 1 case (undecided)" read as a verdict
    ("  base: {type: demo}\n  WORSE: {type: demo}\n",
     "{path}:4: agent name 'WORSE' is a word the comparison says of a candidate (better, worse, same, undecided, ok, "
     "inferior): in its table and under it the name would read as a decision — rename it, e.g. worse-agent"),
    ("  a: {type: demo}\ngate: {compare: {baseline: x}}\n",
     "{path}:4: gate.compare.baseline names 'x', which is not an agent here — agents in scarbook.yaml: a"),
])
def test_bad_agents_in_scarbook_yaml_are_said_with_their_line(project, agents, message) -> None:
    path = project.config("agent: {type: demo}\nagents:\n" + agents, gate=None)
    project.case("alpha", CASE.format(cid="alpha"))
    result = project.cli("eval", "--runs", "1")
    assert result.exit_code == 2
    assert result.stderr.strip() == "scarbook: " + message.format(path=path)


def test_a_candidate_whose_preflight_fails_stops_the_session_before_any_run(project) -> None:
    _project(project, config=CONFIG.replace('cand: {base: base, argv: [./agent.sh, "6"]}',
                                            "cand: {type: command, argv: [./missing-agent]}"), cases=("alpha",))
    result = project.cli("eval", "--agents", "base,cand", "--runs", "2")
    assert result.exit_code == 2
    assert result.stderr.startswith("scarbook: agent cand: ")
    assert "missing-agent" in result.stderr
    assert not any((project.workspaces / "history").glob("2*"))


def test_an_overlay_sets_variables_and_adds_arguments(project) -> None:
    """candidate: {base: baseline, env: {PROMPT_VERSION: v2}, args: [...]}: the variable reaches the
    candidate's process only, the arguments follow the base's."""
    script = project.root / "echo.sh"
    script.write_text('#!/bin/sh\necho "${PROMPT_VERSION:-v1} $*" > out.txt\n')
    script.chmod(0o755)
    project.config("isolation: none\nagents:\n  base: {type: command, argv: [./echo.sh, one]}\n"
                   "  cand: {base: base, env: {PROMPT_VERSION: v2}, args: [--model, big]}\n", gate=None)
    project.case("alpha", "id: alpha\ntask: t\nchecks: [{type: contains, path: out.txt, text: v2 one --model big}]\n")
    result = project.cli("eval", "--agents", "base,cand", "--runs", "3", "-q", "--keep-all")
    rows = result.stdout.splitlines()[2].split()
    assert rows[1:7] == ["0%", "(0–56%)", "0/3", "100%", "(44–100%)", "3/3"], result.stdout
    # the agents' line names the variables an overlay sets (not their values: the step summary is public), so
    # two agents that differ only there read apart — before, `b = command: …` repeated the base's words
    assert "agents: base (baseline) = command: ./echo.sh one; cand = command: ./echo.sh one --model big (env: " \
           "PROMPT_VERSION)" in result.stdout


def test_quality_and_cost_together(project, tmp_path) -> None:
    """Each agent reports its spend through $SCARBOOK_USAGE; the table's last lines put each candidate's
    difference beside its cost against the baseline's ("2.0× the cost"), and the JSON keeps every figure."""
    script = project.root / "spend.sh"
    script.write_text('#!/bin/sh\necho ok > out.txt\n'
                      'echo "{\\"input_tokens\\": $1, \\"output_tokens\\": 10, \\"cost_usd\\": $2}" >> "$SCARBOOK_USAGE"\n')
    script.chmod(0o755)
    project.config("isolation: none\nagents:\n  cheap: {type: command, argv: [./spend.sh, '100', '0.01']}\n"
                   "  dear: {type: command, argv: [./spend.sh, '300', '0.02']}\n", gate=None)
    project.case("alpha", CASE.format(cid="alpha"))
    out = tmp_path / "cost.json"
    result = project.cli("eval", "--agents", "cheap,dear", "--runs", "4", "-q", "--json", str(out))
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "dear: +0 points on the mean of 1 case (undecided), 2.0× the cost" in result.stdout
    assert "cost cheap: 4 runs, 440 agent tokens, $0.0400 agent + $0.0000 judge" in result.stdout
    costs = {a["name"]: a["cost"] for a in json.loads(out.read_text())["agents"]["list"]}
    assert (costs["cheap"]["usd_per_run"], costs["dear"]["usd_per_run"]) == (0.01, 0.02)
    assert (costs["cheap"]["agent_tokens"], costs["dear"]["agent_tokens"]) == (440, 1240)


def test_a_dry_run_counts_every_agents_runs(project) -> None:
    _project(project)
    result = project.cli("eval", "--agents", "base,cand,twin", "--runs", "10", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == "dry run: 2 cases x 10 runs x 3 agents (base, cand, twin) = 60 agent runs"
    assert not (project.workspaces / "history").exists()


def test_each_progress_line_names_the_agent_whose_run_it_is(project) -> None:
    """Without -q, a session of several agents says whose each finished run is; one agent's lines are as
    before."""
    _project(project, cases=("alpha",))
    result = project.cli("eval", "--agents", "base,cand", "--runs", "3")
    lines = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 6, result.stderr
    assert sorted(line.split(": ")[0].split("] ")[1].split(" ", 2)[2] for line in lines) == ["(base)"] * 3 + ["(cand)"] * 3
    single = project.cli("eval", "--runs", "1")
    assert [line for line in single.stderr.splitlines() if line.startswith("[")] == [
        "[1/1] alpha #1: fail — check 1 (contains): out.txt does not exist"]


def test_show_without_a_session_shows_every_agents_runs_of_the_latest(project) -> None:
    """Before: with no --session, `show CASE` read the case's latest runs as the library reads them (the
    baseline's alone) under a header naming both agents, and `--agent cand` printed the header and no run."""
    _project(project, cases=("alpha",))
    assert project.cli("eval", "--agents", "base,cand", "--runs", "2", "-q").exit_code in (0, 3)
    shown = project.cli("show", "alpha")
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    assert shown.stdout.count("\nrun ") == 4
    assert shown.stdout.count(", agent cand: ") == 2 and shown.stdout.count(", agent base: ") == 2
    only = project.cli("show", "alpha", "--agent", "cand")
    assert only.exit_code == 0, only.stdout + only.stderr
    assert only.stdout.count("\nrun ") == 2 and only.stdout.count(", agent cand: ") == 2


def test_a_comparison_without_verdicts_does_not_say_the_cases_have_no_rates(project) -> None:
    """Before: 'cand: no difference to say (no case has a rate on both sides)' under a table that shows a rate
    on both sides of every case — what was missing was enough runs for a verdict (--min-verdicts)."""
    _project(project, cases=("alpha",))
    result = project.cli("eval", "--agents", "base,cand", "--runs", "2", "--min-verdicts", "5", "-q")
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "alpha (cand): no verdict — only 2 of the baseline's 2 runs reached a verdict; a comparison needs at " \
           "least 5 on each side" in result.stdout
    assert "cand: no difference to say (no case has a verdict on both sides: see the no-verdict lines above), " \
           in result.stdout


# An agent the machine fails: from block $1 of every ten on it dies of the model API's 529 (its retry, in
# attempt-2/<case>/<k>, dies again), so its runs there end as errors (infra retries ran out), never as fails.
INFRA_AGENT = """\
#!/bin/sh
k=${PWD##*/}
block=$(( (k - 1) / 2 ))
if [ $(( block % 10 )) -ge "$1" ]; then
  echo "anthropic.InternalServerError: Error code: 529 - {'type': 'overloaded_error'}" >&2; exit 1
fi
echo ok > out.txt
"""


def _infra_project(project, blocks: str):
    _project(project, config=CONFIG.replace('cand: {base: base, argv: [./agent.sh, "6"]}',
                                            f'cand: {{type: command, argv: [./infra.sh, "{blocks}"]}}'), cases=("alpha",))
    script = project.root / "infra.sh"
    script.write_text(INFRA_AGENT)
    script.chmod(0o755)
    return project


def test_runs_the_machine_failed_are_errors_in_the_comparison_not_fails(project, tmp_path) -> None:
    """Before: the candidate's 8 runs that died of a 529 (retries ran out) counted as fails — 12/20, 60%,
    compared with the baseline's 90% as if the agent had failed them — while the exit code said 3."""
    _infra_project(project, "6")
    out = tmp_path / "report.json"
    result = project.cli("eval", "--agents", "base,cand", "--runs", "20", "-q", "--json", str(out))
    assert result.exit_code == 3, result.stdout + result.stderr
    assert _table(result.stdout)["alpha"][1:7] == ["90%", "(70–97%)", "18/20", "100%", "(76–100%)", "12/12"]
    assert "12/12 +8 err" in result.stdout
    assert "session " in result.stdout and "; 40 runs — 30 pass, 2 fail, 8 error" in result.stdout
    report = json.loads(out.read_text())
    cand = report["agents"]["cases"][0]["agents"]["cand"]
    assert (cand["passes"], cand["fails"], cand["errors"], cand["rate"]) == (12, 0, 8, 1.0)
    assert [(a["name"], a["errors"]) for a in report["agents"]["list"]] == [("base", 0), ("cand", 8)]
    assert report["agents"]["cases"][0]["comparisons"][0]["diff"] == 0.1
    assert {(r["agent"], r["status"]) for r in report["runs"] if r["cause"] and r["cause"]["kind"] == "infra"} == {
        ("cand", "error")}


def test_a_case_with_too_many_errors_on_one_side_says_it_cannot_be_compared(project) -> None:
    _infra_project(project, "2")
    result = project.cli("eval", "--agents", "base,cand", "--runs", "20", "-q")
    assert result.exit_code == 3, result.stdout + result.stderr
    assert ("alpha (cand): no verdict — only 4 of the candidate's 20 runs reached a verdict (16 errors); a comparison "
            "needs at least 10 on each side (errors cannot count as evidence)") in result.stdout


def test_one_run_a_side_is_never_enough_to_call_a_candidate_non_inferior(project) -> None:
    """0/1 against 1/1 was called non-inferior ('ok') by the interval's own one-sided test, so a release gate
    (`--undecided fail`) went green on two runs; agents on the margin's boundary give that outcome 22.6% of the
    time at the worst rate, not 5% (stats/margin_exact.py). Now undecided: exit 3 under `undecided: fail`."""
    _project(project, CONFIG.replace('"9"]', '"0"]').replace('"6"]', '"9"]'), cases=("alpha",))
    result = project.cli("eval", "--agents", "base,cand", "--runs", "1", "-q", "--undecided", "fail")
    assert result.exit_code == 3, result.stdout + result.stderr
    rows = _table(result.stdout)
    assert rows["alpha"][1:] == ["0%", "(0–79%)", "0/1", "100%", "(21–100%)", "1/1", "+100", "[-12,", "+100]",
                                 "undecided", "undecided"]


@pytest.mark.parametrize(("runs", "words"), [
    ("3", "no row can be called better or worse at these run counts (not even its most lopsided outcome, e.g. 3/3 "
          "against 0/3, would be significant) — more runs a side decide"),
    ("40", "better/worse when the Holm-corrected Fisher test (over the 1 of 2 rows, cases × candidates and the suite, "
           "whose run counts could reach significance) and the 95% interval agree — at most 5% chance of any wrong one"),
])
def test_the_decisions_line_says_which_rows_could_be_decided(project, runs, words) -> None:
    """It said "(over 0 rows: cases × candidates and the suite)" under a table of two rows when none could be tested
    (3 runs a side: 3/3 against 0/3 is p = 0.1), and "over 1 row" when 1 of 2 could (one case: its suite row is its row)."""
    _project(project, cases=("alpha",))
    result = project.cli("eval", "--agents", "base,cand", "--runs", runs, "-q")
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("decisions: "))
    assert line == (f"decisions: {words}; same when two one-sided tests put the difference within ±5 points; the gate "
                    "is red when a candidate is shown worse by more than that margin and ok when shown not worse, each "
                    "one-sided at 5% — the 90% interval's end, so an ok row's 95% interval can reach past −5 "
                    "(docs/statistics.md)")


def test_an_agent_named_null_is_the_name_written(project) -> None:
    """YAML reads the key `null:` as no value; the loader made it the name 'None', which --agents then had to say."""
    project.config("agent: {type: demo}\nagents:\n  null: {type: demo, seed: 7}\n  b: {type: demo, seed: 8}\n",
                   gate=None)
    project.case("alpha", CASE.format(cid="alpha"))
    result = project.cli("eval", "--runs", "1", "--agents", "null,b", "-q")
    assert result.exit_code in (0, 1, 3), result.stderr
    assert "agents: null (baseline)" in result.stdout, result.stdout
    wrong = project.cli("eval", "--runs", "1", "--agents", "None,b")
    assert wrong.stderr.strip().splitlines()[-1] == ("scarbook: --agents names 'None', which is not an agent of "
                                                     "scarbook.yaml — agents in scarbook.yaml: null, b")


def test_the_decision_words_refused_as_names_are_the_reports_own() -> None:
    from scarbook.agents.named import DECISION_WORDS
    from scarbook.reports.versus_table import CALL_WORDS, MARGIN_WORDS

    said = {w.lower() for w in [*CALL_WORDS.values(), *MARGIN_WORDS.values()] if " " not in w}  # (a name has none)
    assert said == set(DECISION_WORDS)
