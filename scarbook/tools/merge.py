"""Shards: one session's (case, k) jobs split over N machines (a CI matrix, k8s Jobs), merged back.

`scarbook eval --shard I/N --session-id ID` runs a deterministic 1/N of the jobs and records them as
the session folder `ID.shard-I-of-N`; `scarbook merge DIR...` reads those folders from the shards'
history folders, checks that every shard is there exactly once and that all of them ran the same
thing, and records one session `ID` whose table, exit code, JSON and JUnit are those of one machine.

How a session is split is run/shard.py.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scarbook.errors import HistoryError, ScarbookError
from scarbook.fs.files import kind_of
from scarbook.history.judge_truth import Calibration
from scarbook.history.records import status_problem
from scarbook.judge.artifact_store import FOLDER as ARTIFACTS
from scarbook.judge.artifact_store import ArtifactStore
from scarbook.models import RunRecord, RunStatus, SessionInfo
from scarbook.models.session_parts import MIXED, Confinement, RunPlace, ShardHeader
from scarbook.models.words import SessionState
from scarbook.run.shard import SHARD_FOLDER, Shard
from scarbook.text import plural

# Worst first: the merged session takes the worst state any shard ended in.
STATE_ORDER = ("aborted", "crashed", "interrupted", "running", "cancelled", "stopped: budget", "finished")
# What every shard of one session must agree on for the merge to be one session.
SAME_FIELDS = {"runs_per_case": "runs per case", "case_ids": "cases", "fingerprint": "agent/judge configuration",
               "case_digests": "case checks", "git_revision": "git revision", "label": "label",
               "judge_model": "judge model", "partial": "--skip-judge", "agents": "agents (--agents)"}


@dataclass
class FoundShard:
    shard: Shard
    info: SessionInfo
    runs: list[RunRecord]
    folder: Path
    problems: list[str]  # what reading its runs told (a line left out, runs missing): check_read says the first

    @property
    def name(self) -> str:
        return f"shard {self.shard.label} ({self.folder})"


def _history_at(folder: Path):
    from scarbook.history.store import History

    history = History(folder.parent)
    history.dir = folder  # a history folder as the shard's job left it, wherever it was unpacked
    return history


def _session_file(folder: Path) -> str:
    """What `folder`/session.json is: "file" (a regular file; links followed, as the read follows them), ""
    (nothing there) or what else stands there ("a FIFO", "a directory", ...)."""
    try:
        mode = os.stat(folder / "session.json").st_mode
    except OSError:
        return ""
    return "file" if stat.S_ISREG(mode) else kind_of(mode)


def _refuse_unreadable(folder: Path, kind: str) -> None:
    m = SHARD_FOLDER.fullmatch(folder.name)
    what = f"shard {m['index']}/{m['count']} of session {m['session']}" if m else "the session there"
    raise ScarbookError(f"{folder / 'session.json'} is {kind}, not a regular file: {what} cannot be read — put back "
                        "the session.json the shard's job wrote, or run that shard again")


def _history_folders(given: Path, kind: str) -> list[Path]:
    """The history folders a DIR argument stands for: a session folder's parent, a history folder,
    or a workspaces folder (its history/). `kind`: what its session.json is (_session_file)."""
    if kind == "file":
        return [given.parent]
    if kind:  # the folder of one session, whose session.json cannot be read
        _refuse_unreadable(given, kind)
    if (given / "history").is_dir():
        return [given / "history"]
    return [given]


def find_shards(dirs: list[Path], session_id: str | None = None) -> list[FoundShard]:
    """Every shard session recorded in `dirs` (of `session_id`, if given). A shard's folder whose session.json
    is not a regular file (a FIFO, a folder) is named, not read (a FIFO would wait) nor left out as missing."""
    found: list[FoundShard] = []
    without: list[Path] = []  # the DIRs holding no shard of any session
    for given in dirs:
        if not given.is_dir():
            raise ScarbookError(f"{given} is not a folder — give the history folders (workspaces/history) "
                                "the shard jobs left")
        kind = _session_file(given)
        only = given.name if kind == "file" else None
        held = False
        for folder in _history_folders(given, kind):
            history = _history_at(folder)
            for sub in sorted(folder.iterdir()):
                if only is not None and sub.name != only:
                    continue
                if (there := _session_file(sub)) != "file":
                    m = SHARD_FOLDER.fullmatch(sub.name)
                    if there and m and session_id in (None, m["session"]):
                        _refuse_unreadable(sub, there)
                    continue
                info = history.read_session(sub.name)
                spec = info.shard
                if spec is None or not spec.count or spec.merged:
                    continue
                held = True
                if session_id is not None and spec.session != session_id:
                    continue
                if not (type(spec.index) is int and type(spec.count) is int and isinstance(spec.session, str)):
                    raise HistoryError(f"{sub}: its shard header {spec.to_dict()!r} is not one `scarbook eval "
                                       "--shard` writes — the shard's history was altered; run that shard again")
                shard = Shard(spec.index, spec.count, spec.session)
                runs = history.runs(sub.name)
                found.append(FoundShard(shard, info, runs, sub, [str(p) for p in runs.problems]))
        if not held:
            without.append(given)
    if without and len(without) < len(dirs):  # (none holding any: pick_session says how shards are made)
        # a wrong path, or a job's folder whose history was lost while another folder stands in for its shard
        raise ScarbookError(f"{without[0]} holds no shard (no session recorded by `scarbook eval --shard I/N "
                            "--session-id ID`) — give the history folder (workspaces/history) the shard's job left, "
                            f"or leave {without[0]} out")
    return found


def pick_session(found: list[FoundShard], dirs: list[Path]) -> str:
    ids = sorted({f.shard.session_id for f in found})
    where = ", ".join(map(str, dirs))
    if not ids:
        raise ScarbookError(f"no shards found in {where} — shards are recorded by "
                            "`scarbook eval --shard I/N --session-id ID` in workspaces/history")
    if len(ids) > 1:
        labels = {sid: ", ".join(sorted(f.shard.label for f in found if f.shard.session_id == sid)) for sid in ids}
        listing = "; ".join(f"{sid} (shards {labels[sid]})" for sid in ids)
        raise ScarbookError(f"{where} hold shards of more than one session: {listing} — pick one with --session-id")
    return ids[0]


def check_complete(found: list[FoundShard]) -> None:
    """Every shard 1..N exactly once, all with the same N and the same configuration."""
    sid = found[0].shard.session_id
    counts = sorted({f.shard.count for f in found})
    if len(counts) > 1:
        listing = ", ".join(f.name for f in found)
        raise ScarbookError(f"the shards of session {sid} disagree on how many shards there are: {listing}")
    n = counts[0]
    by_index: dict[int, FoundShard] = {}
    for f in found:
        if f.shard.index in by_index:
            raise ScarbookError(f"shard {f.shard.label} of session {sid} is given twice: "
                                f"{by_index[f.shard.index].folder} and {f.folder} — give each shard's history once")
        by_index[f.shard.index] = f
    missing = [f"{i}/{n}" for i in range(1, n + 1) if i not in by_index]
    if missing:
        raise ScarbookError(f"shard {', '.join(missing)} of session {sid} is missing (found "
                            f"{', '.join(f.shard.label for f in sorted(found, key=lambda f: f.shard.index))}) "
                            "— add the history folder of the job that ran "
                            + " and ".join(f"--shard {m}" for m in missing))
    first = by_index[1]
    nonces: dict[object, FoundShard] = {}
    for f in sorted(found, key=lambda f: f.shard.index):
        if f.info.id != f.shard.folder_id or f.folder.name != f.shard.folder_id:
            raise ScarbookError(f"{f.name} is rejected: its header says shard {f.shard.label} of session {sid}, "
                                f"but it is recorded as {f.info.id!r} in folder {f.folder.name!r} — the shard's "
                                "history was altered or moved; run that shard again")
        nonce = f.info.shard.nonce if f.info.shard is not None else None
        if nonce is not None and nonce in nonces:
            raise ScarbookError(f"{f.name} is rejected: its header is a copy of {nonces[nonce].name}'s — the "
                                "shard's history was altered; run that shard again")
        nonces[nonce] = f
    if None in nonces and len(nonces) > 1:  # a shard with no nonce beside shards with one
        f = nonces[None]
        raise ScarbookError(f"{f.name} is rejected: its header has no nonce, which the other shards' have — the "
                            "shard's history was altered; run that shard again")
    for f in found:
        if f is first:
            continue
        for key, what in SAME_FIELDS.items():
            if getattr(f.info, key) != getattr(first.info, key):
                raise ScarbookError(f"shard {f.shard.label} of session {sid} ran with a different {what} than "
                                    f"shard 1/{n} ({getattr(f.info, key)!r} vs {getattr(first.info, key)!r}) — "
                                    "the shards of one session must run the same commit and configuration")



def check_read(found: list[FoundShard]) -> None:
    """Every shard's runs read whole (history's record checks: no line left out, none missing)."""
    for f in sorted(found, key=lambda f: f.shard.index):
        if f.problems:
            raise HistoryError(f"shard {f.shard.label} in {f.folder}: {f.problems[0]}")


def check_plan(found: list[FoundShard]) -> None:
    """Each shard holds only runs of its jobs, and a shard that finished a fixed plan holds every one of
    them: a line deleted, or runs_per_case raised in every shard's header alike, leaves runs missing."""
    first = min(found, key=lambda f: f.shard.index).info
    for f in found:
        planned = f.shard.jobs(first.case_ids, first.runs_per_case,
                               whole_cases=len(first.agent_names) > 1)
        for r in f.runs:
            if r.k not in planned.get(r.case_id, ()):
                raise ScarbookError(f"shard {f.shard.label} of session {f.shard.session_id} holds run "
                                    f"{r.case_id}#{r.k}, which is not one of its jobs — {f.folder} is damaged or "
                                    "from another split")
        _check_counts(f, planned)


