"""`judge:` in scarbook.yaml -> JudgeSettings, and the price table that turns tokens into dollars."""

from __future__ import annotations

from pathlib import Path

import pytest

from scarbook.errors import ConfigError
from scarbook.judge import DEFAULT_PRICES, JudgeSettings, ModelPrice, price_for, priced
from scarbook.models import Usage

CONFIG = Path("/proj/scarbook.yaml")


def test_missing_section_gives_defaults():
    settings = JudgeSettings.from_dict(None, CONFIG)
    assert settings == JudgeSettings()
    assert settings.api_key_env == "ANTHROPIC_API_KEY"
    assert settings.temperature == 0 and settings.samples == 1 and settings.max_artifact_bytes == 100_000
    assert settings.base_url is None


def test_every_key_is_read():
    settings = JudgeSettings.from_dict(
        {
            "model": "claude-haiku-4-5",
            "base_url": "https://judge.example.com",
            "api_key_env": "OTHER_VENDOR_KEY",
            "temperature": 0.5,
            "max_tokens": 2048,
            "timeout_s": 30,
            "max_retries": 5,
            "samples": 3,
            "max_artifact_bytes": 5000,
            "prices": {"vendor-judge-1": {"input": 2, "output": 8}},
        },
        CONFIG,
    )
    assert settings.model == "claude-haiku-4-5"
    assert settings.base_url == "https://judge.example.com"
    assert settings.api_key_env == "OTHER_VENDOR_KEY"
    assert (settings.temperature, settings.max_tokens, settings.timeout_s) == (0.5, 2048, 30.0)
    assert (settings.max_retries, settings.samples, settings.max_artifact_bytes) == (5, 3, 5000)
    assert settings.prices["vendor-judge-1"] == ModelPrice(2.0, 8.0, 0.2, 2.5)
    assert settings.prices["claude-sonnet-4-6"] == DEFAULT_PRICES["claude-sonnet-4-6"]  # defaults kept


def test_temperature_null_sends_none():
    assert JudgeSettings.from_dict({"temperature": None}, CONFIG).temperature is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"modle": "x"},
            "/proj/scarbook.yaml: unknown key judge.modle — use one of: api_key_env, base_url, batch, batch_poll_s, cache, calibration_min_labels, "
            "calibration_min_per_class, correct, keep_artifacts, max_artifact_bytes, max_retries, max_tokens, model, prices, samples, "
            "temperature, timeout_s, write_item_ids",
        ),
        (["model"], "/proj/scarbook.yaml: judge must be a mapping, not a list — write `judge:` followed by indented keys such as `model: ...`"),
        ({"samples": 2}, "/proj/scarbook.yaml: judge.samples must be an odd number, got 2 — use 1, 3 or 5 so every rubric item has a strict majority"),
        ({"samples": 0}, "/proj/scarbook.yaml: judge.samples must be at least 1, got 0 — write e.g. `samples: 3`"),
        ({"samples": 1.5}, "/proj/scarbook.yaml: judge.samples must be a whole number, not a number — write e.g. `samples: 3`"),
        ({"timeout_s": "60s"}, "/proj/scarbook.yaml: judge.timeout_s must be a number, not a string — write e.g. `timeout_s: 60`"),
        ({"timeout_s": 0}, "/proj/scarbook.yaml: judge.timeout_s must be greater than 0, got 0 — write e.g. `timeout_s: 60`"),
        ({"max_retries": True}, "/proj/scarbook.yaml: judge.max_retries must be a whole number, not a boolean — write e.g. `max_retries: 2`"),
        ({"correct": "no"}, "/proj/scarbook.yaml: judge.correct must be true or false, not a string — write `correct: false` to turn it off"),
        ({"calibration_min_labels": 0}, "/proj/scarbook.yaml: judge.calibration_min_labels must be at least 1, got 0 — write e.g. `calibration_min_labels: 30`"),
        ({"calibration_min_per_class": 2.5}, "/proj/scarbook.yaml: judge.calibration_min_per_class must be a whole number, not a number — write e.g. `calibration_min_per_class: 10`"),
        ({"model": ""}, "/proj/scarbook.yaml: judge.model is empty — write e.g. `model: claude-sonnet-4-6`"),
        ({"api_key_env": 5}, "/proj/scarbook.yaml: judge.api_key_env must be a string, not a number — write e.g. `api_key_env: ANTHROPIC_API_KEY`"),
        ({"temperature": 2}, "/proj/scarbook.yaml: judge.temperature must be between 0 and 1, got 2 — use 0 for the most repeatable grading, or null to send no temperature"),
        (
            {"prices": {"m": {"input": 1}}},
            "/proj/scarbook.yaml: judge.prices.m is missing output — write e.g. `prices: {claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}}` (USD per million tokens)",
        ),
        (
            {"prices": {"m": {"input": 1, "output": 2, "cache": 1}}},
            "/proj/scarbook.yaml: unknown key judge.prices.m.cache — use input, output, cache_read, cache_write (USD per "
            "million tokens) or batch (the Message Batches price as a multiple of the online one, 0.5 by default)",
        ),
        (
            {"prices": {"m": {"input": 1, "output": 2, "batch": "half"}}},
            "/proj/scarbook.yaml: judge.prices.m.batch must be a multiplier of the online price, not 'half' — write e.g. "
            "`batch: 0.5` (the Message Batches API bills half the online price)",
        ),
        ({"batch": "yes"}, "/proj/scarbook.yaml: judge.batch must be true or false, not a string — write `batch: false` to turn it off"),
        ({"batch_poll_s": 0}, "/proj/scarbook.yaml: judge.batch_poll_s must be greater than 0, got 0 — write e.g. `batch_poll_s: 30`"),
        (
            {"prices": {"m": {"input": "cheap", "output": 2}}},
            "/proj/scarbook.yaml: judge.prices.m.input must be a number of USD per million tokens, not 'cheap' — write e.g. `prices: {claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}}` (USD per million tokens)",
        ),
    ],
)
def test_bad_judge_config_names_the_key(data, message):
    with pytest.raises(ConfigError) as caught:
        JudgeSettings.from_dict(data, CONFIG)
    assert str(caught.value) == message
    assert caught.value.path == CONFIG


