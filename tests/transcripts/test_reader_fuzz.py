"""Bad input, property-based (issue 34): no input crashes the import. Every reader, named with --format
and by detection, meets truncated files, deep nesting, wrongly typed values and mixed formats; the only
exception allowed is the reader's own refusal (a ScarbookError: one line, exit 2)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarbook.errors import ScarbookError
from scarbook.transcripts import FORMATS, candidates, load_transcript, pick_task, suggest_seeds
from tests.helpers.paths import TRANSCRIPTS

FIX = TRANSCRIPTS
SAMPLES = sorted(p for p in [*FIX.glob("*.*"), *(FIX / "formats").glob("*"), *(FIX / "real").glob("*"),
                             *(FIX / "public_shapes").glob("*.json*")] if p.is_file() and p.stat().st_size < 20_000)
# A quarter of the profile's examples (tests/conftest.py): the same 25 in every run of the suite, 1,000 a new
# seed each run under HYPOTHESIS_PROFILE=fuzz
FUZZ = settings(max_examples=settings.default.max_examples // 4, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "role", "content", "message", "uuid", "parentUuid", "sessionId", "messages",
                         "request", "response", "body", "status", "interactions", "trajectory", "history", "info",
                         "resourceSpans", "spans", "attributes", "startTimeUnixNano", "payload", "item", "input",
                         "output", "choices", "tool_calls", "id", "name", "text", "events", "loglines", "result"]),
        inner, max_size=5),
    max_leaves=20)


def _import(data: bytes, fmt: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.log"
        path.write_bytes(data)
        try:
            t = load_transcript(path, fmt)
        except ScarbookError as exc:
            assert "\n" not in str(exc)  # a refusal is one line
            return
        cands = candidates(t)
        pick_task(t, None)
        suggest_seeds(t)
        assert all(isinstance(c.content, str) for c in cands)


@pytest.mark.parametrize("fmt", [None, *FORMATS])
@FUZZ
@given(sample=st.sampled_from(SAMPLES), cut=st.floats(0, 1))
def test_a_truncated_log_is_read_or_refused(fmt, sample, cut):
    data = sample.read_bytes()
    _import(data[: int(len(data) * cut)], fmt)


@pytest.mark.parametrize("fmt", [None, *FORMATS])
@FUZZ
@given(value=json_values, lines=st.booleans())
def test_wrongly_typed_json_is_read_or_refused(fmt, value, lines):
    text = "\n".join(json.dumps(v) for v in (value if isinstance(value, list) else [value])) if lines \
        else json.dumps(value)
    _import(text.encode(), fmt)


@pytest.mark.parametrize("fmt", [None, *FORMATS])
@FUZZ
@given(depth=st.integers(100, 30_000), opener=st.sampled_from(['{"a":', "[", '{"type":"user","message":']),
       as_line=st.booleans())
def test_deep_nesting_is_refused_never_a_recursion_error(fmt, depth, opener, as_line):
    closer = {"{": "}", "[": "]"}[opener[0]] * (depth if opener[0] == "[" else 1)
    body = (opener * depth + "1" + "}" * depth) if opener[0] == "{" else "[" * depth + closer
    head = '{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u","sessionId":"s"}\n' if as_line else ""
    _import((head + body + "\n").encode(), fmt)


@pytest.mark.parametrize("fmt", [None, *FORMATS])
@FUZZ
@given(parts=st.lists(st.sampled_from(SAMPLES), min_size=2, max_size=3), sep=st.sampled_from([b"\n", b"", b"\n\n"]))
def test_mixed_formats_in_one_file_are_read_or_refused(fmt, parts, sep):
    _import(sep.join(p.read_bytes() for p in parts), fmt)


@pytest.mark.parametrize("record", [{"type": []}, {"type": {"a": 1}, "payload": {}}, {"id": "x", "timestamp": "t"}])
def test_a_record_type_of_a_list_or_an_object_is_refused_not_a_traceback(record):
    """Found by the fuzz above: `null` then `{"type": []}` as JSON lines crashed detection (TypeError:
    unhashable type: 'list', from a claim that looked the type up in a set)."""
    _import(("null\n" + json.dumps(record) + "\n" + json.dumps({"type": ["message"], "role": "user"}) + "\n").encode(),
            None)


@pytest.mark.parametrize("line", ["[INFO] started the build", "[2026-11-14 09:00] build ok", "[0000001] step 1: ok",
                                  "{build} ok"])
def test_a_text_log_whose_lines_open_with_a_bracket_is_plain_text(tmp_path, line):
    """Refused as "JSON cut off or broken (Expecting ',' delimiter …)": a bracket at the start is not JSON."""
    log = tmp_path / "build.log"
    log.write_text(f"{line}\nsecond line\n")
    t = load_transcript(log)
    assert (t.format, t.final_answer) == ("plain", f"{line}\nsecond line\n")
