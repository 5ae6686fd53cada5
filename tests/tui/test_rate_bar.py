"""The interval bar shows the threshold as a bar glyph wherever it falls, as the live header promises."""

from __future__ import annotations

from scarbook.stats.rates import summarize_counts
from scarbook.tui.widgets.rate_bar import rate_bar


def bar(passes: int, n: int, threshold: float, width: int = 21) -> str:
    stats = summarize_counts("c", passes, n - passes, 0, threshold)
    return rate_bar(stats, width).plain


def test_the_threshold_inside_the_interval_is_a_heavy_bar_not_hidden_in_the_span():
    # 9/10: rate 90%, interval 60–98%; the 0.8 line falls inside the span
    assert bar(9, 10, 0.8) == "            ━━━━┃━●━━"  # lo 0.60 → 12, line 0.8 → 16, rate → 18, hi 0.98 → 20


def test_the_threshold_outside_the_interval_is_a_thin_bar_and_the_rate_on_it_keeps_its_dot():
    assert bar(10, 10, 0.3) == "      |       ━━━━━━●"


def test_a_rate_equal_to_the_threshold_shows_both_the_dot_and_the_line():
    """Issue 26.14: 8/10 at threshold 0.8 drew only the dot; the threshold mark was gone."""
    drawn = rate_bar(summarize_counts("c", 8, 2, 0, 0.8), 21)
    assert drawn.plain == "          ━━━━━━Φ━━━ "  # lo 0.49 → 10, rate and line 0.8 → 16, hi 0.94 → 19
    assert drawn.plain[16] == "Φ" and "●" not in drawn.plain
    assert "grey23" in str(drawn.spans[16].style)  # the line's cell keeps the line's background
    assert bar(5, 10, 0.5) == "     ━━━━━Φ━━━━━     "
    assert bar(3, 3, 1.0)[-1] == "Φ" and bar(0, 3, 0.0)[0] == "Φ"  # at either end too
