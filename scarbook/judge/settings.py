"""The `judge:` section of scarbook.yaml, declared as JudgeSettings (scarbook/fs/settings.py reads it).

Every unknown key or wrong type is a ConfigError naming `judge.<key>`, never a silent ignore.
"""

# No `from __future__ import annotations` here: msgspec reads these Structs' field types the first time
# scarbook.yaml is converted, and a string annotation is compiled and evaluated there, each (issue 38).

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

import msgspec
from msgspec import Meta

from scarbook.fs.settings import Problem, Words, convert, kind_of
from scarbook.judge.pricing import DEFAULT_PRICES, PRICE_FIELDS, ModelPrice, priced
from scarbook.models import Usage

if TYPE_CHECKING:  # what the judge is sent: loaded when a request is built, not when judge: is read
    from scarbook.judge.prompt import Sampling

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_API_KEY_ENV = "ANTHROPIC_API_KEY"
# where the anthropic SDK sends a client made without base_url: $ANTHROPIC_BASE_URL, else this
SDK_BASE_URL_ENV = "ANTHROPIC_BASE_URL"
SDK_BASE_URL = "https://api.anthropic.com"


def _example(value: Any, *, ge: float | None = None, gt: float | None = None) -> Meta:
    """A judge field's bounds, and the value its fix shows (`write e.g. `samples: 3``)."""
    extra = {"fix": f"write e.g. `{{key}}: {value}`"}
    return Meta(gt=gt, extra=extra) if gt is not None else Meta(ge=ge, extra=extra)


_PRICE_FIX = "write e.g. `prices: {claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}}` (USD per million tokens)"
_TEXT = Annotated[str, Meta(min_length=1, extra={"fix": "write e.g. `{key}: {default}`"})]
_FLAG = Annotated[bool, Meta(extra={"fix": "write `{key}: false` to turn it off"})]


