"""Why the judge graded none of the llm_judge checks in history, counted by reason: a run's llm_judge check is
skipped without a judge (no key, --skip-judge, a resumed session: its detail "judge skipped (why)"), or not run
because a cheaper check before it failed (checks run in cost order and stop at the first that does not pass:
"not run: check 2 (contains) did not pass") or the agent did not finish ("not run: the agent did not finish").
Only the first asks for a key; the second is the case's rule checks doing their job. `scarbook calibrate` and the
TUI's calibrate screen say these words when there is nothing to grade.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from scarbook.checks.verdict import JUDGE_SKIPPED
from scarbook.models import CheckStatus, RunRecord
from scarbook.text import plural

NOT_RUN = "not run: "
CHEAPER_FAILED = "not run: check "  # "not run: check 2 (contains) did not pass"


def unjudged_reasons(runs: Iterable[RunRecord]) -> Counter[str]:
    """Skipped llm_judge checks per reason: "judge skipped (why)" as recorded, "cheaper" for those a cheaper check
    stopped, else the recorded words after "not run: " (or the whole detail)."""
    found: Counter[str] = Counter()
    for run in runs:
        for check in run.checks:
            if check.type != "llm_judge" or check.status != CheckStatus.SKIPPED:
                continue
            if check.detail.startswith(CHEAPER_FAILED):
                found["cheaper"] += 1
            else:
                found[check.detail.removeprefix(NOT_RUN)] += 1
    return found


def never_judged_words(reasons: Counter[str], key_env: str) -> str:
    """"the judge never ran: of 6 llm_judge checks in the history, 4 skipped without a judge (--skip-judge) — set
    $ANTHROPIC_API_KEY and run those cases again; 2 not judged because a cheaper check before them failed (…)";
    "" when no check was skipped."""
    total = sum(reasons.values())
    if not total:
        return ""
    parts = []
    skipped = {why: n for why, n in reasons.items() if why.startswith(JUDGE_SKIPPED)}
    if skipped:
        whys = ", ".join(why[len(JUDGE_SKIPPED):].strip() for why in sorted(skipped))
        parts.append(f"{sum(skipped.values())} skipped without a judge {whys} — set ${key_env} and run those cases "
                     "again")
    if reasons["cheaper"]:
        them = "it" if reasons["cheaper"] == 1 else "them"
        parts.append(f"{reasons['cheaper']} not judged because a cheaper check before {them} failed (the judge grades "
                     "a run only once its rule checks pass)")
    parts += [f"{n} not judged: {why}" for why, n in sorted(reasons.items())
              if why != "cheaper" and why not in skipped and n]
    return f"the judge never ran: of {plural(total, 'llm_judge check')} in the history, " + "; ".join(parts)
