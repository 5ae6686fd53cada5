"""Cases on disk: load, validate and save `cases/<id>/case.yaml` with its `seed/` and `scar/`."""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from scarbook.cases.seed_folder import check_case_folders, refuse_seed_clashes
from scarbook.checks.spec import CHECK_SPECS, parse_check
from scarbook.errors import CaseError, ScarbookError
from scarbook.fs.files import kind_of, read_regular_bytes
from scarbook.fs.paths import check_relative
from scarbook.fs.yamlio import MAX_YAML_BYTES, atomic_write_text, dump_yaml, line_of, load_yaml_file, load_yaml_text
from scarbook.models import Case, Check, Scar
from scarbook.models.rubric import resolve_item_ids
from scarbook.transcripts.tool_input import WRITTEN, mapping_problem

CASE_FILE = "case.yaml"
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
MAX_ID_CHARS = 100  # a folder name (at most 255 bytes) with room for the hidden folder a new case is built in
CASE_KEYS = ("id", "title", "task", "tags", "threshold", "timeout_s", "network", "seed", "checks", "scar")
SCAR_KEYS = ("date", "what_went_wrong", "family", "transcript", "failed_artifact", "good_artifact", "artifact_at",
             "reproduced")
REPRODUCED_KEYS = ("runs", "fails", "date", "agent", "session")
SCAR_FILES = ("transcript", "failed_artifact", "good_artifact")


@dataclass
class CaseSet:
    """The good cases and the problems with the bad ones: one bad case never hides the others."""

    cases: list[Case] = field(default_factory=list)
    problems: list[CaseError] = field(default_factory=list)

    def by_id(self) -> dict[str, Case]:
        return {c.id: c for c in self.cases}


def _need(cond: bool, path: Path, problem: str, line: int | None, fix: str) -> None:
    if not cond:
        raise CaseError(path, problem, line=line, fix=fix)


def validate_case_data(data: Any, path: Path, folder: Path | None = None) -> Case:
    """Turn parsed YAML into a Case, or raise CaseError naming the file, line and fix."""
    _need(isinstance(data, dict), path, "a case file must be a mapping of keys (id, task, checks, ...)",
          line_of(data), "start the file with 'id: <case-id>'")
    for key in data:
        if key not in CASE_KEYS:
            raise CaseError(path, f"unknown key {key!r}", line=line_of(data, key),
                            fix=f"a case takes: {', '.join(CASE_KEYS)}")
    for req in ("id", "task", "checks"):
        _need(req in data, path, f"missing required key {req!r}", line_of(data), f"add '{req}: ...'")
    cid = data["id"]
    _need(isinstance(cid, str) and bool(ID_PATTERN.match(cid)), path,
          f"id {cid!r} is not a valid case id", line_of(data, "id"),
          "use lowercase letters, digits, '-' and '_', starting with a letter or digit")
    _need(len(cid) <= MAX_ID_CHARS, path, f"id is {len(cid)} characters long; at most {MAX_ID_CHARS}",
          line_of(data, "id"), "use a shorter id: it names the case's folder")
    if folder is not None:
        _need(cid == folder.name, path, f"id {cid!r} differs from its folder name {folder.name!r}",
              line_of(data, "id"), f"rename the folder to {cid!r} or set 'id: {folder.name}'")
    task = data["task"]
    _need(isinstance(task, str) and bool(task.strip()), path, "task must be a non-empty string",
          line_of(data, "task"), "write the instruction the agent gets")
    title = data.get("title", "")
    _need(isinstance(title, str), path, "title must be a string", line_of(data, "title"), "quote the title")
    tags = data.get("tags", [])
    _need(isinstance(tags, list) and all(isinstance(t, str) for t in tags), path,
          "tags must be a list of strings", line_of(data, "tags"), "write tags: [files, json]")
    for n, tag in enumerate(tags):
        _check_tag(tag, n, path, line_of(tags, n) or line_of(data, "tags"))
    threshold = data.get("threshold")
    if threshold is not None:
        _need(isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and 0 <= threshold <= 1,
              path, f"threshold must be a number between 0 and 1, got {threshold!r}",
              line_of(data, "threshold"), "write e.g. threshold: 0.8")
    timeout = data.get("timeout_s")
    if timeout is not None:
        # .inf would let a hung agent hold its run (and the session) forever; .nan compares false everywhere
        _need(isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and math.isfinite(timeout)
              and timeout > 0, path, f"timeout_s must be a positive number of seconds, got {timeout!r}",
              line_of(data, "timeout_s"), "write e.g. timeout_s: 120")
    network = data.get("network")
    _need(network is None or isinstance(network, bool), path, f"network must be true or false, got {network!r}",
          line_of(data, "network"), "write network: true (the sandboxed agent may reach the network)")
    checks_raw = data["checks"]
    _need(isinstance(checks_raw, list) and len(checks_raw) > 0, path, "checks must be a non-empty list",
          line_of(data, "checks"), "add at least one check, e.g. - {type: file_exists, path: out.txt}")
    checks = [parse_check(c, path, line_of(checks_raw, i)) for i, c in enumerate(checks_raw)]
    _resolve_item_ids(checks, path)
    seed_files = _parse_seed(data.get("seed"), path, line_of(data, "seed"))
    scar = _parse_scar(data.get("scar"), path, line_of(data, "scar"))
    return Case(id=cid, task=task, title=title, tags=list(tags),
                threshold=float(threshold) if threshold is not None else None, checks=checks, scar=scar,
                seed_files=seed_files, timeout_s=float(timeout) if timeout is not None else None,
                network=network, root=folder)


