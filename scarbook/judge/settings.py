"""The `judge:` section of scarbook.yaml, validated into JudgeSettings.

Every unknown key or wrong type is a ConfigError naming `judge.<key>`, never a silent ignore.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scarbook.errors import ConfigError
from scarbook.judge.pricing import DEFAULT_PRICES, PRICE_FIELDS, ModelPrice, priced
from scarbook.judge.prompt import Sampling, prompt_digest
from scarbook.models import Usage

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"


@dataclass
class JudgeSettings:
    model: str = DEFAULT_MODEL
    base_url: str | None = None  # None: the SDK default (api.anthropic.com or $ANTHROPIC_BASE_URL)
    api_key_env: str = DEFAULT_API_KEY_ENV
    # 0 for the most repeatable grading; None (`temperature: null`) sends none, for models or
    # vendors that reject the parameter (newer Claude models accept only the default).
    temperature: float | None = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    max_retries: int = 2
    samples: int = 1  # odd: each item's verdict is the majority of this many independent calls
    max_artifact_bytes: int = 100_000
    prices: dict[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    # judge truth (issue 23): correct judged rates for the judge's measured error when a fresh
    # calibration has at least this many labels, and this many of each class
    correct: bool = True
    calibration_min_labels: int = 30
    calibration_min_per_class: int = 10
    # issue 27: a sample an earlier session graded identically is read from workspaces/judge-cache
    cache: bool = True
    # issue 27: each judged run keeps the artifact the judge saw (workspaces/judge-artifacts) for rejudge
    keep_artifacts: bool = True
    # issue 27: grade through the Message Batches API (half price, results within 24 h; eval --judge-batch)
    batch: bool = False
    batch_poll_s: float = 30.0  # how often a batch's progress is asked for

    @property
    def sampling(self) -> Sampling:
        return Sampling(self.model, self.max_tokens, self.temperature)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, path: Path) -> JudgeSettings:
        """Validate the raw `judge:` mapping of scarbook.yaml (None or missing: all defaults)."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise ConfigError(path, f"judge must be a mapping, not {_kind(data)}", fix="write `judge:` followed by indented keys such as `model: ...`")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise ConfigError(
                path,
                f"unknown key judge.{unknown[0]}",
                fix=f"use one of: {', '.join(sorted(_FIELDS))}",
            )
        values: dict[str, Any] = {}
        for key, raw in data.items():
            values[key] = _FIELDS[key](raw, path, f"judge.{key}")
        if "prices" in values:
            values["prices"] = {**DEFAULT_PRICES, **values["prices"]}
        samples = values.get("samples", 1)
        if samples % 2 == 0:
            raise ConfigError(
                path,
                f"judge.samples must be an odd number, got {samples}",
                fix="use 1, 3 or 5 so every rubric item has a strict majority",
            )
        return cls(**values)

    @property
    def sampling_key(self) -> str:
        """"samples=3 temperature=0.0": with the model and prompt digest, the judge configuration a
        calibration holds for (judge/calibrate.sampling_of reads the same from a judge record)."""
        return f"samples={self.samples} temperature={self.temperature}"

    @property
    def prompt_digest(self) -> str:
        """Changes when the grading prompt or tool schema changes: sessions graded by different
        prompts are not comparable (part of Config.fingerprint)."""
        return prompt_digest()

    def price_usage(self, model: str, usage: Usage) -> float:
        """USD for `usage` on `model` from this price table (0.0 for a model it cannot price);
        the runner uses it for agent usage lines that carry a model but no cost."""
        return priced(usage, model, self.prices).cost_usd

    def to_dict(self) -> dict[str, Any]:
        """The settings that decide verdicts (for the session fingerprint and history)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": self.api_key_env,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout_s": self.timeout_s,
            "max_retries": self.max_retries,
            "samples": self.samples,
            "max_artifact_bytes": self.max_artifact_bytes,
        }


def _kind(value: Any) -> str:
    if value is None:
        return "empty"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}.get(
        type(value), type(value).__name__
    )


def _text(raw: Any, path: Path, key: str) -> str:
    fix = f"write e.g. `{key.split('.')[-1]}: {_EXAMPLES[key]}`"
    if not isinstance(raw, str):
        raise ConfigError(path, f"{key} must be a string, not {_kind(raw)}", fix=fix)
    if not raw.strip():
        raise ConfigError(path, f"{key} is empty", fix=fix)
    return raw.strip()


def _optional_text(raw: Any, path: Path, key: str) -> str | None:
    return None if raw is None else _text(raw, path, key)


def _number(minimum: float, *, integer: bool, above: bool = False):
    def parse(raw: Any, path: Path, key: str) -> float | int:
        ok_type = isinstance(raw, int) if integer else isinstance(raw, (int, float))
        if isinstance(raw, bool) or not ok_type:
            what = "a whole number" if integer else "a number"
            raise ConfigError(path, f"{key} must be {what}, not {_kind(raw)}", fix=f"write e.g. `{key.split('.')[-1]}: {_EXAMPLES[key]}`")
        if raw < minimum or (above and raw == minimum):
            bound = f"greater than {minimum:g}" if above else f"at least {minimum:g}"
            raise ConfigError(path, f"{key} must be {bound}, got {raw}", fix=f"write e.g. `{key.split('.')[-1]}: {_EXAMPLES[key]}`")
        return raw if integer else float(raw)

    return parse


def _temperature(raw: Any, path: Path, key: str) -> float | None:
    if raw is None:
        return None
    value = _number(0.0, integer=False)(raw, path, key)
    if value > 1.0:
        raise ConfigError(path, f"{key} must be between 0 and 1, got {raw}", fix="use 0 for the most repeatable grading, or null to send no temperature")
    return value


def _flag(raw: Any, path: Path, key: str) -> bool:
    if not isinstance(raw, bool):
        raise ConfigError(path, f"{key} must be true or false, not {_kind(raw)}", fix=f"write `{key.split('.')[-1]}: false` to turn it off")
    return raw


def _prices(raw: Any, path: Path, key: str) -> dict[str, ModelPrice]:
    if not isinstance(raw, dict):
        raise ConfigError(path, f"{key} must be a mapping of model name to prices, not {_kind(raw)}", fix=_PRICE_FIX)
    table: dict[str, ModelPrice] = {}
    for model, entry in raw.items():
        where = f"{key}.{model}"
        if not isinstance(entry, dict):
            raise ConfigError(path, f"{where} must be a mapping, not {_kind(entry)}", fix=_PRICE_FIX)
        unknown = sorted(set(entry) - set(PRICE_FIELDS))
        if unknown:
            raise ConfigError(path, f"unknown key {where}.{unknown[0]}", fix="use input, output, cache_read, cache_write (USD per million tokens) or batch (the "
                              "Message Batches price as a multiple of the online one, 0.5 by default)")
        for required in ("input", "output"):
            if required not in entry:
                raise ConfigError(path, f"{where} is missing {required}", fix=_PRICE_FIX)
        numbers = {}
        for name, value in entry.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                if name == "batch":
                    raise ConfigError(path, f"{where}.batch must be a multiplier of the online price, not {value!r}",
                                      fix="write e.g. `batch: 0.5` (the Message Batches API bills half the online price)")
                raise ConfigError(path, f"{where}.{name} must be a number of USD per million tokens, not {value!r}", fix=_PRICE_FIX)
            numbers[name] = float(value)
        base = ModelPrice.from_input_output(numbers["input"], numbers["output"])
        table[str(model)] = ModelPrice(
            input=base.input,
            output=base.output,
            cache_read=numbers.get("cache_read", base.cache_read),
            cache_write=numbers.get("cache_write", base.cache_write),
            batch=numbers.get("batch", base.batch),
        )
    return table


_PRICE_FIX = "write e.g. `prices: {claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}}` (USD per million tokens)"

_FIELDS = {
    "model": _text,
    "base_url": _optional_text,
    "api_key_env": _text,
    "temperature": _temperature,
    "max_tokens": _number(1, integer=True),
    "timeout_s": _number(0, integer=False, above=True),
    "max_retries": _number(0, integer=True),
    "samples": _number(1, integer=True),
    "max_artifact_bytes": _number(1, integer=True),
    "prices": _prices,
    "correct": _flag,
    "calibration_min_labels": _number(1, integer=True),
    "calibration_min_per_class": _number(1, integer=True),
    "cache": _flag,
    "keep_artifacts": _flag,
    "batch": _flag,
    "batch_poll_s": _number(0, integer=False, above=True),
}

_EXAMPLES = {
    "judge.model": DEFAULT_MODEL,
    "judge.base_url": "https://api.anthropic.com",
    "judge.api_key_env": DEFAULT_API_KEY_ENV,
    "judge.temperature": "0",
    "judge.max_tokens": "1024",
    "judge.timeout_s": "60",
    "judge.max_retries": "2",
    "judge.samples": "3",
    "judge.max_artifact_bytes": "100000",
    "judge.calibration_min_labels": "30",
    "judge.calibration_min_per_class": "10",
    "judge.batch_poll_s": "30",
}
