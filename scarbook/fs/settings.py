"""Settings read from YAML into declared msgspec Structs; every mistake said once, one way.

A section of scarbook.yaml is a frozen `msgspec.Struct` with `forbid_unknown_fields`: its fields, their
defaults and their constraints (`Annotated[int, Meta(ge=1)]`, an enum, a Literal) are its declaration,
and nothing else repeats them. `convert(data, Section, path)` converts what YAML read and turns msgspec's
`ValidationError` into the `ConfigError` a user reads — file, line, key and the fix — in `explain`, the
one translator. Of msgspec's error it reads only the path (`... - at `$.gate.alpha``); what is wrong
there it tells from the value and the declaration, in the declaration's own words:

- a field's words are `Meta(extra={"must": ..., "fix": ...})`: `must` follows the key's name when its value
  is wrong ("must be an integer of at least 1, got {value!r}"), `fix` says what to write ("write e.g.
  runs: {default:g}"); both may use {value}, {default}, {key}.
- a section's words are ClassVars (see `Words`): the name messages give it ("gate"; "" for the top of
  the file), how it says an unknown key and the keys it takes, and its VOICE: "must" (each field's
  `must`), or "typed" (the judge's: "must be a whole number, not a string" / "must be at least 1, got 0",
  told from the field's type and bounds).
- a check the types cannot say (a regex that must compile, two keys that go together) raises `Problem`
  from the section's `__post_init__`, naming its key, message and fix.
"""

# No `from __future__ import annotations` here: msgspec reads Words' ClassVars with every section's field
# types, and a string annotation is compiled and evaluated there, for each section (issue 38).

import functools
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec import inspect as mi

from scarbook.errors import ConfigError
from scarbook.fs.yamlio import line_of
from scarbook.text import with_article

S = TypeVar("S")
_AT = re.compile(r" - at `\$(?P<path>[^`]*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")
_MISSING = re.compile(r"missing required field `([^`]*)`")


class Words:
    """A section's own words (mixed into its Struct as ClassVars)."""

    NAME: ClassVar[str] = ""  # "gate", "judge", "agent"; "" for the file itself
    VOICE: ClassVar[str] = "must"  # or "typed"
    # {key}: the unknown key; {name}: the dotted name (gate.alfa); {kind}: a tagged section's type
    UNKNOWN: ClassVar[str] = "unknown key {name}"
    TAKES: ClassVar[str] = "{section} takes: {keys}"
    NOT_MAPPING: ClassVar[str] = "{section} must be a mapping, got {value!r}"
    NOT_MAPPING_FIX: ClassVar[str] = ""
    SORTED_KEYS: ClassVar[bool] = False  # list the keys it takes sorted (else in declaration order)


