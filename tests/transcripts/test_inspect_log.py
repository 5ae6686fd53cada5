"""`scarbook import` of Inspect AI eval logs (`.json` and `.eval`) written by the real inspect_ai
package (`write_eval_log`, the writer `inspect eval` uses), and the exact messages for logs that
cannot be imported."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from scarbook.transcripts import load_transcript
from scarbook.transcripts.inspect_zip import EvalZip
from scarbook.transcripts.model import Message, ToolCall, ToolResult

# inspect_ai takes seconds to import: once, in one module fixture, on one worker with the export tests
pytestmark = pytest.mark.xdist_group("inspect_ai")

TASK = "Extract the first line of README.md into tmp.txt"
NO_SAMPLES = ("nothing to import: the Inspect log holds no samples (the eval ran with log_samples off, or stopped "
              "before any sample finished)")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """multi.json / multi.eval: samples `first-line` and 7, two epochs each; first-line:2 failed (it wrote the
    whole README into tmp.txt). empty.json / empty.eval: an eval logged without samples."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
        ModelOutput,
        ModelUsage,
    )
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall as InspectCall
    from inspect_ai.tool import ToolCallError

    def sample(sid, epoch: int, ok: bool) -> EvalSample:
        written = "# tiny-agent\n" if ok else "# tiny-agent\nA tiny agent.\n"
        messages = [
            ChatMessageSystem(content="You are a coding agent."),
            ChatMessageUser(content=TASK),
            ChatMessageAssistant(content=[ContentReasoning(reasoning="I should read the README."),
                                          ContentText(text="Reading it.")],
                                 tool_calls=[InspectCall(id="c1", function="text_editor",
                                                         arguments={"command": "view", "path": "/repo/README.md"})]),
            ChatMessageTool(content="# tiny-agent\nA tiny agent.\n", tool_call_id="c1", function="text_editor"),
            ChatMessageAssistant(content="", tool_calls=[InspectCall(
                id="c2", function="text_editor", arguments={"command": "create", "path": "/repo/tmp.txt", "file_text": written})]),
            ChatMessageTool(content="File created", tool_call_id="c2", function="text_editor"),
            # content Inspect condensed into an attachment, and a tool call that failed
            ChatMessageAssistant(content=[ContentText(text="attachment://abc123")],
                                 tool_calls=[InspectCall(id="c3", function="bash", arguments={"cmd": "wc -l tmp.txt"})]),
            ChatMessageTool(content="", tool_call_id="c3", function="bash", error=ToolCallError("unknown", "exit status 1")),
            ChatMessageAssistant(content="Done: tmp.txt holds one line."),
        ]
        return EvalSample(id=sid, epoch=epoch, input=TASK, target="# tiny-agent", messages=messages,
                          output=ModelOutput.from_content("mockllm/model", "Done: tmp.txt holds one line."),
                          scores={"includes": Score(value="C" if ok else "I")}, attachments={"abc123": "Writing it now."},
                          model_usage={"mockllm/model": ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)},
                          started_at="2026-11-14T09:00:00+00:00")

    spec = {"created": "2026-11-14T09:00:00+00:00", "task": "tiny", "dataset": EvalDataset(name="d", samples=2, sample_ids=["first-line", 7]),
            "model": "mockllm/model"}
    multi = EvalLog(eval=EvalSpec(**spec, config=EvalConfig(epochs=2)),
                    samples=[sample("first-line", 1, True), sample(7, 1, True), sample("first-line", 2, False),
                             sample(7, 2, True)])
    empty = EvalLog(eval=EvalSpec(**spec, config=EvalConfig(log_samples=False)))
    folder = tmp_path_factory.mktemp("inspect-logs")
    for name, log in (("multi", multi), ("empty", empty)):
        for fmt in ("json", "eval"):
            write_eval_log(log, str(folder / f"{name}.{fmt}"), format=fmt)
    return folder


