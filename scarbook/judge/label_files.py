"""Labels without the TUI: the items to label written to a spreadsheet-friendly file, read back.

`write_items` writes one row per item — case, rubric item, artifact digest, the judge whose draw it is, an excerpt
of the artifact and an empty `label` — as JSON Lines (`.jsonl`) or CSV (`.csv`); the judge's verdict is
never written (the person must not see it). `read_labels` reads a filled file back and checks all
of it before anything is stored: a row whose label is not PASS or FAIL, a malformed line, a missing
field, or two rows giving one item contradicting labels are errors naming the file and the line,
and then nothing is imported. Rows for items history no longer has (the rubric or the artifact
changed) are named and skipped; an empty label is a row not labelled yet; a repeated row with the
same label counts once.

Each label is paired with the verdict of the judge the row names (`judge`: CalibrationItem.judge_tag), the one
whose draw the person labelled — not with that of a judge that graded the same artifact since (a rejudge). A sheet
written before rows named their judge says nothing of it: its label is paired with the one judge that graded the
item, and where several did it is kept without a pair (`unpaired`) until a draw of that judge takes it
(label_store.pair_known).

A CSV file is opened by a spreadsheet, which runs a cell starting with `=` `+` `-` `@` (or a tab or
carriage return before one) as a formula — and the excerpt is the agent's artifact, the items the
case's rubric. So every such cell is written with a `'` before it (OWASP's CSV injection rule), the
file's first line says so (`NOTE`), and reading takes the `'` off again. A row with more cells than
the header is refused: a cell split at an unquoted comma is no label.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scarbook.errors import ScarbookError
from scarbook.fs.files import describe_os_error, read_regular_bytes
from scarbook.judge.calibrate import VERDICTS, CalibrationItem, LabelKey
from scarbook.text import plural

FIELDS = ("case", "item", "artifact_digest", "judge", "excerpt", "label")
EXCERPT_CHARS = 1000
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP: a cell starting so is a formula to a spreadsheet
GUARD = "'"
NOTE = ("# scarbook: a cell that starts with = + - @ tab or CR has a ' put before it, so a spreadsheet shows it as "
        "text and never runs it as a formula (OWASP's CSV injection rule); scarbook calibrate --import takes it "
        "off again. Fill the label column with PASS or FAIL.")


def guard_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a ' before it."""
    return GUARD + text if text.startswith(FORMULA_START) else text


def unguard_cell(text: str) -> str:
    """The cell as it was before guard_cell."""
    return text[1:] if text.startswith(GUARD) and text[1:].startswith(FORMULA_START) else text


def file_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise ScarbookError(f"{path}: unknown label file type {suffix or '(none)'!r} — name it .jsonl or .csv")
    return suffix[1:]


def item_rows(items: Iterable[CalibrationItem]) -> list[dict[str, str]]:
    return [{"case": i.case_id, "item": i.item, "artifact_digest": i.artifact_digest, "judge": i.judge_tag,
             "excerpt": i.artifact[:EXCERPT_CHARS], "label": ""} for i in items]


def render_items(items: Iterable[CalibrationItem], fmt: str) -> str:
    rows = item_rows(items)
    if fmt == "jsonl":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    out = io.StringIO()
    out.write(NOTE + "\n")
    writer = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: guard_cell(v) for k, v in row.items()} for row in rows)
    return out.getvalue()


