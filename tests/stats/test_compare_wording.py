"""Words under a comparison (issue 37.12): "over 1 case", never "over 1 cases"."""

from __future__ import annotations

from scarbook.stats.compare import Counts, compare_sessions, comparison_notes, format_comparison


def test_one_case_is_one_case() -> None:
    cmp = compare_sessions({"a": Counts(8, 2)}, {"a": Counts(5, 5)})
    text = format_comparison(cmp) + "\n" + "\n".join(comparison_notes(cmp))
    assert "mean difference over 1 case:" in text and "Mean difference over 1 case:" in text
    assert "1 cases" not in text and "case(s)" not in text