def test_a_samples_messages_tool_calls_and_files_from_json_and_eval_logs(logs, project):
    for name in ("multi.json", "multi.eval"):
        r = project.cli("import", str(logs / name), "--list")
        assert r.exit_code == 0, r.output
        assert r.stderr == ("warning: the file holds 4 samples; showing first-line:2 (the first that did not pass); "
                            "pick another with --sample ID[:EPOCH] (see --list)\n")
        lines = r.stdout.splitlines()
        # in the dataset's order (the log holds them as they finished), then by epoch
        assert lines[:6] == ["format: inspect", "samples (pick one with --sample ID[:EPOCH]):",
                             f"    first-line:1  includes C; {TASK}", f"  * first-line:2  includes I; {TASK}",
                             f"    7:1  includes C; {TASK}", f"    7:2  includes C; {TASK}"]
        assert f"task: {TASK}" in lines
        assert "  2  file         file tmp.txt (final content)  [27 B]" in lines  # written with text_editor create
        assert "  README.md — read by text_editor; content from its result" in lines

    t = load_transcript(logs / "multi.eval", sample="first-line:2")
    assert t.entries[:6] == [
        Message("system", "You are a coding agent."), Message("user", TASK),
        Message("assistant", "I should read the README.", kind="thinking"), Message("assistant", "Reading it."),
        ToolCall("c1", "text_editor", {"command": "view", "path": "/repo/README.md"}),
        ToolResult("c1", "# tiny-agent\nA tiny agent.\n")]
    assert Message("assistant", "Writing it now.") in t.entries  # the attachment, looked up
    assert ToolResult("c3", "exit status 1", is_error=True) in t.entries
    assert [(f.path, f.content) for f in t.files_written] == [("tmp.txt", "# tiny-agent\nA tiny agent.\n")]
    assert (t.final_answer, t.model, t.date) == ("Done: tmp.txt holds one line.", "mockllm/model", "2026-11-14")
    assert (t.usage.input_tokens, t.usage.output_tokens) == (100, 20)


def test_sample_choice_and_the_draft_keeps_only_the_sample_imported(logs, project):
    t = load_transcript(logs / "multi.json", sample="first-line")  # ID alone: its first epoch
    assert t.trace == "first-line:1" and t.files_written[0].content == "# tiny-agent\n" and t.warnings == []
    assert load_transcript(logs / "multi.eval", trace="7:2").trace == "7:2"  # the TUI's ctrl+t passes it as a trace

    r = project.cli("import", str(logs / "multi.eval"), "--sample", "first-line:2", "--id", "one-line")
    assert r.exit_code == 0, r.output
    scar = project.cases_dir / "one-line" / "scar"
    assert (scar / "artifact.txt").read_text() == "# tiny-agent\nA tiny agent.\n"
    kept = load_transcript(scar / "transcript.json")  # a one-sample Inspect log, read by the same reader
    assert (kept.format, kept.traces, kept.warnings) == ("inspect", [], [])
    assert kept.files_written[0].content == "# tiny-agent\nA tiny agent.\n"


