"""A transcript as a timeline: one tree node per message and per tool call, calls collapsed.

A tool call's node holds its input and, under it, the matching tool result, so a long session
reads as a list of steps that open on demand. They are made when the call is first opened (`fill`): a log of
25,000 calls took 4.7 s of the UI thread's CPU to show, its inputs and results made up front. Labels are `rich.text.Text`, never markup: the
transcript is untrusted text and "[red]" in a log must show as typed; terminal escapes in it are
dropped, other controls and bidi controls escaped (text.screen_text). Long texts show their
first lines only; the preview pane of the import screen and the files on disk keep them whole.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import NodeID, TreeNode

from scarbook.text import screen_text
from scarbook.transcripts import Message, ToolCall, ToolResult, Transcript, describe_call, preview

LINES_SHOWN = 30  # lines of a message or result under its node before "… N more lines"
LABEL_CHARS = 110
LINE_CHARS = 400
ROLE_STYLE = {"user": "bold cyan", "assistant": "bold green", "system": "dim"}


def _label_preview(text: str) -> str:
    # a tool output can be megabytes: flatten only the start of it
    return screen_text(preview(text[: LABEL_CHARS * 8], LABEL_CHARS), one_line=True)


def _lines_under(node: TreeNode, text: str, style: str = "") -> None:
    # split only what is shown, count the rest: a 5 MB output must not cost a 5 MB split per node
    lines = text[: LINES_SHOWN * (LINE_CHARS + 1)].splitlines()[:LINES_SHOWN] or [""]
    for line in lines:
        node.add_leaf(Text(screen_text(line[:LINE_CHARS]) or " ", style=style))
    total = text.count("\n") + (not text.endswith("\n"))
    if total > len(lines):
        node.add_leaf(Text(f"… {total - len(lines):,} more lines", style="dim italic"))


def _value_text(value: object) -> str:
    return value if isinstance(value, str) else repr(value)


class Timeline(Tree[object]):
    """`Timeline(transcript)`; `show(transcript)` replaces what it shows. Node data is the entry."""

    def __init__(self, transcript: Transcript | None = None, **kw) -> None:
        super().__init__("transcript", **kw)
        self.show_root = False
        self.transcript: Transcript | None = None
        self._unfilled: dict[NodeID, tuple[ToolCall, ToolResult | None]] = {}  # a call's node -> what opening it shows
        if transcript is not None:
            self.show(transcript)

    def show(self, t: Transcript) -> None:
        self.transcript = t
        self.clear()
        self._unfilled = {}
        results = {e.call_id: e for e in t.entries if isinstance(e, ToolResult)}
        calls = {e.id for e in t.entries if isinstance(e, ToolCall)}
        for entry in t.entries:
            if isinstance(entry, Message):
                self._add_message(entry)
            elif isinstance(entry, ToolCall):
                self._add_call(entry, results.get(entry.id), t.cwd)
            elif entry.call_id not in calls:  # a result whose call the log lost: show it on its own
                self._add_result(self.root, entry, "result of an unknown call")
        if not t.entries:
            self.root.add_leaf(Text("this transcript has no messages or tool calls", style="dim italic"))

    def _prefix(self, sidechain: bool) -> Text:
        return Text("  ↳ subagent ", style="magenta") if sidechain else Text("")

    def _add_message(self, m: Message) -> None:
        who = "thinking" if m.kind == "thinking" else m.role
        label = self._prefix(m.sidechain) + Text(f"{who}: ", style=ROLE_STYLE.get(m.role, "bold"))
        label += Text(_label_preview(m.text), style="italic" if m.kind == "thinking" else "")
        if len(m.text) <= LABEL_CHARS and "\n" not in m.text.strip():
            self.root.add_leaf(label, data=m)
            return
        _lines_under(self.root.add(label, data=m), m.text)

    def _add_call(self, call: ToolCall, result: ToolResult | None, cwd: str | None) -> None:
        label = self._prefix(call.sidechain) + Text("⚙ ", style="yellow") + Text(screen_text(describe_call(call, cwd), one_line=True), style="bold")
        if result is not None and result.is_error:
            label += Text("  (error)", style="red")
        node = self.root.add(label, data=call, allow_expand=True)  # collapsed: expand with Enter/space or a click
        self._unfilled[node.id] = (call, result)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[object]) -> None:
        self.fill(event.node)

    def fill(self, node: TreeNode[object]) -> None:
        """Make a call's input and result under its node, once (when it is first opened)."""
        made = self._unfilled.pop(node.id, None)
        if made is None:
            return
        call, result = made
        inputs = node.add(Text("input", style="dim"), data=call, expand=True)
        for key, value in call.input.items():
            text = _value_text(value)
            if "\n" in text or len(text) > LABEL_CHARS:
                _lines_under(inputs.add(Text(f"{screen_text(key)}:", style="bold")), text)
            else:
                inputs.add_leaf(Text(f"{screen_text(key)}: ", style="bold") + Text(screen_text(text)))
        if not call.input:
            inputs.add_leaf(Text("(no input)", style="dim"))
        if result is None:
            node.add_leaf(Text("no result recorded", style="dim italic"))
        else:
            self._add_result(node, result, "result")

    def _add_result(self, parent: TreeNode, r: ToolResult, what: str) -> None:
        style = "red" if r.is_error else "blue"
        label = Text(f"→ {what}{' (error)' if r.is_error else ''}: ", style=style) + Text(_label_preview(r.text))
        _lines_under(parent.add(label, data=r), r.text, "red" if r.is_error else "")
