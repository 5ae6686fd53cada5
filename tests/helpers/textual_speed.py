"""Two costs of Textual's test harness that the TUI tests pay hundreds of times, cut for the test process.

1. One parse of each piece of Textual CSS for the whole test process, not one per app.

Every TUI test starts its own App, and each App parses the CSS of every widget class it mounts (its
DEFAULT_CSS) and scarbook.tcss again: about a tenth of the TUI tests' CPU. The parsed rule sets do not
change once made (Textual keeps them in its own per-stylesheet cache and hands out the same lists), so
apps in one test process can share them. The key is Textual's own (the CSS text, where it was read
from, default or not, tie breaker, scope) plus the CSS variables (the theme), which Textual's cache
leaves out because it is cleared when they change.

2. Pilot's idle wait in 5 ms windows instead of 20 ms. After each key Pilot twice sleeps in windows of
textual._wait.SLEEP_GRANULARITY until one passes with almost no CPU used, then waits until every
message queued for the screen has been handled (that wait is unchanged): at least 40 ms of a worker's
wall time per key, ~10 s in the longest typing tests, and most of why an xdist worker sat idle
half the run. In 5 ms windows the TUI tests took 33 s instead of 47 s (4 files, 3 workers) and all 200
TUI tests passed; the idle test is the same (under 1/20 of the window's time on the CPU).
"""

from __future__ import annotations

import textual._wait
from textual.css.stylesheet import Stylesheet

_parsed: dict[tuple, list] = {}


def share_parsed_css() -> None:
    if getattr(Stylesheet._parse_rules, "shared", False):
        return
    parse_rules = Stylesheet._parse_rules

    def shared_parse_rules(self, css, read_from, is_default_rules=False, tie_breaker=0, scope=""):
        key = (css, read_from, is_default_rules, tie_breaker, scope, tuple(sorted(self._variables.items())))
        rules = _parsed.get(key)
        if rules is None:
            rules = _parsed[key] = parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
        return rules

    shared_parse_rules.shared = True
    Stylesheet._parse_rules = shared_parse_rules


def shorter_idle_waits() -> None:
    textual._wait.SLEEP_GRANULARITY = 1 / 200
    textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20.0