def _resolve_item_ids(checks: list[Check], path: Path) -> None:
    """The rubric item ids across the case's judge checks: a written id once in the case, and each item
    without one given its words' id, made unique against every other (models/rubric.py)."""
    seen: dict[str, int] = {}
    for n, check in enumerate(checks):
        for ident in sorted(check.written_ids):
            if ident in seen:
                raise CaseError(path, f"rubric item id {ident!r} is given in check {seen[ident] + 1} and check {n + 1}",
                                line=check.line, fix="give each item its own id (a copied item: delete its id line)")
            seen[ident] = n
    taken: set[str] = set()
    for check in checks:
        if check.is_judge:
            written = [i if i in check.written_ids else "" for i in check.item_ids]
            check.item_ids = resolve_item_ids(check.rubric, written, taken | set(seen))
            taken.update(check.item_ids)


def _check_tag(tag: str, n: int, path: Path, line: int | None) -> None:
    """A tag is one word --tag selects by, and the TUI editor's tags field ("files, json") gives back as it
    was: so not blank, no comma (the field would save two tags), no spaces around it (saved without them)."""
    _need(bool(tag.strip()), path, f"tags: tag {n + 1} is {f'blank ({tag!r})' if tag else 'empty'}: no --tag can "
          "select a case by it", line, "write the tag's word, or remove it")
    _need("," not in tag, path, f"tags: tag {n + 1} ({tag!r}) holds a comma: the editor's tags field would save it as "
          f"{len([t for t in tag.split(',') if t.strip()])} tags", line,
          "write each as its own tag, or join the words with '-'")
    _need(tag == tag.strip(), path, f"tags: tag {n + 1} ({tag!r}) has spaces around it: --tag {tag.strip()} does not "
          "select it, and the editor would save it without them", line, f"write {tag.strip()!r}")


def _parse_seed(raw: Any, path: Path, line: int | None) -> dict[str, str]:
    """Inline seed files: `seed: {README.md: "# tiny-agent\\n"}` (added to what seed/ holds)."""
    if raw is None:
        return {}
    _need(isinstance(raw, dict), path, "seed must be a mapping of workspace path to file text", line,
          "write seed: {README.md: \"# title\\n\"} or put files in the seed/ folder")
    out = {}
    named: dict[str, str] = {}  # each file as the workspace sees it ('./a' is 'a') -> as written
    for rel, text in raw.items():
        kline = line_of(raw, rel) or line
        why = check_relative(str(rel))
        if why is None and not PurePosixPath(str(rel)).parts:
            why = f"path {rel!r} names the workspace root itself, not a file in it"
        _need(why is None, path, f"seed: {why}", kline, "use a path relative to the workspace root, inside it")
        _need(not str(rel).endswith("/"), path, f"seed: path {rel!r} ends in '/': it names a folder, and a seed "
              "entry is a file", kline, f"name the file, e.g. {str(rel).rstrip('/')}/notes.txt")
        _need(isinstance(text, str), path, f"seed file {rel!r} must be given as text", kline,
              "quote the file's content as a string")
        file = PurePosixPath(str(rel)).as_posix()
        _need(file not in named, path, f"seed: {str(rel)!r} and {named.get(file)!r} name the same file", kline,
              "keep one of them")
        named[file] = str(rel)
        out[str(rel)] = text
    for file, rel in named.items():  # (a seed is a few files: every pair is cheap)
        inside = next((named[str(p)] for p in PurePosixPath(file).parents if str(p) in named), None)
        _need(inside is None, path, f"seed: {rel!r} puts a file inside {inside!r}, which is a seed file too",
              line_of(raw, rel) or line, "rename one of them")
    return out