def _check_counts(f: FoundShard, planned: dict[str, list[int]]) -> None:
    if f.info.state != SessionState.FINISHED or (f.info.gate is not None and len(f.info.gate.looks) > 1):  # stopped early, or `undecided: more`
        return
    held = {(r.case_id, r.k) for r in f.runs}
    missing = [(cid, k) for cid, ks in planned.items() for k in ks if (cid, k) not in held]
    if missing:
        cid, k = missing[0]
        total = sum(map(len, planned.values()))
        raise ScarbookError(f"{f.name} is rejected: it finished, but holds {total - len(missing)} of the "
                            f"{plural(total, 'run')} its plan has ({plural(len(planned), 'case')} x "
                            f"{plural(f.info.runs_per_case, 'run')}, split "
                            f"{f.shard.count} ways): run {cid}#{k} is missing — the shard's history was altered; "
                            "run that shard again")


def record_problem(r: RunRecord, checks: int) -> str | None:
    """Why a record's status does not follow from its checks (the case has `checks` checks), or None:
    history's own check on every read (records.status_problem), and that a pass or an unjudged run has
    every check of its case there."""
    if r.status in (RunStatus.PASS, RunStatus.UNJUDGED) and len(r.checks) != checks:
        return f"is marked {r.status} with {len(r.checks)} check results, but the case has {checks}"
    why = status_problem(r.to_dict())
    return why.removeprefix("it ") if why else None