def test_price_lookup_exact_prefix_family_unknown():
    prices = {**DEFAULT_PRICES, "vendor-x": ModelPrice(1, 1, 1, 1)}
    assert price_for("claude-opus-4-1", prices) == ModelPrice(15.0, 75.0, 1.5, 18.75)
    assert price_for("claude-haiku-4-5-20251001", prices) == DEFAULT_PRICES["claude-haiku-4-5"]  # dated snapshot
    assert price_for("claude-sonnet-9", prices) == DEFAULT_PRICES["claude-sonnet-4-6"]  # family fallback
    assert price_for("vendor-x-large", prices) == ModelPrice(1, 1, 1, 1)
    assert price_for("gpt-judge", prices) is None


def test_priced_usage_cost():
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=200_000, cache_write_tokens=40_000)
    got = priced(usage, "claude-opus-4-6", DEFAULT_PRICES)
    assert got.cost_usd == pytest.approx(5.0 + 2.5 + 0.1 + 0.25)
    assert got.input_tokens == 1_000_000
    assert priced(usage, "unknown-model", DEFAULT_PRICES).cost_usd == 0.0


def test_batch_price_is_half_and_overridable():
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000)
    assert priced(usage, "claude-opus-4-6", DEFAULT_PRICES, batch=True).cost_usd == pytest.approx((5.0 + 2.5) / 2)
    settings = JudgeSettings.from_dict({"prices": {"claude-opus-4-6": {"input": 5, "output": 25, "batch": 0.25}},
                                        "batch": True, "batch_poll_s": 0.5}, CONFIG)
    assert settings.batch and settings.batch_poll_s == 0.5
    assert priced(usage, "claude-opus-4-6", settings.prices, batch=True).cost_usd == pytest.approx(7.5 / 4)


def test_price_usage_for_agent_lines_and_prompt_digest():
    settings = JudgeSettings()
    assert settings.price_usage("claude-haiku-4-5", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(6.0)
    assert settings.price_usage("unknown", Usage(input_tokens=5)) == 0.0
    digest = settings.prompt_digest
    assert len(digest) == 12 and digest == JudgeSettings(model="other").prompt_digest  # prompt, not model
    import scarbook.judge.prompt as prompt

    original = prompt.SYSTEM_PROMPT
    try:
        prompt.SYSTEM_PROMPT = original + " Be lenient."
        assert settings.prompt_digest != digest
    finally:
        prompt.SYSTEM_PROMPT = original


@pytest.mark.parametrize(("base_url", "environ", "recorded"), [
    ("https://judge.example.com", {}, "https://judge.example.com"),
    ("https://judge.example.com/", {}, "https://judge.example.com"),
    ("https://me:s3cret@judge.example.com:8443/v1/?key=s3cret#top", {}, "https://judge.example.com:8443/v1"),
    ("http://token@[::1]:8080", {}, "http://[::1]:8080"),
    (None, {}, "https://api.anthropic.com"),  # unset: the SDK's default ...
    (None, {"ANTHROPIC_BASE_URL": "https://u:p@proxy.example.com/?k=v"}, "https://proxy.example.com"),  # ... or its variable's
    ("https://judge.example.com", {"ANTHROPIC_BASE_URL": "https://proxy.example.com"}, "https://judge.example.com"),
], ids=["plain", "trailing-slash", "secrets", "ipv6-user", "sdk-default", "sdk-variable", "configured-wins"])
def test_a_run_records_where_the_judge_is_reached_without_secrets(base_url, environ, recorded):
    """What a judge record keeps of judge.base_url (scarbook diff compares it): never a user:password, query or
    fragment; unset, the URL the SDK calls then ($ANTHROPIC_BASE_URL, else its default)."""
    assert JudgeSettings(base_url=base_url).recorded_base_url(environ) == recorded
