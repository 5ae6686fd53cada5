"""An agent that picks its output to make a case's pattern backtrack cannot freeze the session: a real agent
process, a real `scarbook eval` in its own process. Before, Python's `re` matched `^(\\w+\\s?)*$` (and
`^(\\w+?\\s?)*$`) on the hostile output for hours holding the GIL: no other run, no event loop, no Ctrl-C,
and the session never ended."""

from __future__ import annotations

from tests.helpers.hostile_project import eval_bounded, inline_agent

# Run 1 answers with text the pattern almost matches (no newline after it: with one, `^` would match the empty
# last line); the others answer as asked.
HOSTILE = """
import os, sys
sys.stdout.write("a" * 40 + "!" if os.environ["SCARBOOK_RUN"] == "1" else "all good here")
"""
BOUND_S = 60  # the session takes about 5 s; it used not to end at all


def test_a_backtracking_pattern_on_the_agents_output_fails_that_run_and_the_session_ends(project) -> None:
    inline_agent(project, HOSTILE, "none", "  - {type: output_regex, pattern: '^(\\w+\\s?)*$'}\n",
                 extra="concurrency: 2\nthreshold: 0.5\n")
    project.case("lazy", "id: lazy\ntask: t\nchecks:\n  - {type: output_regex, pattern: '^(\\w+?\\s?)*$'}\n")
    done, doc = eval_bounded(project, 4, BOUND_S, "the pattern's match")
    runs = {(r["case_id"], r["k"]): r for r in doc["runs"]}
    assert [runs[c, k]["status"] for c in ("c", "lazy") for k in (1, 2, 3, 4)] == ["fail", "pass", "pass", "pass"] * 2
    # regex's guards fail the nested pattern at once, as `re` would have after hours
    assert runs["c", 1]["checks"][0]["detail"] == "output does not match /^(\\w+\\s?)*$/"
    # the lazy one backtracks in both: it fails at the time limit, the case's fault
    assert runs["lazy", 1]["checks"][0]["detail"] == (
        "output_regex check `^(\\w+?\\s?)*$` did not finish within 2 s on the output (catastrophic backtracking): "
        "rewrite the pattern so a text can match it only one way: no nested quantifiers, no alternatives that match "
        "the same text (e.g. `(\\w+\\s?)*` as `[\\w\\s]*`, `(a|aa)+` as `a+`)")
    assert (runs["lazy", 1]["cause"]["kind"], runs["lazy", 1]["cause"]["rule"]) == ("case", "check-timed-out")
    assert done.returncode == 0  # 3 passes of 4 each (the timed-out run is a fail, in the denominator): above 50%
