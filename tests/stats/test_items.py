"""stats/items.py: each rubric item's flags and the evidence for them, in words."""

from __future__ import annotations

from scarbook.models import ItemFlag
from scarbook.stats.items import ItemTally, item_figures


def test_an_unstable_item_of_one_repeated_artifact_says_one_artifact():
    """The flags' evidence counts in English: one repeated artifact is "1 artifact" (it said "1 artifacts")."""
    [fig] = item_figures([ItemTally("i1", "names the file", judged=4, fails=2, sessions=1, repeated=1, disputed=1)], {})
    assert fig.reasons[ItemFlag.UNSTABLE] == "the judge's repeated judgements disagreed on 1 of 1 artifact"
