"""The text each widget of a screen holds, for the tests of hostile text (tests/tui/test_untrusted_text.py,
tests/tui/test_hostile_text.py): whole, not only its visible part."""

from __future__ import annotations

from textual.widgets import DataTable, Input, OptionList, Static, TextArea, Tree


def widget_texts(screen) -> dict[str, str]:
    """{"Type#id": text} for every Static, DataTable (labels and cells), OptionList (SelectionList too), Input,
    TextArea and Tree (every node's label) of `screen`."""
    out: dict[str, str] = {}
    for i, w in enumerate(screen.query("*")):
        name = f"{type(w).__name__}#{w.id or i}"
        if isinstance(w, Static):
            out[name] = str(w.render())
        elif isinstance(w, DataTable):
            cells = [str(c.label) for c in w.columns.values()]
            out[name] = "\n".join(cells + [str(cell) for key in w.rows for cell in w.get_row(key)])
        elif isinstance(w, OptionList):
            out[name] = "\n".join(str(w.get_option_at_index(n).prompt) for n in range(w.option_count))
        elif isinstance(w, Input):
            out[name] = w.value
        elif isinstance(w, TextArea):
            out[name] = w.text
        elif isinstance(w, Tree):
            labels, stack = [], [w.root]
            while stack:
                node = stack.pop()
                labels.append(str(node.label))
                stack.extend(node.children)
            out[name] = "\n".join(labels)
    return out
