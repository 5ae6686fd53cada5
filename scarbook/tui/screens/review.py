"""Run review: the runs of one case in one session, and everything about the highlighted run —
status, each check's detail, judge items, output, stderr log, workspace diff with file contents."""

from __future__ import annotations

import os
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static

from scarbook import safefs
from scarbook.case_io import load_case
from scarbook.errors import ScarbookError
from scarbook.models import RunRecord
from scarbook.report import STRIP
from scarbook.draft_from_run import draft_from_run, run_output
from scarbook.tui.widgets.strip import STATUS_STYLE

FILE_CHARS = 1200
LOG_CHARS = 2000
READ_CAP = 1 << 20  # bytes of a file read to show its start
CHECK_MARK = {"pass": "✓", "fail": "✗", "error": "!", "skipped": "-"}
CHECK_STYLE = {**STATUS_STYLE, "skipped": "dim"}


def _read(folder: Path | str, rel: str, limit: int) -> str:
    """The start of a file the agent wrote, read as checks read it (scarbook.safefs): a link is not
    followed and a pipe never opened, so a hostile run can neither hang this screen nor show a secret."""
    try:
        data, size = safefs.read_file(folder, rel, READ_CAP)
    except safefs.Refused as exc:
        return f"(not shown: {exc})"
    except OSError as exc:
        return f"(cannot read: {exc.strerror or exc})"
    if b"\0" in data[:4096]:
        return f"(binary file, {size} bytes)"
    text = data.decode("utf-8", errors="replace")
    if size > len(data):
        return text[:limit] + f"\n… ({size:,} bytes in all)"
    return text[:limit] + (f"\n… ({len(text) - limit} more characters)" if len(text) > limit else "")


def describe_run(run: RunRecord, output: str, root: Path) -> Text:
    t = Text()
    t.append(f"run #{run.k}: ", style="bold")
    t.append(run.status.upper(), style="bold " + STATUS_STYLE[run.status])
    t.append(f" — {run.reason}\n")
    t.append(f"duration {run.duration_s:.1f}s · exit code {run.exit_code} · agent tokens "
             f"{run.agent_usage.total_tokens:,} · judge tokens {run.judge_usage.total_tokens:,}"
             f" ({run.judge_calls} calls)\n", style="dim")
    if run.node:
        t.append(f"ran on node {run.node.get('id', '?')[:12]} ({run.node.get('host', '?')})"
                 + (f", retried {run.infra_retries}x after a lost worker" if run.infra_retries else "")
                 + (f" · {run.workspace_note}" if run.workspace_note else "") + "\n", style="dim")
    t.append("\nchecks\n", style="bold underline")
    for c in run.checks:
        t.append(f" {CHECK_MARK.get(c.status, '?')} ", style=CHECK_STYLE.get(c.status, ""))
        t.append(f"{c.index + 1}. {c.type}: ", style="bold")
        t.append(f"{c.detail}\n")
        for item in (c.judge or {}).get("items", []) if c.judge else []:
            verdict = str(item.get("verdict", "?")).upper()
            t.append(f"     {verdict:<4} ", style="green" if verdict == "PASS" else "red")
            t.append(f"{item.get('item', '?')}. {item.get('text', '')}\n")  # item is the 1-based number
            if item.get("reason"):
                t.append(f"          {item['reason']}\n", style="dim")
    t.append("\nfinal output\n", style="bold underline")
    t.append((output or "(empty)") + "\n")
    if run.stderr_path:
        t.append("\nstderr log\n", style="bold underline")
        t.append(_read(*os.path.split(run.stderr_path), LOG_CHARS) or "(empty)")
        t.append("\n")
    t.append("\nworkspace diff\n", style="bold underline")
    ws = Path(run.workspace)
    kept = run.workspace_kept and ws.is_dir()
    if not (run.diff.created or run.diff.modified or run.diff.deleted):
        t.append("(no files changed)\n", style="dim")
    for kind, style, paths in (("created", "green", run.diff.created), ("modified", "yellow", run.diff.modified),
                               ("deleted", "red", run.diff.deleted)):
        for rel in paths:
            t.append(f" {kind:<8} ", style=style)
            t.append(f"{rel}\n", style="bold")
            if kind != "deleted" and kept:
                body = _read(ws, rel, FILE_CHARS)
                t.append("".join(f"   │ {line}\n" for line in body.splitlines() or [""]), style="dim")
    if not kept:
        t.append("(workspace not kept: passing runs are cleaned up; `keep: all` keeps them)\n", style="dim")
    else:
        try:
            where = ws.relative_to(root)
        except ValueError:
            where = ws
        t.append(f"workspace: {where}\n", style="dim")
    return t


