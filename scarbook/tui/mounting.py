"""A screen or widget closed while it is still opening: its Mount handler must not look for what was
never built.

Textual registers a widget when it is mounted and builds its children (compose) a moment later, on
the widget's own task. If the widget is removed in between — its screen dismissed, or the app quitting
(Ctrl+Q is never held: tui/key_queue.py) — Textual marks it and everything under it as being removed,
and from then on mounts nothing into it (`Widget.mount` returns at once, as it does for any widget once
the app is leaving); yet the widget's Mount event still comes. A handler that then looks up a child raises NoMatches, and the app ends with a traceback
(issue 37.2: `No nodes match '#rubric-list' on ItemList(id='rubric')`, `'SelectOverlay' on
Select(id='check-type')`, Header's title). On a busy machine the gap is wide enough for a user's key.

The messages queued for it before the removal (Resize, ScreenResume...) are still handled too.
`unless_removed` guards a handler that looks up the widget's children (on_mount, on_resize);
tui/widgets/mount_safe.py guards Textual's own Header and Select. tests/tui/test_closed_while_opening.py closes every screen and widget in that gap.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from textual.dom import DOMNode

F = TypeVar("F", bound=Callable[..., Any])


def being_removed(node: DOMNode) -> bool:
    """Whether `node` is being removed, or the app is leaving: Textual mounts nothing into it any more.
    A removal is kept in private flags (`_pruning`: it has begun; `_closing`: the node's queue is
    closing); an app that is leaving detaches every node (`is_attached`)."""
    return bool(node._pruning or node._closing) or not node.is_attached  # noqa: SLF001 (no public word for it)


def unless_removed(handler: F) -> F:
    """An event handler (`on_mount(self)`, `on_resize(self, event)`) that does nothing when its widget is
    being removed: what it would fill in may never have been built, and nobody will see it."""

    @functools.wraps(handler)
    def guarded(self, *args: Any) -> Any:
        if being_removed(self):
            return None
        return handler(self, *args)

    return guarded  # type: ignore[return-value]  # (the same signature: functools.wraps)
