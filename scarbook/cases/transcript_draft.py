"""Write a draft case from a transcript: case.yaml, the scar evidence, suggested seed files.

The draft is a starting point for the case editor: the task from the first user message, a
`file_exists` check when the failed artifact is a file, and a scar section that points at a
copy of the transcript and at the failed artifact (`artifact_at` says where it belongs: the
file's workspace path, "output", or a tool call's input `{tool, field}`, which the draft's judge reads). `scarbook.cases.io.save_case` validates and writes case.yaml.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from scarbook.cases.io import CASE_FILE, save_case, validate_case_data
from scarbook.cases.placeholders import RUBRIC_PLACEHOLDER, TASK_PLACEHOLDER
from scarbook.errors import ScarbookError
from scarbook.fs.files import atomic_write_bytes
from scarbook.fs.paths import resolve_inside
from scarbook.text import cut_words, plural
from scarbook.transcripts.case_pieces import (
    Candidate,
    candidates,
    default_artifact,
    pick_task,
    turn_of,
    turns,
)
from scarbook.transcripts.files import is_absolute, normalise_path, relative_path
from scarbook.transcripts.model import Message, Transcript
from scarbook.transcripts.seeds import suggest_seeds, task_start
from scarbook.transcripts.shape import packing, utf8_command
from scarbook.transcripts.text import command_label, preview


@dataclass(frozen=True)
class DraftPicks:
    """What the user says of a draft beyond its artifact: the turn whose prompt is the task (--turn N), the good
    artifact (--good N|PATH) and the task itself when the log holds none or the wrong one (--task TEXT)."""
    turn: int | None = None
    good: str | None = None
    task: str | None = None


CASE_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
TITLE_WIDTH = 80  # a title drafted from the task: its first line, cut at a word


def _ext(name: str | None, default: str = ".txt") -> str:
    suffix = PurePosixPath(name).suffix if name else ""
    return suffix if re.fullmatch(r"\.[A-Za-z0-9]{1,10}", suffix or "") else default


def pick_artifact(cands: list[Candidate], artifact_index: int | None, source: Path | None = None) -> Candidate:
    if not cands:
        where = f"{source}: " if source is not None else ""
        raise ScarbookError(f"{where}the transcript has no candidate artifact (no final answer, file or tool "
                            "result): the agent answered nothing and wrote nothing; import a log that holds the "
                            "failed artifact")
    number = default_artifact(cands) if artifact_index is None else artifact_index
    if not 1 <= number <= len(cands):
        raise ScarbookError(f"there is no artifact {number}: the transcript has {plural(len(cands), 'candidate')} "
                            "(see --list)")
    if artifact_index is None and not cands[number - 1].made_by_agent:
        raise ScarbookError(_nothing_made(cands, source))
    return cands[number - 1]


def _nothing_made(cands: list[Candidate], source: Path | None) -> str:
    """Why a log whose candidates are only tool output (and words before a tool call) gets no draft of its own
    choosing: a tool's output is not what the agent handed in, so the user says which one failed."""
    where = f"{source}: " if source is not None else ""
    preamble = next((c for c in cands if c.preamble), None)
    said = f'its last words ("{preview(preamble.content, 50)}") come before a tool call the log ends with' \
        if preamble is not None else "it never answered"
    results, inputs, todos = (sum(c.kind == kind for c in cands) for kind in ("tool_result", "tool_input", "todo"))
    rest = ", ".join([plural(results, "tool result")] + ([plural(inputs, "tool call input")] if inputs else [])
                     + ([plural(todos, "to-do list")] if todos else []))
    rest = " and ".join(rest.rsplit(", ", 1))
    return (f"{where}the agent handed in nothing to file: {said}, it wrote no file, and the rest "
            f"{'is' if results + inputs + todos == 1 else 'are'} {rest}; if one of them is the failure, "
            "name it with --artifact N (`--list` numbers them), or import a log that holds the agent's answer")


def _no_work(t: Transcript) -> None:
    """A log holding only slash commands and harness messages (an `/exit` answered by "You're out of
    extra usage"): say so rather than "no candidate"."""
    said = [m for m in t.entries if isinstance(m, Message) and m.kind in ("command", "synthetic")]
    if said:
        shown = "; ".join(dict.fromkeys(command_label(m.text) for m in said))
        where = f"{t.source}: " if t.source is not None else ""
        raise ScarbookError(f"{where}the transcript holds no work of the agent to import: only slash commands and "
                            f"messages the harness wrote in the model's place ({shown})")


