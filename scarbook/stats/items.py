"""A rubric item's figures across history, and what they say about it (issue 35.3). Pure numbers: whoever
reads the history passes the counts in (history/item_history.py).

Per item: runs judged, its FAIL rate with the 95% Wilson interval, how often it was the only thing that
failed a failed run, how often repeated judgements of one artifact disagreed (the samples of one run, a
rejudge of the same artifact, `verify --judged K`), and where people labelled it, how often the judge agreed
with them, its sensitivity (judge FAIL where the label is FAIL) and specificity (judge PASS where the label
is PASS). The flags, with the rules of `ItemRules`:

- dead: never failed in at least 100 runs over at least 3 sessions;
- always fails: failed in every run, over the same evidence;
- redundant with j: both judged in at least 50 runs and agreeing on at least 98% of them, each having
  failed there at least once (two items that never fail are dead, not redundant);
- unstable: repeated judgements of one artifact disagree on more than 10% of the artifacts judged more
  than once;
- judge unreliable: at least 5 labels, and the judge is wrong on more than 20% of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from scarbook.models import ItemFlag
from scarbook.stats.rates import wilson
from scarbook.text import plural


@dataclass(frozen=True)
class ItemRules:
    dead_min_runs: int = 100
    dead_min_sessions: int = 3
    redundant_min_runs: int = 50
    redundant_agreement: float = 0.98
    unstable_over: float = 0.10
    unreliable_over: float = 0.20
    unreliable_min_labels: int = 5


@dataclass
class LabelTally:
    """People's labels of one item beside the judge's verdict on the same artifact."""

    fail_fail: int = 0  # the label FAIL, the judge FAIL
    fail_pass: int = 0  # the label FAIL, the judge PASS (the judge missed it)
    pass_fail: int = 0  # the label PASS, the judge FAIL (the judge was too strict)
    pass_pass: int = 0

    @property
    def n(self) -> int:
        return self.fail_fail + self.fail_pass + self.pass_fail + self.pass_pass

    @property
    def wrong(self) -> int:
        return self.fail_pass + self.pass_fail


@dataclass
class ItemTally:
    """What history holds of one rubric item, counted."""

    item_id: str
    text: str
    judged: int = 0  # runs in which it got a verdict
    fails: int = 0
    sessions: int = 0  # sessions in which it was judged
    only_failing: int = 0  # failed runs in which it was the only thing that failed
    repeated: int = 0  # artifacts judged more than once on it (independently: a cached verdict is no new judgement)
    disputed: int = 0  # ... of which the judgements disagreed
    labels: LabelTally = field(default_factory=LabelTally)


@dataclass
class PairTally:
    """Two items of one case over the runs in which both were judged."""

    both: int = 0
    agree: int = 0
    first_fails: int = 0
    second_fails: int = 0


def share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True)
class ItemFigures:
    tally: ItemTally
    flags: tuple[ItemFlag, ...]
    redundant_with: tuple[str, ...]  # the ids of the items it is redundant with
    reasons: Mapping[ItemFlag, str]  # each flag's evidence, in words

    @property
    def item_id(self) -> str:
        return self.tally.item_id

    @property
    def fail_rate(self) -> float | None:
        return share(self.tally.fails, self.tally.judged)

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.tally.fails, self.tally.judged) if self.tally.judged else None

    @property
    def disagreement(self) -> float | None:
        return share(self.tally.disputed, self.tally.repeated)

    @property
    def agreement(self) -> float | None:
        labels = self.tally.labels
        return share(labels.n - labels.wrong, labels.n)

    @property
    def sensitivity(self) -> float | None:
        labels = self.tally.labels
        return share(labels.fail_fail, labels.fail_fail + labels.fail_pass)

    @property
    def specificity(self) -> float | None:
        labels = self.tally.labels
        return share(labels.pass_pass, labels.pass_pass + labels.pass_fail)


def _key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def item_figures(tallies: list[ItemTally], pairs: Mapping[tuple[str, str], PairTally],
                 rules: ItemRules = ItemRules()) -> list[ItemFigures]:
    """Each item's figures and flags, in the order given. `pairs` is keyed by the two ids in sorted order."""
    redundant: dict[str, list[str]] = {t.item_id: [] for t in tallies}
    evidence: dict[str, list[str]] = {t.item_id: [] for t in tallies}
    ids = [t.item_id for t in tallies]
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            pair = pairs.get(_key(a, b))
            if pair is None or pair.both < rules.redundant_min_runs or not (pair.first_fails and pair.second_fails):
                continue
            if pair.agree >= rules.redundant_agreement * pair.both:
                said = f"agree on {pair.agree} of {plural(pair.both, 'run')} judged by both"
                redundant[a].append(b)
                redundant[b].append(a)
                evidence[a].append(f"with {b}: {said}")
                evidence[b].append(f"with {a}: {said}")
    out = []
    for t in tallies:
        reasons: dict[ItemFlag, str] = {}
        enough = t.judged >= rules.dead_min_runs and t.sessions >= rules.dead_min_sessions
        over = f"{plural(t.judged, 'run')} over {plural(t.sessions, 'session')}"
        if enough and t.fails == 0:
            reasons[ItemFlag.DEAD] = f"never failed in {over}"
        if enough and t.fails == t.judged:
            reasons[ItemFlag.ALWAYS_FAILS] = f"failed in every one of {over}"
        if redundant[t.item_id]:
            reasons[ItemFlag.REDUNDANT] = "; ".join(evidence[t.item_id])
        if t.repeated and t.disputed > rules.unstable_over * t.repeated:
            reasons[ItemFlag.UNSTABLE] = (f"the judge's repeated judgements disagreed on {t.disputed} of "
                                          f"{plural(t.repeated, 'artifact')}")
        labels = t.labels
        if labels.n >= rules.unreliable_min_labels and labels.wrong > rules.unreliable_over * labels.n:
            reasons[ItemFlag.JUDGE_UNRELIABLE] = f"people's labels say the judge was wrong on {labels.wrong} of {labels.n}"
        out.append(ItemFigures(t, tuple(reasons), tuple(redundant[t.item_id]), reasons))
    return out