class Problem(ValueError):
    """A check of a section the types cannot say, raised from its __post_init__."""

    def __init__(self, key: str | None, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.key, self.message, self.fix = key, message, fix


def convert(data: Any, section: type[S], path: Path, *, line: int | None = None) -> S:
    """`data` (as YAML read it: mappings that know their lines) as `section` (a Struct, or a tagged union of
    them); a ConfigError when it is not. A field marked internal (`Meta(extra={"internal": why})`: set by
    the program, never by the file) is an unknown key here."""
    try:
        value = msgspec.convert(data, section)
    except msgspec.ValidationError as exc:
        raise explain(exc, data, section, path, line) from None
    if isinstance(data, Mapping) and isinstance(value, msgspec.Struct) and any(k not in keys_of(type(value)) for k in data):
        raise _section_problem(type(value), data, path, line_of(data) or line)
    return value


def check_fields(obj: msgspec.Struct) -> None:
    """A section built in code (a test, a session's record) checked as scarbook.yaml's would be, raising
    ValueError in the section's words ('gate mode must be one of evidence, point, got 'loose''); an
    enum's word is kept as its enum."""
    section = type(obj)
    for f in msgspec.structs.fields(obj):
        value = getattr(obj, f.name)
        try:
            msgspec.structs.force_setattr(obj, f.name, msgspec.convert(value, _hints(section)[f.name]))
        except msgspec.ValidationError:
            problem = _field_problem(section, {f.encode_name: value}, f.encode_name, Path(), None).problem
            raise ValueError(f"{getattr(section, 'NAME', '')} {f.encode_name} {problem.split(' ', 1)[1]}".strip()) from None


@functools.cache
def _hints(section: type) -> dict[str, Any]:
    return typing.get_type_hints(section, include_extras=True)


@functools.cache
def keys_of(section: type) -> tuple[str, ...]:
    """The keys a section takes, in declaration order (a tagged one's tag first; internal fields left out).
    Read from the section's own fields, not mi.type_info: that resolves every section under it too (~5 ms
    of `scarbook eval --dry-run` for scarbook.yaml's Config, issue 38.6), and every conversion asks this."""
    tag_field = section.__struct_config__.tag_field  # type: ignore[attr-defined]
    tag = (tag_field,) if tag_field else ()
    return tag + tuple(f.encode_name for f in msgspec.structs.fields(section) if not _internal(f.type))


def _internal(annotation: Any) -> bool:
    """A field declared Annotated[..., Meta(extra={"internal": why})]."""
    return typing.get_origin(annotation) is typing.Annotated and any(
        isinstance(m, msgspec.Meta) and "internal" in (m.extra or {}) for m in annotation.__metadata__)


def _extra(t: mi.Type) -> dict[str, Any]:
    return (t.extra if isinstance(t, mi.Metadata) else None) or {}


def explain(exc: msgspec.ValidationError, data: Any, section: type, path: Path, line: int | None = None) -> ConfigError:
    """The one translator: msgspec's error at `$.a.b` over `data` -> the user's message."""
    found = _AT.search(str(exc))
    steps = [m.group(1) if m.group(1) is not None else m.group(2) for m in _STEP.finditer(found["path"])] if found else []
    owner, raw, key, lines = _walk(section, data, steps, line)
    cause = exc.__cause__
    if isinstance(cause, Problem):
        return ConfigError(path, cause.message, line=line_of(raw, cause.key) or lines, fix=cause.fix)
    missing = _MISSING.search(str(exc))
    if key is None and missing and missing[1] in _fields(owner):  # a key the section needs: said as a wrong value
        return _field_problem(owner, raw, missing[1], path, lines)
    if key is None:  # the section itself: not a mapping, an unknown key, its type
        return _section_problem(owner, raw, path, lines)
    return _field_problem(owner, raw, key, path, lines)


def _walk(section: type, data: Any, steps: list[str], line: int | None) -> tuple[Any, Any, str | None, int | None]:
    """Follow the path: (the section that owns the last step, its raw mapping, the key or None for the
    section itself, the best line known)."""
    owner, raw, lines = _pick(section, data), data, line_of(data) or line
    for step in steps:
        fields = _fields(owner)
        if isinstance(owner, list) or not isinstance(raw, Mapping) or step not in fields:
            break  # a union no tag picked, or past what the declaration knows: the section says it
        sub = _struct_in(fields[step].type)
        if sub is None:
            return owner, raw, step, line_of(raw, step) or lines
        lines = line_of(raw, step) or lines
        raw = raw[step]
        owner = _pick(sub, raw)
    return owner, raw, None, line_of(raw) or lines


def _pick(section: Any, raw: Any) -> Any:
    """A tagged union's member for `raw` (by its tag), else the union itself (as a list) or the section."""
    if typing.get_origin(section) is typing.Union:
        section = list(typing.get_args(section))
    if not isinstance(section, list):
        return section
    info = mi.type_info(section[0])
    assert isinstance(info, mi.StructType)
    tag = raw.get(info.tag_field) if isinstance(raw, Mapping) else None
    return next((s for s in section if getattr(mi.type_info(s), "tag", None) == tag), section)


def _fields(section: Any) -> dict[str, mi.Field]:
    if isinstance(section, list):
        return {}
    info = mi.type_info(section)
    assert isinstance(info, mi.StructType)
    return {f.encode_name: f for f in info.fields}


def _struct_in(t: mi.Type) -> Any:
    """The Struct (or tagged union of Structs, as a list) a field holds, if any."""
    t = t.type if isinstance(t, mi.Metadata) else t
    if isinstance(t, mi.StructType):
        return t.cls
    if isinstance(t, mi.UnionType):
        structs = [s.cls for s in t.types if isinstance(s, mi.StructType)]
        return structs[0] if len(structs) == 1 else (structs or None)
    return None


def _name(section: Any, key: str | None = None) -> str:
    base = getattr(section[0] if isinstance(section, list) else section, "NAME", "")
    return ".".join(p for p in (base, key) if p)


def _section_problem(section: Any, raw: Any, path: Path, lines: int | None) -> ConfigError:
    words = section[0] if isinstance(section, list) else section
    name = _name(section) or "scarbook.yaml"
    if not isinstance(raw, Mapping):
        return ConfigError(path, words.NOT_MAPPING.format(section=name, value=raw, kind=kind_of(raw)),
                           line=line_of(raw) or lines,
                           fix=words.NOT_MAPPING_FIX)
    if isinstance(section, list):  # a tagged union whose tag names no member
        return _tag_problem(section, raw, path, lines)
    keys = keys_of(section)
    unknown = next((k for k in raw if k not in keys), None)
    if unknown is not None:
        info = mi.type_info(section)
        # a tagged one's, or its type:, or (none written) the type it then has: "a local executor", never "a  executor"
        kind = getattr(info, "tag", None) or str(raw.get("type", "")) or next(
            (str(f.default) for f in getattr(info, "fields", ()) if f.name == "type" and f.default is not msgspec.NODEFAULT),
            "")
        listed = sorted(keys) if words.SORTED_KEYS else keys
        return ConfigError(path, words.UNKNOWN.format(key=unknown, name=_name(section, str(unknown)), kind=kind,
                                                     a_kind=with_article(str(kind))),
                           line=line_of(raw, unknown) or lines,
                           fix=words.TAKES.format(section=name, keys=", ".join(listed), kind=kind,
                                                  a_kind=with_article(str(kind))))
    return _tag_problem([section], raw, path, lines)


def _tag_problem(members: list, raw: Mapping, path: Path, lines: int | None) -> ConfigError:
    info = mi.type_info(members[0])
    assert isinstance(info, mi.StructType)
    field = info.tag_field or "type"
    tags = [getattr(mi.type_info(m), "tag", None) for m in members]
    words = members[0]
    return ConfigError(path, f"{_name(members, field)} must be one of {', '.join(map(str, tags))}, got {raw.get(field)!r}",
                       line=line_of(raw, field) or line_of(raw) or lines, fix=getattr(words, "TAG_FIX", ""))


def _field_problem(section: Any, raw: Any, key: str, path: Path, lines: int | None) -> ConfigError:
    field = _fields(section)[key]
    value = raw[key] if isinstance(raw, Mapping) and key in raw else None
    extra = _extra(field.type)
    fill = {"value": value, "default": field.default, "key": key, "kind": kind_of(value)}
    name = _name(section, key)
    fix = extra.get("fix", "")
    if "must" in extra:
        must = extra["must"]
    elif getattr(section, "VOICE", "must") == "typed":
        must, in_range = _typed(field.type, value)
        fix = extra.get("range_fix", fix) if in_range else fix
    else:
        must = f"must be {_words_of(field.type)}, got {{value!r}}"
    return ConfigError(path, f"{name} {_fill(must, fill)}", line=lines, fix=_fill(fix, fill))


_PLACE = re.compile(r"\{(key|value|default|kind)(!r)?(:[^{}]*)?\}")


def _fill(template: str, fill: dict[str, Any]) -> str:
    """{value!r}, {default:g}, {key}, {kind} filled in; every other brace kept (fixes quote YAML: {a: 1})."""
    def one(m: re.Match) -> str:
        value = fill[m[1]]
        return repr(value) if m[2] else format(value, (m[3] or ":")[1:])
    return _PLACE.sub(one, template)


def kind_of(value: Any) -> str:
    """What a YAML value is, in words: 'a string', 'a list', 'empty'."""
    if value is None:
        return "empty"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a mapping"}.get(type(value), "a mapping" if isinstance(value, Mapping) else
                                   "a list" if isinstance(value, list) else type(value).__name__)