def test_logs_that_cannot_be_imported_say_why(logs, project, tmp_path, monkeypatch):
    def error(*args: str) -> str:
        r = project.cli("import", *args)
        assert r.exit_code == 2 and r.stdout == ""
        return r.stderr

    for name in ("empty.json", "empty.eval"):
        assert error(str(logs / name)) == f"scarbook: {logs / name}: {NO_SAMPLES}\n"
    assert error(str(logs / "multi.json"), "--sample", "first-line:9") == (
        f"scarbook: {logs / 'multi.json'}: no sample 'first-line:9' in this Inspect log; it holds first-line:1, "
        "first-line:2, 7:1, 7:2 (--sample ID or ID:EPOCH; --list shows them)\n")
    plain = tmp_path / "notes.txt"
    plain.write_text("the agent said it was done\n")
    assert error(str(plain), "--sample", "7") == (
        f"scarbook: {plain}: --sample picks one sample of an Inspect log; this is a plain transcript\n")

    data = (logs / "multi.eval").read_bytes()
    cut = tmp_path / "cut.eval"  # a copy that stopped half way: no central directory
    cut.write_bytes(data[: len(data) // 2])
    assert error(str(cut)) == (f"scarbook: {cut}: this Inspect .eval log is damaged or cut short: not a whole zip "
                               "archive (File is not a zip file); copy it again from where the eval wrote it\n")
    info = zipfile.ZipFile(logs / "multi.eval").getinfo("samples/first-line_epoch_2.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    flipped = tmp_path / "flipped.eval"  # bytes damaged inside one sample
    flipped.write_bytes(data[:start] + b"\0" * 8 + data[start + 8:])
    assert error(str(flipped)) == (
        f"scarbook: {flipped}: this Inspect .eval log is damaged or cut short: samples/first-line_epoch_2.json does "
        "not match its checksum; copy it again from where the eval wrote it\n")
    assert project.cli("import", str(flipped), "--sample", "7", "--list").exit_code == 0  # the other samples read

    # a Python without zstd: neither 3.14's compression.zstd nor the zstandard package
    monkeypatch.setitem(sys.modules, "compression.zstd", None)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    assert error(str(logs / "multi.eval")) == (
        f"scarbook: {logs / 'multi.eval'}: this Inspect .eval log is compressed with zstd, which this Python cannot "
        "read: pip install zstandard (or 'scarbook[inspect]'), or convert the log: inspect log convert --to json "
        "--output-dir DIR LOG\n")


def test_an_older_deflate_eval_log_reads_without_zstd(logs, tmp_path, monkeypatch):
    """Inspect wrote .eval members with deflate before it moved to zstd: those need nothing but zipfile."""
    z = EvalZip(logs / "multi.eval")
    old = tmp_path / "old.eval"
    with zipfile.ZipFile(old, "w", zipfile.ZIP_DEFLATED) as out:
        for name in z.names:
            out.writestr(name, z.read(name))
    z.close()
    monkeypatch.setitem(sys.modules, "compression.zstd", None)
    monkeypatch.setitem(sys.modules, "zstandard", None)
    t = load_transcript(old, sample="7:2")
    assert (t.format, t.trace, t.final_answer) == ("inspect", "7:2", "Done: tmp.txt holds one line.")


def test_a_large_json_log_is_read_a_sample_at_a_time(logs, project, tmp_path):
    """A .json log is held once as text, its samples parsed one by one (parsed whole, the log took
    7.4x its size): import peaks at about twice the file, and a file cut short keeps the samples before the cut."""
    import copy
    import json
    import tracemalloc

    log = json.loads((logs / "multi.json").read_text(encoding="utf-8"))
    one = log["samples"][0]
    log["samples"] = []
    for i in range(400):  # ~2 MB, with text that is not ASCII in every sample
        s = copy.deepcopy(one)
        s["id"], s["messages"][1]["content"] = f"s{i}", f"{TASK} — é🙂 {i}"
        log["samples"].append(s)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(log, ensure_ascii=False, indent=2), encoding="utf-8")
    size = big.stat().st_size
    tracemalloc.start()
    try:
        t = load_transcript(big, sample="s399")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2.2 * size, f"{peak / size:.2f}x the file"
    assert t.entries[1] == Message("user", f"{TASK} — é🙂 399")  # UTF-8 read back right
    assert len(t.traces) == 400 and t.trace == "s399:1"

    cut = tmp_path / "cut.json"  # the writer died half way through
    cut.write_bytes(big.read_bytes()[: size // 2])
    r = project.cli("import", str(cut), "--sample", "s3", "--list")
    assert r.exit_code == 0 and "task: " + TASK + " — é🙂 3" in r.stdout
    [warning] = r.stderr.splitlines()
    n = int(warning.split("the ")[-1].split(" samples")[0])
    assert 150 < n < 250 and warning.startswith(f"warning: the file is cut short or damaged in its sample {n + 1} (byte ")
    assert warning.endswith(f"): the {n} samples before it can be imported")