def check_records(found: list[FoundShard], checks_per_case: dict[str, int]) -> None:
    """Every record of every shard is one the runner wrote: its status follows from its checks and no
    (case, k) is recorded twice. The first that is not is named, and nothing is merged."""
    seen: dict[tuple[str, int], FoundShard] = {}
    for f in sorted(found, key=lambda f: f.shard.index):
        for r in f.runs:
            key = (r.case_id, r.k)
            if key in seen:
                raise ScarbookError(f"{f.name} is rejected: run {r.case_id}#{r.k} is recorded by "
                                    f"{seen[key].name} too — run ids must be unique")
            seen[key] = f
            why = record_problem(r, checks_per_case.get(r.case_id, len(r.checks)))
            if why:
                raise ScarbookError(f"{f.name} is rejected: run {r.case_id}#{r.k} {why} — the shard's history "
                                    "was altered; run that shard again")


def merge_shards(found: list[FoundShard]) -> tuple[SessionInfo, list[RunRecord]]:
    """One session from complete, consistent shards (see check_complete)."""
    found = sorted(found, key=lambda f: f.shard.index)
    first = found[0].info
    sid = found[0].shard.session_id
    worst = min((f.info.state for f in found), key=lambda s: STATE_ORDER.index(s) if s in STATE_ORDER else 0)
    whole = len(first.agent_names) > 1  # a session of several agents deals whole cases to its shards
    notes = [f"shard {f.shard.label} {f.info.state}: {len(f.runs)} of "
             + plural(sum(map(len, f.shard.jobs(first.case_ids, first.runs_per_case, whole_cases=whole).values())), "run")
             for f in found if f.info.state != SessionState.FINISHED]
    notes += [f"shard {f.shard.label}: {f.info.note}" for f in found if f.info.note]
    gate = first.gate
    calibration, said = merged_calibration(found) if gate is not None else (None, "")
    if gate is not None and said:  # (shards that agree: the first's gate, as it was written)
        gate = gate.updated(calibration=calibration)
        notes.append(said)
    info = SessionInfo(id=sid, label=first.label, started_at=min(f.info.started_at for f in found),
                       finished_at=max((f.info.finished_at or "" for f in found), default="") or None,
                       state=worst, runs_per_case=first.runs_per_case, case_ids=list(first.case_ids),
                       fingerprint=first.fingerprint, agent=first.agent, judge_model=first.judge_model,
                       git_revision=first.git_revision, case_digests=dict(first.case_digests),
                       partial=first.partial, note="; ".join(notes), gate=gate,
                       shard=ShardHeader.of_merge(sid, tuple(f.info.id for f in found)),
                       executor=_merged_executor([f.info.executor for f in found]),
                       isolation=_merged_isolation([f.info.isolation for f in found]),
                       agents=list(first.agents))
    runs = []
    for f in found:
        for r in f.runs:
            r.session_id = sid
            runs.append(r)
    runs.sort(key=lambda r: (r.case_id, r.k))
    return info, runs