class ReviewScreen(Screen):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back"),
                Binding("c", "draft_case", "New scar"),
                Binding("t", "import_transcript", "Transcript"),
                Binding("f", "next_failed", "Next failed")]

    def __init__(self, session_id: str, case_id: str) -> None:
        super().__init__()
        self.session_id, self.case_id = session_id, case_id
        self.runs: list[RunRecord] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            yield OptionList(id="runs-list")
            with VerticalScroll(id="run-detail"):
                yield Static("", id="run-body")
        yield Footer()

    def on_mount(self) -> None:
        project = self.app.project
        self.runs = project.history.runs(self.session_id, self.case_id)
        try:
            label = project.history.read_session(self.session_id).label
        except ScarbookError:
            label = ""
        self.sub_title = f"{self.case_id} · session {label or 'unlabelled'} · {len(self.runs)} runs"
        ol = self.query_one("#runs-list", OptionList)
        ol.add_options([Text.assemble((f"{STRIP[r.status]} ", STATUS_STYLE[r.status]), f"#{r.k:<3} {r.reason}")
                        for r in self.runs] or [Text("(no runs recorded)", style="dim")])
        ol.focus()
        if self.runs:
            first_bad = next((i for i, r in enumerate(self.runs) if r.status != "pass"), 0)
            ol.highlighted = first_bad
            self.show_run(first_bad)

    def action_import_transcript(self) -> None:
        """The full import flow, starting from this run's transcript ($SCARBOOK_TRANSCRIPT)."""
        from pathlib import Path

        from scarbook.tui.screens.import_scar import ImportScreen

        run = self.current_run
        if run is None or not run.transcript_path or not Path(run.transcript_path).is_file():
            self.notify("this run left no transcript (the agent did not write $SCARBOOK_TRANSCRIPT)",
                        severity="warning")
            return
        self.app.push_screen(ImportScreen(Path(run.transcript_path)))

    @property
    def current_run(self) -> RunRecord | None:
        h = self.query_one("#runs-list", OptionList).highlighted
        return self.runs[h] if h is not None and 0 <= h < len(self.runs) else None

    def show_run(self, index: int) -> None:
        run = self.runs[index]
        body = describe_run(run, run_output(self.app.project, run), self.app.project.root)
        self.query_one("#run-body", Static).update(body)

    @on(OptionList.OptionHighlighted, "#runs-list")
    def _run_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if 0 <= event.option_index < len(self.runs):
            self.show_run(event.option_index)

    def action_next_failed(self) -> None:
        ol = self.query_one("#runs-list", OptionList)
        start = ol.highlighted if ol.highlighted is not None else -1
        for step in range(1, len(self.runs) + 1):
            i = (start + step) % len(self.runs)
            if self.runs[i].status != "pass":
                ol.highlighted = i
                return

    def action_draft_case(self) -> None:
        from scarbook.tui.screens.editor import EditorScreen

        run = self.current_run
        if run is None:
            return
        if run.status == "pass":
            self.notify("this run passed — pick a failed run (f jumps to the next one)", severity="warning")
            return
        project = self.app.project
        try:
            draft = draft_from_run(project, load_case(project.cases_dir / run.case_id), run)
        except (ScarbookError, OSError) as exc:
            self.notify(str(exc), title="could not make the draft case", severity="error")
            return
        self.notify(f"draft case {draft.case.id} from run #{run.k}: rename it if you like; Ctrl+S writes it")
        self.app.push_screen(EditorScreen(None, draft=draft))