def _parse_scar(raw: Any, path: Path, line: int | None) -> Scar | None:
    if raw is None:
        return None
    _need(isinstance(raw, dict), path, "scar must be a mapping", line, f"scar takes: {', '.join(SCAR_KEYS)}")
    for key, value in raw.items():
        kline = line_of(raw, key) or line
        if key not in SCAR_KEYS:
            raise CaseError(path, f"unknown key {key!r} in scar", line=kline, fix=f"scar takes: {', '.join(SCAR_KEYS)}")
        if key == "reproduced":
            _check_reproduced(value, path, kline)
            continue
        if key == "date":
            value = str(value)  # YAML turns 2026-11-14 into a date; keep it as written
        if key == "artifact_at" and isinstance(value, dict):  # a tool call's input (transcripts/tool_input.py)
            why = mapping_problem(value)
            _need(why is None, path, f"scar.artifact_at: {why}", kline, f"write it as artifact_at: {WRITTEN}")
            continue
        _need(isinstance(value, str), path, f"scar.{key} must be a string", kline, "quote the value")
        if key in SCAR_FILES:
            why = check_relative(value)
            _need(why is None, path, f"scar.{key}: {why}", kline, "use a path relative to the case folder")
        if key == "artifact_at" and value != "output":
            why = check_relative(value)
            _need(why is None, path, f"scar.artifact_at: {why}", kline,
                  "use 'output' or a path relative to the workspace root")
    # each value was checked above against the field it fills
    values: dict[str, Any] = {k: (str(v) if k == "date" else dict(v) if isinstance(v, dict) else v)
                              for k, v in raw.items()}
    return Scar(**values)


def _check_reproduced(value: Any, path: Path, line: int | None) -> None:
    fix = "written by `scarbook verify --reproduce N`: {runs: 10, fails: 7, date: ..., agent: ...}"
    _need(isinstance(value, dict) and all(k in REPRODUCED_KEYS for k in value), path,
          f"scar.reproduced must be a mapping of {', '.join(REPRODUCED_KEYS)}", line, fix)
    for key in ("runs", "fails"):
        n = value.get(key)
        _need(type(n) is int and n >= 0, path, f"scar.reproduced.{key} must be a whole number, got {n!r}", line, fix)
    _need(value["fails"] <= value["runs"], path, "scar.reproduced.fails cannot exceed its runs", line, fix)


def _check_case_files(case: Case, folder: Path, path: Path, data: Any) -> None:
    """The scar's evidence files must exist, and nothing in seed/ may lead out of the case folder."""
    if case.scar:
        scar_data = data.get("scar", {})
        for key in SCAR_FILES:
            rel = getattr(case.scar, key)
            if rel and not (folder / rel).is_file():
                try:
                    what = kind_of(os.stat(folder / rel).st_mode)
                except OSError:  # missing (or a link to nothing)
                    raise CaseError(path, f"scar.{key} names {rel}, which does not exist in {folder}",
                                    line=line_of(scar_data, key), fix=f"add the file {folder / rel} or remove scar.{key}") from None
                raise CaseError(path, f"scar.{key} names {rel}, which is {what}, not a file", line=line_of(scar_data, key),
                                fix=f"replace {folder / rel} with the file, or remove scar.{key}")
    check_case_folders(folder)
    if case.seed_files:
        refuse_seed_clashes(case.seed_files, folder / "seed", path, data.get("seed"))


def load_case(folder: Path) -> Case:
    folder = Path(folder)
    path = folder / CASE_FILE
    try:  # (something else in its place — a folder, a FIFO, a link — is named by the read)
        os.lstat(path)
    except FileNotFoundError:
        raise CaseError(path, "no case.yaml in this case folder", fix="add case.yaml or remove the folder") from None
    except OSError as exc:  # a folder closed to this user: its case.yaml is there, unseen
        raise CaseError(path, f"cannot look into the case folder: {exc.strerror}",
                        fix=f"make {folder} readable and searchable (chmod u+rx {folder})") from None
    data = load_yaml_file(path)
    case = validate_case_data(data, path, folder)
    _check_case_files(case, folder, path, data)
    return case


def no_cases_said(cases_dir: Path, tags: tuple[str, ...] | list[str] = ()) -> str:
    """The line for a project with no case (to run): a cases folder that is not there is said so — a typo in
    cases_dir listed nothing and said to add a case."""
    with_tags = f" with tag {', '.join(tags)}" if tags else ""
    if not os.path.lexists(cases_dir):
        return (f"no cases{with_tags}: {cases_dir} does not exist — add a case with the TUI (`scarbook`) or "
                "`scarbook import`, or point cases_dir in scarbook.yaml at your cases folder")
    return f"no cases in {cases_dir}{with_tags} — add one with the TUI (`scarbook`) or `scarbook import`"