class JudgeSettings(msgspec.Struct, Words, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """scarbook.yaml's `judge:` section, declared: each key, its default and its bounds."""

    NAME: ClassVar[str] = "judge"
    VOICE: ClassVar[str] = "typed"
    UNKNOWN: ClassVar[str] = "unknown key judge.{key}"
    TAKES: ClassVar[str] = "use one of: {keys}"
    SORTED_KEYS: ClassVar[bool] = True
    NOT_MAPPING: ClassVar[str] = "judge must be a mapping, not {kind}"
    NOT_MAPPING_FIX: ClassVar[str] = "write `judge:` followed by indented keys such as `model: ...`"

    model: _TEXT = DEFAULT_MODEL
    # None: the SDK default (api.anthropic.com or $ANTHROPIC_BASE_URL)
    base_url: Annotated[str | None, Meta(extra={"fix": "write e.g. `{key}: https://api.anthropic.com`"})] = None
    api_key_env: _TEXT = DEFAULT_API_KEY_ENV
    # 0 for the most repeatable grading; None (`temperature: null`) sends none, for models or
    # vendors that reject the parameter (newer Claude models accept only the default).
    temperature: Annotated[Annotated[float, Meta(ge=0, le=1)] | None, Meta(extra={
        "fix": "write e.g. `{key}: 0`", "range_fix": "use 0 for the most repeatable grading, or null to send no temperature"})] = 0.0
    max_tokens: Annotated[int, _example(1024, ge=1)] = 1024
    timeout_s: Annotated[float, _example(60, gt=0)] = 60.0
    max_retries: Annotated[int, _example(2, ge=0)] = 2
    samples: Annotated[int, _example(3, ge=1)] = 1  # odd: each item's verdict is the majority of this many calls
    max_artifact_bytes: Annotated[int, _example(100000, ge=1)] = 100_000
    # USD per million tokens per model: scarbook.yaml's entries over DEFAULT_PRICES (checked in __post_init__)
    prices: Annotated[dict[str, Any], Meta(extra={"must": "must be a mapping of model name to prices, not {kind}",
                                                  "fix": _PRICE_FIX})] = msgspec.field(default_factory=lambda: dict(DEFAULT_PRICES))
    # judge truth (issue 23): correct judged rates for the judge's measured error when a fresh
    # calibration has at least this many labels, and this many of each class
    correct: _FLAG = True
    calibration_min_labels: Annotated[int, _example(30, ge=1)] = 30
    calibration_min_per_class: Annotated[int, _example(10, ge=1)] = 10
    # issue 27: a sample an earlier session graded identically is read from workspaces/judge-cache
    cache: _FLAG = True
    # issue 27: each judged run keeps the artifact the judge saw (workspaces/judge-artifacts) for rejudge
    keep_artifacts: _FLAG = True
    # issue 27: grade through the Message Batches API (half price, results within 24 h; eval --judge-batch)
    batch: _FLAG = False
    batch_poll_s: Annotated[float, _example(30, gt=0)] = 30.0  # how often a batch's progress is asked for
    # issue 35: each rubric item's stable id is written into case.yaml (`{id, text}`) when it is first judged
    write_item_ids: _FLAG = True

    def __post_init__(self) -> None:
        for key in ("model", "api_key_env", "base_url"):
            text = getattr(self, key)
            if text is not None and not text.strip():
                raise Problem(key, f"judge.{key} is empty", fix=f"write e.g. `{key}: {_DEFAULT_TEXT[key]}`")
            if text is not None:
                msgspec.structs.force_setattr(self, key, text.strip())
        if self.samples % 2 == 0:
            raise Problem("samples", f"judge.samples must be an odd number, got {self.samples}",
                          fix="use 1, 3 or 5 so every rubric item has a strict majority")
        if self.prices is not DEFAULT_PRICES and any(not isinstance(p, ModelPrice) for p in self.prices.values()):
            msgspec.structs.force_setattr(self, "prices", {**DEFAULT_PRICES, **_prices(self.prices)})

    @property
    def sampling(self) -> "Sampling":
        from scarbook.judge.prompt import Sampling

        return Sampling(self.model, self.max_tokens, self.temperature)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, path: Path) -> "JudgeSettings":
        """Validate the raw `judge:` mapping of scarbook.yaml (None or missing: all defaults)."""
        return cls() if data is None else convert(data, cls, path)

    @property
    def sampling_key(self) -> str:
        """"samples=3 temperature=0.0 max_tokens=1024 base_url=https://api.anthropic.com": with the model and
        prompt digest, the judge configuration a calibration holds for (judge/calibrate.sampling_of reads the
        same from a judge record)."""
        return (f"samples={self.samples} temperature={self.temperature} max_tokens={self.max_tokens} "
                f"base_url={self.recorded_base_url()}")

    def recorded_base_url(self, environ: Mapping[str, str] = os.environ) -> str:
        """Where the judge is reached, as a run's judge record keeps it (`scarbook diff` compares it): base_url, or
        unset the URL the SDK calls then ($ANTHROPIC_BASE_URL from `environ`, else its default), with no
        user:password, query or fragment (secrets some proxies carry) and no trailing slash."""
        url = self.base_url or environ.get(SDK_BASE_URL_ENV) or SDK_BASE_URL
        parts = urlsplit(url.strip())
        return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path.rstrip("/"), "", ""))

    @property
    def prompt_digest(self) -> str:
        """Changes when the grading prompt or tool schema changes: sessions graded by different
        prompts are not comparable (part of Config.fingerprint)."""
        from scarbook.judge.prompt import prompt_digest

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


def _prices(raw: dict[str, Any]) -> dict[str, ModelPrice]:
    """`judge.prices` as written: each model's entry checked and completed (cache prices from the input's)."""
    key = "judge.prices"
    table: dict[str, ModelPrice] = {}
    for model, entry in raw.items():
        where = f"{key}.{model}"
        if not isinstance(entry, dict):
            raise Problem("prices", f"{where} must be a mapping, not {kind_of(entry)}", fix=_PRICE_FIX)
        unknown = sorted(set(entry) - set(PRICE_FIELDS))
        if unknown:
            raise Problem("prices", f"unknown key {where}.{unknown[0]}", fix="use input, output, cache_read, cache_write (USD per million tokens) or batch (the "
                              "Message Batches price as a multiple of the online one, 0.5 by default)")
        for required in ("input", "output"):
            if required not in entry:
                raise Problem("prices", f"{where} is missing {required}", fix=_PRICE_FIX)
        numbers = {}
        for name, value in entry.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                if name == "batch":
                    raise Problem("prices", f"{where}.batch must be a multiplier of the online price, not {value!r}",
                                      fix="write e.g. `batch: 0.5` (the Message Batches API bills half the online price)")
                raise Problem("prices", f"{where}.{name} must be a number of USD per million tokens, not {value!r}",
                              fix=_PRICE_FIX)
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



_DEFAULT_TEXT = {"model": DEFAULT_MODEL, "api_key_env": DEFAULT_API_KEY_ENV, "base_url": "https://api.anthropic.com"}
