"""One parse of each piece of Textual CSS for the whole test process, not one per app.

Every TUI test starts its own App, and each App parses the CSS of every widget class it mounts (its
DEFAULT_CSS) and scarbook.tcss again: about a tenth of the TUI tests' CPU. The parsed rule sets do not
change once made (Textual keeps them in its own per-stylesheet cache and hands out the same lists), so
apps in one test process can share them. The key is Textual's own (the CSS text, where it was read
from, default or not, tie breaker, scope) plus the CSS variables (the theme), which Textual's cache
leaves out because it is cleared when they change.
"""

from __future__ import annotations

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
