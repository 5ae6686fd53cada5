"""One run's detail as rich Text for the run review: status, each check, judge items, output, stderr
log and the −/+ diff of every changed file (`scarbook.views.run_review.load_run_detail` read them, on a
thread). Only rich here: building the Text is cheap and reads nothing."""

from __future__ import annotations

from rich.text import Text

from scarbook.models import STATUS_GLYPH, CauseKind, RunRecord, Vote
from scarbook.run.causes import whose_word
from scarbook.text import plural, screen_text
from scarbook.tui.widgets.strip import STATUS_STYLE
from scarbook.views.file_diff import FileDiff
from scarbook.views.run_review import RunDetail

CHECK_STYLE: dict[str, str] = {**STATUS_STYLE, "skipped": "dim"}
CAUSE_STYLE = {CauseKind.AGENT: "red", CauseKind.INFRA: "magenta", CauseKind.JUDGE: "yellow", CauseKind.CASE: "cyan"}
CHANGE_STYLE = {"created": "green", "modified": "yellow", "deleted": "red"}
SIGN_STYLE = {"-": "red", "+": "green", " ": "dim", "@": "cyan"}
NOT_KEPT = "(workspace not kept: passing runs are cleaned up; `keep: all` keeps them)\n"


def _head(t: Text, run: RunRecord) -> None:
    t.append(f"run #{run.k}{f' (agent {screen_text(run.agent)})' if run.agent else ''}: ", style="bold")
    t.append(run.status.upper(), style="bold " + STATUS_STYLE[run.status])
    t.append(f" — {screen_text(run.reason)}\n")
    t.append(f"duration {run.duration_s:.1f}s · exit code {run.exit_code} · agent tokens "
             f"{run.agent_usage.total_tokens:,} · judge tokens {run.judge_usage.total_tokens:,}"
             f" ({plural(run.judge_calls, 'call')})\n", style="dim")
    if run.cause:
        t.append("cause: ", style="bold")
        t.append(f"{run.cause.kind}", style="bold " + CAUSE_STYLE[run.cause.kind])
        t.append(f" ({run.cause.rule}) — {screen_text(run.cause.evidence)}\n")
    if len(run.attempts) > 1:
        for a in run.attempts[:-1]:
            why = a.cause
            word = whose_word(why)
            t.append(f"attempt {a.attempt}: {a.status} — {why.kind if why else '?'} ({why.rule if why else '?'}"
                     f"{', ' + word if word else ''}): {screen_text(a.reason)} · retried\n", style="dim")
    if run.node:
        t.append(f"ran on node {run.node.get('id', '?')[:12]} ({run.node.get('host', '?')})"
                 + (f", retried {run.infra_retries}x after a lost worker" if run.infra_retries else "")
                 + (f" · {run.workspace_note}" if run.workspace_note else "") + "\n", style="dim")


def _checks(t: Text, run: RunRecord) -> None:
    t.append("\nchecks\n", style="bold underline")
    for c in run.checks:
        t.append(f" {STATUS_GLYPH.get(c.status, '?')} ", style=CHECK_STYLE.get(c.status, ""))
        t.append(f"{c.index + 1}. {c.type}: ", style="bold")
        t.append(f"{screen_text(c.detail)}\n")
        for item in c.judge.items if c.judge is not None else ():
            t.append(f"     {item.verdict:<4} ", style="green" if item.verdict == Vote.PASS else "red")
            t.append(f"{item.item}. {screen_text(item.text)}\n")  # item is the 1-based number
            if item.reason:
                t.append(f"          {screen_text(item.reason)}\n", style="dim")


def file_diff_text(d: FileDiff) -> Text:
    t = Text()
    t.append(f" {d.change:<8} ", style=CHANGE_STYLE.get(d.change, ""))
    t.append(f"{screen_text(d.rel)}\n", style="bold")
    if d.note:
        t.append(f"   ({screen_text(d.note)})\n", style="dim italic")
    for line in d.lines:
        sign = "" if line.sign == "@" else line.sign
        t.append(f"   {sign}{screen_text(line.text)}\n", style=SIGN_STYLE.get(line.sign, ""))
    if d.more:
        t.append(f"   … {d.more:,} more lines\n", style="dim italic")
    if not (d.lines or d.note):
        t.append("   (empty)\n", style="dim italic")
    return t


def describe_run(run: RunRecord, detail: RunDetail) -> Text:
    t = Text()
    _head(t, run)
    _checks(t, run)
    t.append("\nfinal output\n", style="bold underline")
    t.append(screen_text(detail.output or "(empty)") + "\n")
    if detail.stderr is not None:
        t.append("\nstderr log\n", style="bold underline")
        t.append(screen_text(detail.stderr or "(empty)") + "\n")
    t.append("\nworkspace diff", style="bold underline")
    t.append("  (− seed, + workspace)\n" if detail.diffs else "\n", style="dim")
    if not detail.diffs:
        t.append("(no files changed)\n", style="dim")
    for d in detail.diffs:
        t.append_text(file_diff_text(d))
    if detail.more_files:
        t.append(f" … {detail.more_files:,} more changed files\n", style="dim italic")
    if not detail.kept:
        t.append(NOT_KEPT, style="dim")
    elif detail.where:
        t.append(f"workspace: {detail.where}\n", style="dim")
    return t