@dataclass
class LabelImport:
    labels: list[tuple[CalibrationItem, str]] = field(default_factory=list)  # (item, PASS/FAIL)
    # labels of a sheet that does not name its judge, on items several judges graded: (their judges, one a line)
    unpaired: dict[LabelKey, list[CalibrationItem]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # any: nothing is imported
    skipped: list[str] = field(default_factory=list)  # unknown items, named
    notes: list[str] = field(default_factory=list)  # repeated rows counted once
    unlabelled: int = 0
    lines: dict[LabelKey, int] = field(default_factory=dict)  # each label's line in the file


SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab"}


def separator(header: str) -> str:
    """The header's cell separator: a comma as exported, or what a spreadsheet saved it with — ';' where the
    decimal mark is a comma (German or French Excel), a tab."""
    return "," if "," in header else next((s for s in (";", "\t") if s in header), ",")


def _rows(path: Path, text: str, fmt: str, errors: list[str]) -> list[tuple[int, dict]]:
    """(line number, row) for every data row; a line that is not a row is an error."""
    found = []
    if fmt == "jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(f"{path} line {number}: not JSON ({exc.msg}) — each line is one object with "
                              f"the fields {', '.join(FIELDS)}")
                continue
            if not isinstance(row, dict):
                errors.append(f"{path} line {number}: not a JSON object — each line is one object with "
                              f"the fields {', '.join(FIELDS)}")
                continue
            found.append((number, row))
        return found
    noted = 0
    while text.startswith("#"):  # the export's note (NOTE), and any like it a person kept
        line_end = text.find("\n")
        text = "" if line_end < 0 else text[line_end + 1:]
        noted += 1
    sep = separator(text.split("\n", 1)[0])
    reader = csv.DictReader(io.StringIO(text), delimiter=sep)
    missing = [f for f in ("case", "item", "artifact_digest", "label") if f not in (reader.fieldnames or [])]
    if missing:
        errors.append(f"{path} line {noted + 1}: the header lacks {', '.join(missing)} — keep the header row "
                      f"`scarbook calibrate --export` wrote ({','.join(FIELDS)})")
        return found
    columns = len(reader.fieldnames or ())
    start = noted + 2
    for row in reader:
        extra = row.pop(None, None)  # DictReader keeps a row's extra cells under None
        if extra:
            errors.append(f"{path} line {start}: {plural(len(extra), 'more cell')} than the header's {columns} "
                          f"columns — a cell holding a {SEPARATORS[sep]} must be quoted; keep the columns "
                          "`scarbook calibrate --export` wrote")
        else:
            found.append((start, {k: unguard_cell(v) if isinstance(v, str) else v for k, v in row.items()}))
        start = noted + reader.line_num + 1
    return found


def read_labels(path: Path, known: Mapping[LabelKey, Mapping[str, CalibrationItem]]) -> LabelImport:
    """Check every row of the file at `path` against the judged items `known` (by label key, then judge_tag:
    calibrate.items_by_key)."""
    fmt = file_format(path)
    try:  # (a FIFO is refused, not waited on)
        text = read_regular_bytes(path).decode("utf-8-sig")
    except OSError as exc:
        raise ScarbookError(f"{path}: cannot read the labels file: {describe_os_error(exc)} — give the file "
                            "`scarbook calibrate --export` wrote, with its label column filled") from None
    except UnicodeDecodeError:
        fix = "save the sheet as UTF-8 CSV" if fmt == "csv" else "save it as UTF-8"
        raise ScarbookError(f"{path}: not UTF-8 text — {fix}") from None
    result = LabelImport()
    seen: dict[LabelKey, tuple[int, str]] = {}
    for number, row in _rows(path, text, fmt, result.errors):
        where = f"{path} line {number}"
        absent = [f for f in ("case", "item", "artifact_digest", "label") if not isinstance(row.get(f), str)]
        if absent:
            result.errors.append(f"{where}: no {absent[0]!r} text — every row needs case, item, artifact_digest "
                                 "and label, as exported")
            continue
        label = row["label"].strip().upper()
        if not label:
            result.unlabelled += 1
            continue
        if label not in VERDICTS:
            result.errors.append(f"{where}: label {row['label'].strip()!r} is not PASS or FAIL — write PASS or "
                                 "FAIL, or leave it empty to skip the item")
            continue
        key = (row["case"], row["item"], row["artifact_digest"].strip())
        if key in seen:
            first, before = seen[key]
            if before != label:
                result.errors.append(f"{where}: contradicts line {first} — case {key[0]}, item {key[1]!r} "
                                     f"(artifact {key[2]}) is labelled {before} there and {label} here; keep one")
            else:
                result.notes.append(f"{where}: repeats line {first} (case {key[0]}, item {key[1]!r}); counted once")
            continue
        seen[key] = (number, label)
        judges = known.get(key) or {}
        tag = row["judge"].strip() if isinstance(row.get("judge"), str) else ""
        item = judges.get(tag) if tag else next(iter(judges.values()), None)
        if item is None:
            result.skipped.append(f"{where}: case {key[0]}, item {key[1]!r} (artifact {key[2]}) "
                                  + (f"was drawn from the verdicts of judge {tag}, which history no longer holds on it"
                                     if judges else "is not among the judged items in history — the rubric or the "
                                     "artifact changed since the export") + "; skipped")
            continue
        if not tag and len(judges) > 1:
            result.unpaired[key] = list(judges.values())
        result.labels.append((item, label))
        result.lines[key] = number
    result.errors.sort(key=lambda e: int(e[len(str(path)) + 6:].split(":", 1)[0]))  # "<path> line N: ..."
    return result
