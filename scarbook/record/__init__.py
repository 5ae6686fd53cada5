"""The model-call recorder: a local HTTP proxy between each run's agent and its model.

    recorder = Recorder(settings, replay=None)      # one per session (record: in scarbook.yaml)
    await recorder.start()
    token = await recorder.open_run(case_id, k, transcript_path)   # the run's door: its own port
    env = recorder.env_for(token)                   # ANTHROPIC_BASE_URL, OPENAI_BASE_URL, dummy keys
    ...                                              # the agent runs; every call is forwarded and recorded
    summary = recorder.close_run(token)             # calls, usage, warnings, divergence, upstream failures; door shut
    await recorder.stop()

settings.py parses `record:`; apis.py knows the request and response shapes (Anthropic Messages,
OpenAI Chat Completions and Responses, streamed or not); recording.py appends each call to the run's
transcript (docs/transcript-format.md: `model_call` and the records derived from it); replay.py
answers from a recorded session's calls; proxy.py forwards a call; door.py is a run's own listener;
endpoints.py the paths that may be forwarded.

May use: proc (credentials), fs, models, errors, text. Never transcripts, agents or anything above: the run wing drives it.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scarbook.record.proxy import Recorder
    from scarbook.record.recording import RunSummary
    from scarbook.record.replay import ReplaySource, load_replay
    from scarbook.record.settings import RecordSettings, parse_record

__all__ = ["RecordSettings", "Recorder", "ReplaySource", "RunSummary", "load_replay", "parse_record"]


# Each name's module, loaded on first use (PEP 562): `Recorder` (and aiohttp with it: ~0.1-0.3 s) loads when a
# session records, never with the CLI; config.py's RecordSettings loads neither the recording nor the replay.
_HOME = {"Recorder": "proxy", "RunSummary": "recording", "ReplaySource": "replay", "load_replay": "replay",
         "RecordSettings": "settings", "parse_record": "settings"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
