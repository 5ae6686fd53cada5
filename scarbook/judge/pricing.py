"""Turn judge tokens into dollars: a price table per model, USD per million tokens.

The defaults are the published list prices at the time of writing; a project overrides or extends
them under `judge.prices` in scarbook.yaml, because vendors behind `base_url` price differently
and list prices change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scarbook.models import Usage

# The Message Batches API bills every token at half the online price (issue 27).
BATCH_MULTIPLIER = 0.5


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    batch: float = BATCH_MULTIPLIER  # what a Message Batches request costs, times the online price

    @classmethod
    def from_input_output(cls, input: float, output: float) -> ModelPrice:
        # Anthropic bills cache reads at 0.1x and 5-minute cache writes at 1.25x the input rate.
        return cls(input=input, output=output, cache_read=input * 0.1, cache_write=input * 1.25)

    def cost(self, usage: Usage, *, batch: bool = False) -> float:
        online = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * self.cache_read
            + usage.cache_write_tokens * self.cache_write
        ) / 1_000_000
        return online * self.batch if batch else online

    def to_dict(self) -> dict[str, float]:
        return {"input": self.input, "output": self.output, "cache_read": self.cache_read,
                "cache_write": self.cache_write, "batch": self.batch}


_OPUS = ModelPrice.from_input_output(5.0, 25.0)
_SONNET = ModelPrice.from_input_output(3.0, 15.0)
_HAIKU = ModelPrice.from_input_output(1.0, 5.0)

DEFAULT_PRICES: dict[str, ModelPrice] = {
    "claude-opus-5": _OPUS,
    "claude-opus-4-8": _OPUS,
    "claude-opus-4-7": _OPUS,
    "claude-opus-4-6": _OPUS,
    "claude-opus-4-5": _OPUS,
    "claude-opus-4-1": ModelPrice.from_input_output(15.0, 75.0),
    "claude-sonnet-5": _SONNET,
    "claude-sonnet-4-6": _SONNET,
    "claude-sonnet-4-5": _SONNET,
    "claude-sonnet-4": _SONNET,
    "claude-haiku-4-5": _HAIKU,
    "claude-3-5-haiku": ModelPrice.from_input_output(0.8, 4.0),
}

# A model the table does not name is priced by its family, so a new dated snapshot
# (claude-sonnet-4-6-20260101) or a new minor version is not silently free.
_FAMILIES: tuple[tuple[str, ModelPrice], ...] = (("opus", _OPUS), ("sonnet", _SONNET), ("haiku", _HAIKU))

PRICE_FIELDS = ("input", "output", "cache_read", "cache_write", "batch")


def price_for(model: str, prices: dict[str, ModelPrice]) -> ModelPrice | None:
    """The price of `model`: exact name, then the longest table name it starts with, then its family."""
    if model in prices:
        return prices[model]
    prefixes = [name for name in prices if model.startswith(name)]
    if prefixes:
        return prices[max(prefixes, key=len)]
    for family, price in _FAMILIES:
        if family in model:
            return price
    return None


def usage_from_sdk(sdk_usage: Any) -> Usage:
    """Our Usage from the SDK's `message.usage` (fields may be None on compatible vendors)."""
    return Usage(
        input_tokens=int(getattr(sdk_usage, "input_tokens", 0) or 0),
        output_tokens=int(getattr(sdk_usage, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(sdk_usage, "cache_read_input_tokens", 0) or 0),
        cache_write_tokens=int(getattr(sdk_usage, "cache_creation_input_tokens", 0) or 0),
    )


def priced(usage: Usage, model: str, prices: dict[str, ModelPrice], *, batch: bool = False) -> Usage:
    """`usage` with cost_usd filled in from the table (0.0 when the model has no price); `batch`:
    answered through the Message Batches API, at the table's batch multiplier."""
    price = price_for(model, prices)
    cost = price.cost(usage, batch=batch) if price else 0.0
    return Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost_usd=cost,
    )
