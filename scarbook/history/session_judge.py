"""Which judge graded a session, as its runs record it, and whether two sessions had the same one.

session.json names the judge's model only; each graded llm_judge check (models/judge_detail.JudgeDetail) also
records where it was reached (base_url, without secrets: JudgeSettings.recorded_base_url), the grading prompt's
digest and the settings that change verdicts (samples, temperature — what the judge's calibration tells judges
apart by, history/judge_truth.current_labels — and max_tokens). Two sessions had one judge when all of these agree.
A part some check of a session did not record (a record older than the setting) is unknown: on it the two are
neither the same judge nor different ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from scarbook.judge.settings import JudgeSettings
from scarbook.models import JudgeDetail, RunRecord

# each part of the judge a run records, as the diff names it; the model first
PARTS = ("model", "base_url", "prompt digest", "samples", "temperature", "max_tokens")


def _parts_of(judge: JudgeDetail) -> dict[str, str | None]:
    return {"model": judge.model or None,
            "base_url": judge.base_url or None,
            "prompt digest": judge.prompt_digest[:8] if judge.prompt_digest else None,
            "samples": str(judge.samples) if judge.has("samples") else None,
            "temperature": str(judge.temperature) if judge.has("temperature") else None,
            "max_tokens": str(judge.max_tokens) if judge.max_tokens is not None else None}


@dataclass(frozen=True)
class SessionJudge:
    """Each part's value (None: unknown, some graded check did not record it; "a or b": its checks disagree)."""

    parts: dict[str, str | None] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.parts.get("model") or "?"

    def unknown(self) -> list[str]:
        return [p for p in PARTS if self.parts.get(p) is None]


def judge_of_runs(runs: Iterable[RunRecord]) -> SessionJudge | None:
    """The judge that graded `runs` (every graded llm_judge check of them); None when none was graded."""
    seen: dict[str, list[str | None]] = {p: [] for p in PARTS}
    for run in runs:
        for check in run.checks:
            if check.type == "llm_judge" and check.judge is not None and check.judge.items:
                for part, value in _parts_of(check.judge).items():
                    if value not in seen[part]:
                        seen[part].append(value)
    if not seen["model"]:
        return None
    return SessionJudge({p: None if None in values else " or ".join(sorted(v for v in values if v is not None))
                         for p, values in seen.items()})


def judge_in_use(settings: JudgeSettings) -> SessionJudge:
    """The judge scarbook.yaml configures, part by part as a run records it."""
    return SessionJudge({"model": settings.model, "base_url": settings.recorded_base_url(),
                         "prompt digest": settings.prompt_digest[:8], "samples": str(settings.samples),
                         "temperature": str(settings.temperature), "max_tokens": str(settings.max_tokens)})


@dataclass(frozen=True)
class JudgeMatch:
    """Two judges part by part: what differs ('temperature 0.0 -> 0.7'), and what is unknown and on whose side."""

    differ: list[str]
    unknown: dict[str, list[str]]  # "A" / "B" -> the parts its runs did not record

    @property
    def same(self) -> bool:
        return not self.differ and not self.unknown


def match_judges(a: SessionJudge, b: SessionJudge) -> JudgeMatch:
    differ = [f"{part} {a.parts[part]} -> {b.parts[part]}" for part in PARTS
              if a.parts.get(part) is not None and b.parts.get(part) is not None and a.parts[part] != b.parts[part]]
    unknown = {side: judge.unknown() for side, judge in (("A", a), ("B", b)) if judge.unknown()}
    return JudgeMatch(differ, unknown)


def changed_parts(a: SessionJudge, b: SessionJudge) -> list[str]:
    """What differs, as the diff's config and rejudge notes say it: "judge 'm1' -> 'm2'" for the model,
    "judge temperature '0.0' -> '0.7'" for another part."""
    return [f"judge {'' if part == 'model' else part + ' '}{a.parts[part]!r} -> {b.parts[part]!r}" for part in PARTS
            if a.parts.get(part) is not None and b.parts.get(part) is not None and a.parts[part] != b.parts[part]]


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def judges_line(a: SessionJudge, b: SessionJudge) -> str:
    """What `scarbook diff` says when two sessions' judges are not known to be one: which part differs, or which
    one a side's runs did not record; "" when one judge graded both."""
    match = match_judges(a, b)
    if match.differ:
        return (f"judge: A and B were graded by different judges ({'; '.join(match.differ)}): their difference mixes "
                "the agent's change with the judges'; the raw verdicts stand")
    if match.unknown:
        sides = "; ".join(f"{side}'s runs do not record its {_listed(parts)}" for side, parts in match.unknown.items())
        return (f"judge: both sessions were graded by {a.model}, but whether by one judge is unknown — {sides} (older "
                "records): differences not corrected for its error; the raw verdicts stand")
    return ""


def described(judge: SessionJudge, other: SessionJudge) -> str:
    """The judge by its model, with each other part in which it differs from `other`: 'claude-x with temperature 0.7'."""
    rest = [f"{part} {judge.parts[part]}" for part in PARTS[1:] if judge.parts.get(part) != other.parts.get(part)]
    return judge.model + (f" with {', '.join(rest)}" if rest else "")