def outside_root(t: Transcript, path: str) -> str:
    """What to do about an artifact the transcript names by a path outside its root."""
    folder = posixpath.dirname(path) or path
    holding = [c for c in (normalise_path(c) for c in t.cwds) if relative_path(path, c) != path]
    if holding:  # the agent's cwd when it worked there: the workspace, not just the file's folder
        folder = max(holding, key=len)
    where = f"outside the transcript's root {t.root}" if t.root else "outside any root the transcript gives"
    return (f"the artifact {path} is {where}, so no check can name it: import again with --root {folder} "
            "(the folder that was the agent's workspace; `scarbook import PATH --list --root DIR` shows the "
            "paths), or pick another artifact")




def pick_turn(t: Transcript, cands: list[Candidate], turn: int | None,
              artifact_index: int | None) -> tuple[int | None, int | None]:
    """(the turn whose prompt is the task, the artifact number). Default turn: the one that produced
    the artifact; with a turn and no artifact named, the default artifact among that turn's."""
    all_turns = turns(t)
    if turn is not None and not 1 <= turn <= len(all_turns):
        raise ScarbookError(f"there is no turn {turn}: the transcript has {plural(len(all_turns), 'turn')} "
                            "(see --list)")
    if turn is not None and artifact_index is None:
        mine = [c for c in cands if turn_of(t, c.entry, all_turns) == turn]
        if mine:
            artifact_index = default_artifact(mine)
    if turn is None and cands:
        number = default_artifact(cands) if artifact_index is None else artifact_index
        if 1 <= number <= len(cands):
            turn = turn_of(t, cands[number - 1].entry, all_turns)
    return turn, artifact_index


