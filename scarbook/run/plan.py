"""What a session is asked to run: the cases, the runs and every choice made for it (SessionPlan), and
where it runs (SessionSite: the project's folder, the session's config, the history). The session layer
(session/plan.py) makes both from a face's request; run/session.py prepares them.

Plain data and its light imports only: `scarbook eval --dry-run` plans without loading the runner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from scarbook.config import ConfigFolders
from scarbook.judge.errors import SKIP_HINT, KeyHint

if TYPE_CHECKING:
    from scarbook.agents.named import NamedAgent
    from scarbook.config import Config, GatePolicy
    from scarbook.history.store import History
    from scarbook.models import Case, RunRecord, SessionInfo
    from scarbook.models.session_parts import RerunLink
    from scarbook.project import Project
    from scarbook.record.settings import RecordSettings
    from scarbook.run.shard import Shard


@dataclass(frozen=True)
class SessionSite(ConfigFolders):
    """What a session needs of its project, handed down instead of the Project: the project folder (agents
    are tagged by it, the sandbox binds it, git's revision is read there), scarbook.yaml as this session has
    it (an override such as --isolation makes a new Config; the file's stays as read) and the history store.
    A face builds it once from the project it opened; the session layer, the run layer and the reports
    read these values from it, never the project (so nothing below the faces climbs back to it)."""

    root: Path
    config: Config
    # the history store the face has open (the TUI's project: the live session is read through the store
    # that records it); None: one is opened on first use (a dry run never loads the history wing)
    opened: History | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, project: Project) -> SessionSite:
        return cls(project.root, project.config, project.history)

    @cached_property
    def history(self) -> History:
        if self.opened is not None:
            return self.opened
        from scarbook.history.store import History  # (tinydb, filelock: only when history is read)

        return History(self.workspaces_dir)


SEQUENTIAL = "sequential"  # GateRecord.rule of a --runs auto session


@dataclass(frozen=True)
class Resumed:
    """`scarbook resume` of a session that stopped short (session/resume.py): its record as read, and the runs
    it holds of each case (k -> run), which the runner takes up before it runs the missing ones."""

    info: SessionInfo
    held: Mapping[str, Mapping[int, RunRecord]]
    # the runs k of each case that met the judge's rejected key (an aborted session): not held, they run again
    again: Mapping[str, Sequence[int]] = field(default_factory=dict)


@dataclass
class SessionPlan:
    """What the user asked for (CLI options or the TUI's launch modal)."""

    cases: list[Case]
    runs: int  # runs per case; with `adaptive`, the cap
    label: str = ""
    concurrency: int | None = None  # None: scarbook.yaml's
    keep_all: bool | None = None  # None: scarbook.yaml's `keep`
    skip_judge: bool = False
    judge_cache: bool = True  # False: --no-judge-cache (judge.cache: false turns it off for every session)
    judge_batch: bool = False  # --judge-batch / judge.batch: the judge's requests go in one Message Batch
    judge_skipped_why: str = "--skip-judge"  # the TUI says "no API key in $X"
    # what the judge's key problems end with: what else this session's face (CLI, TUI, resume) can do; wording,
    # not a choice: two plans of the same choices are equal whichever face made them
    key_hint: KeyHint = field(default=SKIP_HINT, compare=False)
    timeout_s: float | None = None
    max_cost: float | None = None
    adaptive: bool = False  # stop each case once the evidence decides it (--runs auto)
    judge_env: Mapping[str, str] | None = None  # where the judge's API key is read (default proc.credentials.environ())
    shard: Shard | None = None  # run only this shard's share of the (case, k) jobs (eval --shard)
    retry_infra: int | None = None  # --retry-infra; None: scarbook.yaml's retry_infra (0 under --runs auto)
    rerun_of: RerunLink | None = None  # eval --rerun: the source session and what was picked (tools/rerun.py)
    reports: dict[str, Path] = field(default_factory=dict)  # files written after the session: option -> path
    against: str = ""  # eval --against: "baseline" or the session id compared with (kept for `scarbook resume`)
    gate: GatePolicy | None = None  # None: scarbook.yaml's `gate:`
    max_runs: int | None = None  # `gate: {undecided: more}`: undecided cases get runs up to this many
    jobs: dict[str, list[int]] | None = None  # exactly these runs k of each case (rejudge); None: 1..runs
    # a rejudge of a session that did not finish (interrupted, cancelled, ...): its state and note, which the new
    # session ends with when it finishes, since it holds only part of the runs (no verdict: exit 3)
    ends_as: tuple[str, str] | None = None
    record: RecordSettings | None = None  # eval --record / --replay; None: scarbook.yaml's record:
    # named agents of scarbook.yaml's agents: (agents/named.py) instead of agent: — two or more (--agents):
    # one session, every case `runs` times per agent in blocks (run/blocks.py), the first the baseline;
    # one: that agent alone (the TUI's launch)
    agents: list[NamedAgent] = field(default_factory=list)
    resumed: Resumed | None = None  # `scarbook resume`: the session taken up, under its own id (jobs: what it misses)