def _core(t: mi.Type) -> mi.Type:
    t = t.type if isinstance(t, mi.Metadata) else t
    if isinstance(t, mi.UnionType):
        rest = [s for s in t.types if not isinstance(s, mi.NoneType)]
        if len(rest) == 1:
            return _core(rest[0])
    return t


def _words_of(t: mi.Type) -> str:
    t = _core(t)
    if isinstance(t, (mi.EnumType, mi.LiteralType)):
        values = [str(v.value) for v in t.cls] if isinstance(t, mi.EnumType) else [str(v) for v in t.values]
        return "one of " + ", ".join(values)
    return {mi.IntType: "a whole number", mi.FloatType: "a number", mi.BoolType: "true or false",
            mi.StrType: "a string"}.get(type(t), "a " + type(t).__name__.removesuffix("Type").lower())


def _typed(t: mi.Type, value: Any) -> tuple[str, bool]:
    """The judge's voice: what type it must be (and what it is), or which bound it broke (and its value);
    and whether the value had the right type (a bound broken)."""
    core = _core(t)
    if isinstance(core, (mi.IntType, mi.FloatType)):
        is_number = isinstance(value, int if isinstance(core, mi.IntType) else (int, float)) and not isinstance(value, bool)
        if not is_number:
            return f"must be {_words_of(core)}, not {kind_of(value)}", False
        if core.gt is not None and value <= core.gt:
            return f"must be greater than {core.gt:g}, got {value}", True
        if core.ge is not None and core.le is not None:
            return f"must be between {core.ge:g} and {core.le:g}, got {value}", True
        return f"must be at least {core.ge:g}, got {value}", True
    if isinstance(core, mi.StrType) and isinstance(value, str):
        return "is empty", True
    return f"must be {_words_of(core)}, not {kind_of(value)}", False