def pick_good(cands: list[Candidate], good: str, failed: Candidate) -> tuple[str | None, bytes]:
    """`--good N|PATH`: (the name it came by, for its extension; its content). A number is a candidate
    of the transcript (--list numbers them: another answer, a later tool result or file); anything
    else is a file on disk (write ./3 for a file named 3)."""
    if good.strip().isascii() and good.strip().isdigit():  # ('²' is a digit to isdigit, not to int)
        number = int(good)
        if not 1 <= number <= len(cands):
            raise ScarbookError(f"--good {good}: there is no artifact {number}: the transcript has "
                                f"{plural(len(cands), 'candidate')} (see --list)")
        if number == failed.number:
            raise ScarbookError(f"--good {good}: candidate {number} is the failed artifact; name the one "
                                "that shows the right result")
        c = cands[number - 1]
        return c.path, c.content.encode("utf-8")
    path = Path(good).expanduser()
    if not path.is_file():
        why = "is not a file" if path.exists() else "does not exist"
        raise ScarbookError(f"--good {good}: {path} {why}; name a candidate number (see --list) or a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ScarbookError(f"--good {good}: cannot read {path}: {exc.strerror or exc}") from None
    packed = packing(data[:512])
    if packed.startswith("UTF-16"):  # compared byte for byte with UTF-8 artifacts, each line of it reads as missing
        raise ScarbookError(f"--good {good}: {path} is UTF-16 text, and the checks read UTF-8: convert it, "
                            f"{utf8_command(path, packed)}, and name that")
    return path.name, data


def draft_case_data(t: Transcript, case_id: str, artifact: Candidate, transcript_name: str,
                    turn: int | None = None, *, exact: bool = False, task: str | None = None) -> dict[str, Any]:
    """The case.yaml content of a draft. A case needs a task and at least one check, so where the
    transcript gives none the draft says TODO (and, when the reader knows, where the prompt is kept);
    `scarbook verify` then reports it misses its scar. The task is `task` (the user's --task), else turn
    `turn`'s prompt (default: the turn that produced the artifact), joined with the request it follows when
    it is a follow-up ("continue"), unless `exact` (the user's --turn N)."""
    task = task or pick_task(t, turn if turn is not None else turn_of(t, artifact.entry), exact=exact).text
    first = next((line.strip() for line in task.splitlines() if line.strip()), "")
    title = cut_words(first, TITLE_WIDTH) if first else f"Imported from {transcript_name}"
    artifact_at: str | dict[str, str]
    if artifact.kind == "file" and artifact.path:
        checks: list[dict[str, Any]] = [{"type": "file_exists", "path": artifact.path}]
        artifact_at = artifact.path
    elif artifact.tool_input is not None:  # what the agent sent through a tool: the judge reads its last such call
        artifact_at = {"tool": artifact.tool_input[0], "field": artifact.tool_input[1]}
        checks = [{"type": "llm_judge", "artifact": artifact_at, "rubric": [RUBRIC_PLACEHOLDER]}]
    else:
        checks = [{"type": "llm_judge", "rubric": [RUBRIC_PLACEHOLDER]}]
        artifact_at = "output"
    return {
        "id": case_id,
        "title": title,
        "task": task or (f"{TASK_PLACEHOLDER} ({t.task_hint})" if t.task_hint else TASK_PLACEHOLDER),
        "checks": checks,
        "scar": {
            "date": t.date or _dt.date.today().isoformat(),  # the incident's day; today if the log has none
            "transcript": f"scar/transcript{_ext(transcript_name)}",
            "failed_artifact": f"scar/artifact{_ext(artifact.path)}",
            "artifact_at": artifact_at,
        },
    }


def write_draft_case(t: Transcript, cases_dir: Path, case_id: str, artifact_index: int | None = None,
                     seed_suggested: bool = False, transcript_path: Path | None = None,
                     picks: DraftPicks = DraftPicks()) -> Path:
    """Create `cases/<case_id>/` from the transcript; return the case folder.

    `artifact_index` is the candidate number (1-based, as `--list` shows); None picks
    `default_artifact`. With `seed_suggested`, each file of the project as it stood when the task began
    (`suggest_seeds`) whose content the transcript holds is copied into seed/ (suggestions without content
    are left for the user: `scarbook import` names them). `picks.task` (--task) is the task when given.
    `picks.good` (a candidate number or a file, `pick_good`) is copied to scar/good<ext> as scar.good_artifact.
    """
    if not CASE_ID.match(case_id):
        raise ScarbookError(f"case id {case_id!r} is not valid: use lowercase letters, digits, '-' and '_', "
                            "starting with a letter or digit")
    cases_dir = Path(cases_dir)
    folder = cases_dir / case_id
    if folder.exists():
        raise ScarbookError(f"{folder} already exists; choose another --id")
    transcript_path = Path(transcript_path) if transcript_path else t.source
    cands = candidates(t)
    if not cands:
        _no_work(t)
    exact = picks.turn is not None  # --turn N is that prompt exactly
    turn, artifact_index = pick_turn(t, cands, picks.turn, artifact_index)
    artifact = pick_artifact(cands, artifact_index, t.source)
    if artifact.kind == "file" and artifact.path and is_absolute(artifact.path):
        raise ScarbookError(outside_root(t, artifact.path))
    # a log of many samples (Inspect) keeps only the one imported, as a log the same reader reads
    kept_name = f"transcript{t.excerpt[0]}" if t.excerpt else transcript_path.name if transcript_path else "transcript.txt"
    data = draft_case_data(t, case_id, artifact, kept_name, turn, exact=exact, task=picks.task)
    if transcript_path is None and t.excerpt is None:
        del data["scar"]["transcript"]
    good_artifact = pick_good(cands, picks.good, artifact) if picks.good is not None else None
    if good_artifact is not None:
        data["scar"]["good_artifact"] = f"scar/good{_ext(good_artifact[0])}"
    case = validate_case_data(data, folder / CASE_FILE, folder)  # refuse before writing anything
    start = task_start(t, turn if turn is not None else turn_of(t, artifact.entry), exact=exact)
    seeds = [(s.path, s.content) for s in suggest_seeds(t, start) if s.content is not None] if seed_suggested else []
    (folder / "scar").mkdir(parents=True)
    try:
        if t.excerpt is not None:
            atomic_write_bytes(folder / data["scar"]["transcript"], t.excerpt[1])
        elif transcript_path is not None:
            shutil.copyfile(transcript_path, folder / data["scar"]["transcript"])
        atomic_write_bytes(folder / data["scar"]["failed_artifact"], artifact.content.encode("utf-8"))
        if good_artifact is not None:
            atomic_write_bytes(folder / data["scar"]["good_artifact"], good_artifact[1])
        for seed_path, content in seeds:
            (folder / "seed").mkdir(exist_ok=True)
            target = resolve_inside(folder / "seed", seed_path)
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, content.encode("utf-8"))
        save_case(case, cases_dir)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)  # no half-written draft left behind
        raise
    return folder