def merged_calibration(found: list[FoundShard]) -> tuple[Mapping[str, Any] | None, str]:
    """The judge's calibration the merged session keeps (session.json's gate.calibration), and its note's words.
    Shards whose records count the same labels with the same verdicts (Calibration.labels_key, the label digest
    the replay compares) measured one judge's error from one set of labels; their records differ only in the
    strata's sizes (W), each counted from its own machine's history. The one counted from the most judged items
    is kept (the first such shard's): its W is the most precise, and each record carries its own W's variance
    (docs/statistics.md). Shards whose labels differ, or a record without the digest (older) or damaged: none —
    the merged session's report corrects with the project's calibration (run/gate.replay_calibration)."""
    records = [f.info.gate.calibration if f.info.gate else None for f in found]
    if all(r == records[0] for r in records):
        return records[0], ""
    read = [_labelled(r) for r in records]
    known = [c for c in read if c is not None]
    if len(known) < len(read) or len({c.labels_key for c in known}) > 1:
        return None, ("its shards ran with different calibrations of the judge: its report corrects with the "
                      "calibration in this project's history")
    keep = max(range(len(found)), key=lambda i: (known[i].judged, -i))
    return records[keep], (f"its shards' calibrations of the judge count the same {plural(known[keep].labels, 'label')} "
                           f"with the same verdicts, on different histories: it keeps shard {found[keep].shard.label}'s, "
                           f"whose history held the most judged items ({known[keep].judged:g})")


def _labelled(record: Mapping[str, Any] | None) -> Calibration | None:
    """A shard's recorded calibration when it names the labels it counts (label_digest); else None."""
    if not record or not record.get("label_digest"):
        return None
    try:
        return Calibration.from_record(record)
    except (KeyError, TypeError, ValueError):
        return None


def _merged_executor(executors: list[RunPlace | None]) -> RunPlace | None:
    """Where a merged session's runs executed: the shards' executor when they agree, else
    {"type": "mixed", "address": None, "shards": [each shard's, in shard order]} ({} from older shards)."""
    distinct = [e for i, e in enumerate(executors) if e not in executors[:i]]
    if len(distinct) == 1:
        return distinct[0]
    return RunPlace(MIXED, None, tuple(executors), keys=("type", "address", "shards"))


def _merged_isolation(isolations: list[Confinement | None]) -> Confinement | None:
    """What confined a merged session's agents: the shards' isolation when they agree, else
    {"ran": "mixed", "shards": [each shard's, in shard order]} ({} from older shards)."""
    distinct = [e for i, e in enumerate(isolations) if e not in isolations[:i]]
    if len(distinct) == 1:
        return distinct[0]
    return Confinement(MIXED, shards=tuple(isolations))


def _below(path: str, folder: str) -> Path | None:
    """`path`'s part below its shard's session folder `folder` (case/k, case/k.transcript.jsonl, …), or None."""
    parts = Path(path).parts
    at = len(parts) - 1 - parts[::-1].index(folder) if folder in parts else None
    rel = Path(*parts[at + 1:]) if at is not None and parts[at + 1:] else None
    return None if rel is None or ".." in rel.parts else rel


def _shard_workspaces(f: FoundShard) -> Path:
    """Where the shard left its runs' folders and files: workspaces/<shard session>, beside its history folder."""
    return f.folder.parent.parent / f.folder.name


