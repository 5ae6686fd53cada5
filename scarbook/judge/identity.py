"""Which judge a label, a judged item or a recorded calibration was made on, told apart from the judge in use.

A judge is its model, its prompt digest and the settings that change its verdicts beside them (`SAMPLING_PARTS`,
kept on each label, judged item and calibration record as "samples=3 temperature=0.0 max_tokens=1024
base_url=https://api.anthropic.com": `sampling_of` reads them from a run's judge record, JudgeSettings.sampling_key
from the judge in use). One rule for every reader — history/judge_truth.py's labels and judged items, the
library's "calibrated …, stale" line (judge/label_store.calibration_status) — so they never disagree on whether a
calibration still holds.

A record older than a part does not name it. Not naming samples, temperature or max_tokens is not held against
it; not naming base_url is: the same model name behind another vendor's endpoint is another judge, so such a
record counts as made at the default endpoint (https://api.anthropic.com) only.
"""

from __future__ import annotations

from scarbook.judge.settings import SDK_BASE_URL, JudgeSettings
from scarbook.models import JudgeDetail

# what tells judges apart beside the model and prompt, in this order: a label's and a judged item's judge_sampling
SAMPLING_PARTS = ("samples", "temperature", "max_tokens", "base_url")


def sampling_of(judge: JudgeDetail) -> str:
    """The judge record's settings that change verdicts, beside its model and prompt, as "samples=3
    temperature=0.0 max_tokens=1024 base_url=https://api.anthropic.com" (a part the record does not hold left
    out: a record older than it; sampling_matches says what that counts as)."""
    return " ".join(f"{key}={getattr(judge, key)}" for key in SAMPLING_PARTS
                    if judge.has(key) and getattr(judge, key) is not None)


def _parts(sampling: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in sampling.split() if "=" in part)


def _recorded_as(recorded: dict[str, str], key: str) -> str | None:
    """What a record's part counts as: its value, or for a record older than the part None (not held against the
    judge in use) — but base_url, which decides whose model graded, counts as the SDK's default endpoint: a
    calibration measured at one vendor's endpoint is never applied to another's."""
    return recorded.get(key, SDK_BASE_URL if key == "base_url" else None)


def sampling_matches(recorded: str, current: str) -> bool:
    """A record's judge sampling against the judge in use's: every part both name agrees (a record older than
    samples, temperature or max_tokens does not name it, and is not held against it; one older than base_url
    counts as made at the default endpoint, https://api.anthropic.com)."""
    mine, now = _parts(recorded), _parts(current)
    return all(_recorded_as(mine, key) in (None, value) for key, value in now.items())


def sampling_words(recorded: str, current: str) -> tuple[str, str]:
    """The parts in which a record's judge and the judge in use differ, each side's words for them."""
    mine, now = _parts(recorded), _parts(current)
    differ = [key for key, value in now.items() if _recorded_as(mine, key) not in (None, value)]
    then = [f"{key}={mine[key]}" if key in mine else f"{key} not recorded (counted as {_recorded_as(mine, key)})"
            for key in differ]
    return " ".join(then), " ".join(f"{key}={now[key]}" for key in differ)


def same_judge(model: str, prompt_digest: str, sampling: str, judge: JudgeSettings) -> bool:
    """Was a record (a label, a judged item, a calibration) made on the judge `judge` configures?"""
    return (model == judge.model and prompt_digest == judge.prompt_digest
            and sampling_matches(sampling, judge.sampling_key))


def judges_apart(model: str, prompt_digest: str, sampling: str, judge: JudgeSettings) -> tuple[str, str]:
    """A record's judge and the judge in use, in words that show where they differ: "claude-x, max_tokens=1024"
    and "claude-x, max_tokens=2048" for the same model and prompt, else each model with its prompt digest."""
    if (model, prompt_digest[:8]) == (judge.model, judge.prompt_digest[:8]):
        then, now = sampling_words(sampling, judge.sampling_key)
        return f"{model}, {then}", f"{judge.model}, {now}"
    return f"{model} (prompt {prompt_digest[:8]})", f"{judge.model} (prompt {judge.prompt_digest[:8]})"
