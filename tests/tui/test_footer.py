"""The footer (scarbook/tui/footer.py) is rebuilt once when the keys it shows change, and not at all
when focus moves between widgets that show the same keys. Textual's own Footer rebuilt every key twice on
each focus change (the screen's `focused` watcher and a refresh later both say the bindings changed)."""

from __future__ import annotations

import re

import pytest
from textual import widgets as textual_widgets
from textual.app import App
from textual.widgets import Input
from textual.widgets._footer import FooterKey

from scarbook.tui.app import make_app
from tests.helpers.paths import REPO
from tests.helpers.tui_fixtures import (
    SIZE,
    fast_demo,  # noqa: F401
    new_case_editor,
    project_root,  # noqa: F401
    wait_until,
)

pytestmark = pytest.mark.usefixtures("inprocess_demo")


def shown(screen) -> list[str]:
    return [key.description for key in screen.query(FooterKey)]


async def settled(pilot) -> None:
    """Every rebuild a focus change asked for has run: the second one is asked after the next refresh."""
    for _ in range(3):
        await pilot.pause(0.05)


@pytest.mark.parametrize("size", [SIZE, (80, 24)])
async def test_a_focus_change_rebuilds_the_footer_only_when_its_keys_change(project_root, monkeypatch, size):
    rebuilds: list = []
    compose = textual_widgets.Footer.compose

    def counted(footer):
        rebuilds.append(footer)
        yield from compose(footer)

    app = make_app(project_root)
    async with app.run_test(size=size) as pilot:
        editor = await new_case_editor(pilot)
        await wait_until(pilot, lambda: "Save" in shown(editor), what="the footer's keys")
        await pilot.pause()
        before = shown(editor)
        assert editor.focused is editor.query_one("#case-id", Input)
        monkeypatch.setattr(textual_widgets.Footer, "compose", counted)

        await pilot.press("tab")
        await pilot.press("tab")  # the title, then the tags: Inputs both, the same keys in the footer
        await settled(pilot)
        assert editor.focused is editor.query_one("#case-tags", Input)
        assert (len(rebuilds), shown(editor)) == (0, before)

        editor.query_one("#rubric-input", Input).focus()  # inside the rubric's list: its keys join the footer
        await wait_until(pilot, lambda: "Move up" in shown(editor), what="the rubric list's keys")
        await settled(pilot)
        assert len(rebuilds) == 1
        assert set(before) < set(shown(editor))

        editor.query_one("#case-tags", Input).focus()  # back: the editor's keys alone
        await wait_until(pilot, lambda: "Move up" not in shown(editor), what="the editor's keys alone")
        await settled(pilot)
        assert (len(rebuilds), shown(editor)) == (2, before)

        await pilot.press("tab")  # the threshold: the same keys
        await settled(pilot)
        assert editor.focused is editor.query_one("#case-threshold", Input)
        assert (len(rebuilds), shown(editor)) == (2, before)


async def test_a_rebuilt_footer_styles_its_keys_once_as_they_mount(project_root, monkeypatch):
    """Textual's FooterKey started compact and was then told the footer is not: its `-compact` class went on
    and came off, two restyles of each key on every rebuild. Now a key mounts as the footer is, and nothing
    restyles it afterwards (no class, pseudo-class or focus of a key changes while nobody points at it)."""
    restyled: list[str] = []
    update_styles = App.update_styles

    def counting(app, node, animate=True):
        if isinstance(node, FooterKey):
            restyled.append(node.description)
        return update_styles(app, node, animate)

    monkeypatch.setattr(App, "update_styles", counting)
    app = make_app(project_root)
    async with app.run_test(size=SIZE) as pilot:
        editor = await new_case_editor(pilot)
        await wait_until(pilot, lambda: "Save" in shown(editor), what="the footer's keys")
        editor.query_one("#rubric-input", Input).focus()  # the rubric list's keys join the footer: a rebuild
        await wait_until(pilot, lambda: "Move up" in shown(editor), what="the rubric list's keys")
        await settled(pilot)
        keys = {key.description: key for key in editor.query(FooterKey)}
        # Textual's look: the palette's key compact, the others as the footer (not compact)
        assert {name: (key.compact, key.has_class("-compact")) for name, key in keys.items()} == {
            name: (name == "palette",) * 2 for name in keys}
    assert restyled == []


def test_every_screen_uses_scarbook_s_footer() -> None:
    textual_footer = re.compile(r"^from textual\.widgets import .*\bFooter\b", re.M)
    found = sorted(str(p.relative_to(REPO)) for p in (REPO / "scarbook" / "tui").rglob("*.py")
                   if textual_footer.search(p.read_text(encoding="utf-8")))
    assert found == [], f"import Footer from scarbook.tui.footer (it rebuilds only on a change): {found}"