def absent_workspaces(found: list[FoundShard]) -> list[str]:
    """Once per shard uploaded without its workspaces folder (only workspaces/history): what of it stays behind."""
    out = []
    for f in found:
        kept = sum(1 for r in f.runs if r.workspace_kept and r.workspace)
        files = sum(1 for r in f.runs for p in (r.transcript_path, r.stderr_path) if p)
        what = ([plural(kept, "kept workspace")] if kept else []) + \
            ([plural(files, "run file") + " (transcripts, stderr logs)"] if files else [])
        if what and not _shard_workspaces(f).is_dir():
            out.append(f"shard {f.shard.label}: its {' and '.join(what)} would be in {_shard_workspaces(f)}, which is "
                       "not there — upload the shard's whole workspaces/ folder (not only workspaces/history) to have "
                       "them")
    return out


def copy_run_files(found: list[FoundShard], workspaces_dir: Path, sid: str) -> list[str]:
    """Copy each run's transcript and stderr log from the shard's workspaces folder to this project's
    workspaces/<sid>/, as `eval` leaves them, and point the run record at the copy (a record pointing at the
    shard machine's copy would lose them with it). Returns what could not be copied, named."""
    missing: list[str] = []
    for f in found:
        source_root = _shard_workspaces(f)
        if not source_root.is_dir():  # only the history folder was uploaded: absent_workspaces says it
            continue
        for r, field in [(r, field) for r in f.runs for field in ("transcript_path", "stderr_path") if getattr(r, field)]:
            rel = _below(getattr(r, field), f.folder.name)
            if rel is None or not (source_root / rel).is_file() or (source_root / rel).is_symlink():
                missing.append(f"{r.case_id} run {r.k}: {getattr(r, field)} is not there")
                continue
            source, dest = source_root / rel, workspaces_dir / sid / rel
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest)
            except OSError as exc:
                missing.append(f"{r.case_id} run {r.k}: cannot copy {source}: {exc}")
                continue
            setattr(r, field, str(dest))
    return missing


def copy_kept_workspaces(found: list[FoundShard], workspaces_dir: Path, sid: str) -> list[str]:
    """Copy each kept workspace (a failed run's, or every run's under keep: all) from the shard's
    workspaces folder (beside the history folder it left: workspaces/<shard session>/<case>/<k>) to this
    project's workspaces/<sid>/<case>/<k>, as `eval` leaves them, and point the run record at the copy.
    Links are copied as links, never followed. Returns what could not be copied, named."""
    missing: list[str] = []
    for f in found:
        source_root = _shard_workspaces(f)
        kept = [r for r in f.runs if r.workspace_kept and r.workspace]
        if not source_root.is_dir():  # only the history folder was uploaded: absent_workspaces says it
            continue
        for r in kept:
            # the path below the shard's session folder (case/k, or case/k/attempt-N after an infra retry)
            rel = _below(r.workspace, f.folder.name)
            if rel is None:
                missing.append(f"{r.case_id} run {r.k}: its workspace {r.workspace} is not in the shard's "
                               f"folder {f.folder.name}")
                continue
            source, dest = source_root / rel, workspaces_dir / sid / rel
            if not source.is_dir() or source.is_symlink():
                missing.append(f"{r.case_id} run {r.k}: {source} is not there")
                continue
            try:
                shutil.copytree(source, dest, symlinks=True)
            except (OSError, shutil.Error) as exc:
                missing.append(f"{r.case_id} run {r.k}: cannot copy {source}: {exc}")
                continue
            r.workspace = str(dest)
    return missing


def copy_judge_artifacts(found: list[FoundShard], workspaces_dir: Path) -> list[str]:
    """Bring the artifacts each shard's judge saw (its workspaces/judge-artifacts, beside the history folder it
    left) into this project's, so the merged session can be graded again (`scarbook rejudge`). Returns what
    could not be brought, named (a shard uploaded without them: said once)."""
    here = ArtifactStore(workspaces_dir / ARTIFACTS)
    problems: list[str] = []
    for f in found:
        digests = sorted({e["sha256"] for r in f.runs for e in r.judge_artifacts.values() if "sha256" in e})
        there = ArtifactStore(f.folder.parent.parent / ARTIFACTS)
        if digests and not there.folder.is_dir():
            problems.append(f"shard {f.shard.label}: the {plural(len(digests), 'artifact')} its judge saw would be in "
                            f"{there.folder}, which is not there — upload the shard's whole workspaces/ folder (not "
                            "only workspaces/history) to grade the merged session again")
            continue
        problems += [f"shard {f.shard.label}: {why}" for why in (here.copy_from(there, d) for d in digests) if why]
    return problems

