"""Three costs of Textual's test harness that the TUI tests pay hundreds of times, cut for the test process.

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

3. A screen is drawn when a test looks at it, not for a terminal that is not there.

`run_test` runs the app headless: it draws every changed part of the screen at each refresh (up to 60
a second, and at each `pilot.pause`) and then throws the drawing away, as there is no terminal to write it
to: 28% of the TUI tests' CPU (measured on tests/tui/test_keys, test_editor_checks, test_fit and
test_review in one process: 40 CPU-s drawn, 28 not). Each refresh still lays the screen out (every
widget's region and size, what a test reads) and notes what changed; the drawing itself is made when
something asks for it: a snapshot (`snap_compare`, `export_screenshot`), a test's
`screen._compositor.render_strips()`, and the screen on top at the end of every test (`App._shutdown`),
so a widget that cannot be drawn still fails the test that shows it. `SCARBOOK_TEST_PAINT=1` draws every
refresh, as a terminal would.
"""

from __future__ import annotations

import os

import textual._wait
from textual._compositor import Compositor
from textual.app import App
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


def paint_when_looked_at() -> None:
    if os.environ.get("SCARBOOK_TEST_PAINT") == "1" or getattr(Compositor.render_update, "on_demand", False):
        return
    render_update, shutdown = Compositor.render_update, App._shutdown

    def drawn_on_demand(self, full=False, screen_stack=None, simplify=False):
        if full or simplify:  # a screenshot, or a full update asked for by name
            return render_update(self, full, screen_stack, simplify)
        # a headless screen's refresh (Screen._compositor_refresh): what changed is drawn when asked for (the
        # widgets keep their own dirty regions); only the compositor's list of regions to send is let go
        self._dirty_regions.clear()
        return None

    async def shutdown_after_a_last_look(app) -> None:
        if app.is_headless and app._running and not app._closed and app.screen_stack:
            try:
                screen = app.screen
                screen._on_timer_update()  # its pending layout, as a frame would
                render_update(screen._compositor, True, app._background_screens)
            except Exception as error:  # as a refresh's would: run_test raises it
                app._handle_exception(error)
        await shutdown(app)

    drawn_on_demand.on_demand = True
    Compositor.render_update = drawn_on_demand
    App._shutdown = shutdown_after_a_last_look
