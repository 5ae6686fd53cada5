"""scarbook.yaml declared once (issue 32.3): defaults only in the declaration, one translator from a
validation error to the user's message (file, line, key, fix), and a config that never changes
after load — a session's override is a new value."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from scarbook.config import STARTER_CONFIG, Config, GatePolicy, load_config
from scarbook.errors import ConfigError
from scarbook.judge.settings import JudgeSettings
from scarbook.models import GateMode, Isolation, Undecided


def test_the_starter_file_shows_exactly_the_declared_defaults(tmp_path) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text(STARTER_CONFIG)
    assert load_config(path) == Config()
    assert load_config(tmp_path / "missing.yaml") == Config()


def test_a_loaded_config_cannot_be_changed_and_an_override_is_a_new_value(project) -> None:
    cfg = project.load().config
    with pytest.raises(AttributeError):
        cfg.isolation = Isolation.NONE  # type: ignore[misc]
    with pytest.raises(AttributeError):
        cfg.judge.model = "other"  # type: ignore[misc]
    session = cfg.with_overrides(isolation=Isolation.NONE)
    assert session.isolation == "none" and cfg.isolation == "auto" and session.runs == cfg.runs


def test_the_tui_demo_seed_is_its_own_config_not_a_change_to_the_project(project) -> None:
    from scarbook.tui.app import make_app

    app = make_app(project.root, agent_seed=11, demo_delay=0)
    assert app.project.config.agent == {"type": "demo", "seed": 11, "delay": 0}
    assert project.load().config.agent == {"type": "demo", "seed": 7}


@pytest.mark.parametrize(("text", "message"), [
    # the judge's mistakes now name their line as every other section's do
    ("judge:\n  model: x\n  samples: 2\n", "3: judge.samples must be an odd number, got 2 — use 1, 3 or 5 so every "
                                            "rubric item has a strict majority"),
    ("judge:\n  timeout_s: soon\n", "2: judge.timeout_s must be a number, not a string — write e.g. `timeout_s: 60`"),
    ("judge:\n  modle: x\n", "2: unknown key judge.modle — use one of: api_key_env, base_url, batch, batch_poll_s, "
                             "cache, calibration_min_labels, calibration_min_per_class, correct, keep_artifacts, "
                             "max_artifact_bytes, max_retries, max_tokens, model, prices, samples, temperature, timeout_s, "
                             "write_item_ids"),
    ("runs: 3\nrecord:\n  mode: replay\n", "3: record.mode: replay needs record.from (the session to replay) — "
                                           "write record: {mode: replay, from: SESSION}"),
    ("executor:\n  type: local\n  num_cpus: 2\n", "3: unknown key executor.num_cpus for a local executor — "
                                                 "a local executor takes: type"),
    ("bands:\n  green: 2\n", "2: bands.green must be a number between 0 and 1, got 2 — write bands: {green: 0.9}"),
    ("presets:\n  daily: 0\n", "1: presets must map a name to a positive number of runs — write presets: "
                               "{daily: 15, release: 40}"),
    ("stale_after_days: true\n", "1: stale_after_days must be a number of at least 0, got True — write e.g. "
                                 "stale_after_days: 7"),
    ("- runs\n", "1: scarbook.yaml must be a mapping of keys — see `scarbook init` for a starter file"),
])
def test_each_mistake_names_the_file_line_key_and_fix(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "scarbook.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert str(err.value) == f"{path}:{message}"


def test_a_gate_built_in_code_holds_the_enums_and_is_checked_like_the_file() -> None:
    gate = GatePolicy.from_record({"mode": "point", "alpha": 0.01, "undecided": "fail", "looks": [5, 10]})
    assert (gate.mode, gate.undecided) == (GateMode.POINT, Undecided.FAIL)
    assert gate.to_dict() == {"mode": "point", "alpha": 0.01, "undecided": "fail", "min_verdicts": None}
    with pytest.raises(ValueError, match="gate alpha must be between 0 and 0.5, got 0.7"):
        msgspec.structs.replace(gate, alpha=0.7).__post_init__()


def test_every_section_is_a_frozen_declaration() -> None:
    for section in (Config, GatePolicy, JudgeSettings):
        assert issubclass(section, msgspec.Struct) and section.__struct_config__.frozen
        assert section.__struct_config__.forbid_unknown_fields
        assert not dataclasses.is_dataclass(section)


def test_keys_of_names_each_section_s_keys_as_its_declaration_does() -> None:
    """keys_of reads a section's own fields (issue 38.6); msgspec.inspect, which resolves the whole tree
    under it, says the same: the tag first, the declared order, internal fields left out."""
    from msgspec import inspect as mi

    import scarbook.agents.spec
    import scarbook.record.settings  # noqa: F401  (every section declared)
    from scarbook.fs.settings import keys_of

    def declared(section: type) -> tuple[str, ...]:
        info = mi.type_info(section)
        assert isinstance(info, mi.StructType)
        extra = [(f.type.extra if isinstance(f.type, mi.Metadata) else None) or {} for f in info.fields]
        return ((info.tag_field,) if info.tag_field else ()) + tuple(
            f.encode_name for f, e in zip(info.fields, extra, strict=True) if "internal" not in e)

    def sections(cls: type) -> list[type]:
        return [s for sub in cls.__subclasses__() for s in (sub, *sections(sub))]

    ours = {s for s in sections(msgspec.Struct) if s.__module__.startswith("scarbook.")}
    assert Config in ours and JudgeSettings in ours and len(ours) >= 10
    for section in ours:
        assert keys_of(section) == declared(section), section
    assert "delay" not in keys_of(scarbook.agents.spec.AGENT_KINDS["demo"])  # internal: set by the program


def test_reading_scarbook_yaml_resolves_no_section_s_whole_type_tree(tmp_path) -> None:
    """msgspec.inspect.type_info resolves every annotation of a section and of all under it again (~5 ms of
    `scarbook eval --dry-run`, issue 38.6): a valid file is read without it (it words the errors only)."""
    import subprocess
    import sys

    (tmp_path / "scarbook.yaml").write_text("agent: {type: command, argv: [sh, -c, 'true']}\nisolation: none\n"
                                            "judge: {model: m}\ngate: {alpha: 0.1}\nexecutor: local\n")
    probe = ("import sys, msgspec.inspect\n"
             "def refused(*a, **k):\n    raise AssertionError('type_info called')\n"
             "msgspec.inspect.type_info = refused\n"
             "from pathlib import Path\nfrom scarbook.config import load_config\n"
             "print(load_config(Path(sys.argv[1])).judge.model)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "scarbook.yaml")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "m", done.stderr[-2000:]


def test_the_sections_of_scarbook_yaml_declare_their_fields_as_types_not_strings() -> None:
    """Issue 38: msgspec reads a Struct's field types the first time scarbook.yaml is converted; written as
    strings (`from __future__ import annotations`), each was compiled and evaluated there, about 3 ms of every
    command that reads scarbook.yaml (`eval --dry-run`: 89 -> 85 ms of CPU, `python -c pass` 22 ms)."""
    import scarbook.agents.spec
    import scarbook.config
    import scarbook.judge.settings
    import scarbook.record.settings

    modules = (scarbook.config, scarbook.agents.spec, scarbook.judge.settings, scarbook.record.settings)
    sections = [v for m in modules for v in vars(m).values()
                if isinstance(v, type) and issubclass(v, msgspec.Struct) and v.__module__ == m.__name__]
    assert {Config, GatePolicy, JudgeSettings} <= set(sections) and len(sections) >= 12
    strings = {f"{c.__name__}.{name}" for s in sections for c in s.__mro__  # (Words' ClassVars are read too)
               for name, t in vars(c).get("__annotations__", {}).items() if isinstance(t, str)}
    assert strings == set()