def load_cases(cases_dir: Path) -> CaseSet:
    """Every case under `cases_dir`, sorted by id; each broken one becomes a problem, not a crash."""
    found = CaseSet()
    if not cases_dir.is_dir():
        return found
    seen: dict[str, Path] = {}
    try:
        with os.scandir(cases_dir) as entries:  # (each one's kind from the listing itself: no stat per case)
            names = sorted(e.name for e in entries if e.is_dir() and not e.name.startswith((".", "_")))
    except OSError as exc:  # a cases folder closed to this user: said as its problem, never a traceback
        found.problems.append(CaseError(cases_dir, f"cannot list the cases folder: {exc.strerror}",
                                        fix=f"make it readable and searchable (chmod u+rx {cases_dir}), or point "
                                            "cases_dir in scarbook.yaml at another folder"))
        return found
    for folder in (cases_dir / name for name in names):
        try:
            case = load_case(folder)
        except CaseError as exc:
            found.problems.append(exc)
            continue
        if case.id in seen:
            found.problems.append(CaseError(folder / CASE_FILE, f"duplicate case id {case.id!r} (also in {seen[case.id]})",
                                            fix="give each case its own id"))
            continue
        seen[case.id] = folder
        found.cases.append(case)
    return found


def case_to_dict(case: Case) -> dict[str, Any]:
    out: dict[str, Any] = {"id": case.id}
    if case.title:
        out["title"] = case.title
    out["task"] = case.task
    if case.tags:
        out["tags"] = list(case.tags)
    if case.threshold is not None:
        out["threshold"] = case.threshold
    if case.timeout_s is not None:
        out["timeout_s"] = case.timeout_s
    if case.network is not None:
        out["network"] = case.network
    if case.seed_files:
        out["seed"] = dict(case.seed_files)
    out["checks"] = [c.to_dict() for c in case.checks]
    if case.scar and case.scar.to_dict():
        out["scar"] = case.scar.to_dict()
    return out


def save_case(case: Case, cases_dir: Path) -> Path:
    """Validate, then write `cases/<id>/case.yaml` atomically. Returns the file's path."""
    folder = Path(cases_dir) / case.id
    path = folder / CASE_FILE
    data = case_to_dict(case)
    validate_case_data(data, path, folder)  # never write a case that would not load
    atomic_write_text(path, _case_text(path, data))
    case.root = folder
    return path


def _case_text(path: Path, data: dict[str, Any]) -> str:
    """The text to save: the file as it is with only the changed values edited (comments, flow lists and
    bare dates kept), or a fresh dump for a new case or an edit that cannot be made in place."""
    try:
        old = read_regular_bytes(path, limit=MAX_YAML_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError, ScarbookError):
        return dump_yaml(data)
    from scarbook.fs.yaml_edit import edit_yaml_text  # ruamel.yaml: loaded to save a case, never to read one

    data = _without_added_defaults(data, old, path)
    edited = edit_yaml_text(old, data, lambda text: load_yaml_text(text, path))
    return edited if edited is not None else dump_yaml(data)


def _without_added_defaults(data: dict[str, Any], old_text: str, path: Path) -> dict[str, Any]:
    """`data` without the check keys the file left out whose value is their default (`artifact: output`):
    a save writes what changed, not every default the loader filled in."""
    try:
        old = load_yaml_text(old_text, path)
    except ScarbookError:
        return data
    old_checks = old.get("checks") if isinstance(old, dict) else None
    if not isinstance(old_checks, list):
        return data
    checks = []
    for i, check in enumerate(data.get("checks") or []):
        before = old_checks[i] if i < len(old_checks) and isinstance(old_checks[i], dict) else None
        spec = CHECK_SPECS.get(check.get("type"))
        if before is None or spec is None or before.get("type") != check.get("type"):
            checks.append(check)
            continue
        checks.append({k: v for k, v in check.items()
                       if k in before or k not in spec.defaults or spec.defaults[k] != v})
    return {**data, "checks": checks}


def case_digest(case: Case) -> str:
    """Changes when what the case asks or checks changes (not its title or scar notes)."""
    import hashlib  # (OpenSSL's library, ~2-10 ms: loaded when something is hashed, not to read a project)

    blob = json.dumps({"task": case.task, "checks": [c.to_dict(ids=False) for c in case.checks],
                       "seed": case.seed_files}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
