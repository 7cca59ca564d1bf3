"""msgspec's decoding errors of a TOML config, worded as one line naming the key as the file spells it.

A bound that a field's ``Meta`` declares is worded by that ``Meta``'s description, with the value.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

_TOKEN = re.compile(r"\[(\d+)\]|\[\.\.\.\]|[^.\[]+")
_GOT = re.compile(r"got `([^`]+)`")
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_BOUND = re.compile(r"Expected `(int|float)` [<>]=? ")  # msgspec's words for a value outside a Meta's bounds


@dataclass(frozen=True)
class TomlSchema:
    """What the wording needs of a config's schema."""

    root: type  # the Struct the file is decoded to
    choices: Mapping[str, tuple[str, ...]]  # the allowed values of each key whose type is a choice
    top_key_errors: Mapping[str, str]  # the whole error for these unknown top-level keys


def describe(message: str, data: bytes, schema: TomlSchema) -> str:
    """msgspec's "<problem> - at `$.path`" as "key 'path': <problem>", with the key spelled as in TOML."""
    problem, _, at = message.partition(" - at `")
    raw = _raw(data)
    got = _GOT.search(problem)
    key, bot = _key(at.rstrip("`").removeprefix("$").removeprefix("."), raw, got.group(1) if got else None)
    where = f" (bot {bot!r})" if bot else ""
    if match := re.fullmatch(r"Object contains unknown field `(.+)`", problem):
        if not key and match.group(1) in schema.top_key_errors:
            return schema.top_key_errors[match.group(1)]
        return f"unknown key {_join(key, match.group(1))!r}{where}"
    if match := re.fullmatch(r"Object missing required field `(.+)`", problem):
        return f"missing key {_join(key, match.group(1))!r}{where}"
    if _BOUND.match(problem) and (bound := _bound_problem(schema.root, key, raw)) is not None:
        return f"key {key!r}{where}: {bound}"
    if match := re.fullmatch(r"Invalid enum value (.+)", problem):
        choices = schema.choices.get(key)
        expected = f": expected one of {', '.join(choices)}" if choices else ""
        return f"key {key!r}{where}: invalid value {match.group(1)}{expected}"
    text = problem.replace("`", "").replace(" | null", "").replace("object", "table")
    return f"key {key!r}{where}: {text[:1].lower()}{text[1:]}"


def _bound_problem(root: type, key: str, raw: object) -> str | None:
    """The wording of a bound that the value at TOML ``key`` breaks (its field's ``Meta`` description), with the
    value; None for a key of no described bound."""
    described: msgspec.inspect.Type | None = msgspec.inspect.type_info(root)
    value = raw
    for name in key.split("."):
        fields = {field.name: field.type for field in _struct_of(described).fields} if described else {}
        described = fields.get(name)
        value = value.get(name) if isinstance(value, dict) else None
    meta = _metadata_of(described)
    if meta is None or not isinstance(value, int | float) or not (meta.extra_json_schema or {}).get("description"):
        return None
    if isinstance(meta.type, msgspec.inspect.FloatType):
        value = float(value)
        if not math.isfinite(value):  # -inf, nan: as the config's check says of inf, which no bound refuses
            return f"must be a finite number of seconds, not {value}"
    return f"{(meta.extra_json_schema or {})['description']}, not {value}"


def _struct_of(described: msgspec.inspect.Type) -> msgspec.inspect.StructType:
    """The Struct type in a field's type (an optional table is a union with None)."""
    for kind in (described, *getattr(described, "types", ())):
        if isinstance(kind, msgspec.inspect.StructType):
            return kind
    return msgspec.inspect.StructType(cls=msgspec.Struct, fields=())


def _metadata_of(described: msgspec.inspect.Type | None) -> msgspec.inspect.Metadata | None:
    """The ``Meta`` of a field's type (an optional value is a union with None)."""
    for kind in (described, *getattr(described, "types", ())):
        if isinstance(kind, msgspec.inspect.Metadata):
            return kind
    return None


def _raw(data: bytes) -> object:
    try:
        return tomllib.loads(data.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):  # pragma: no cover - msgspec decoded it already
        return None


def _key(path: str, raw: object, got: str | None) -> tuple[str, str | None]:
    """The TOML key for msgspec's path, and the name of the bot it is in (if any).

    msgspec writes a dict entry as ``[...]``; the entry meant is the first whose value has the type msgspec
    got (the only one that can fail: the other values of a dict share its type).
    """
    parts: list[str] = []
    node = raw
    bot: str | None = None
    for match in _TOKEN.finditer(path):
        token = match.group(0)
        if match.group(1) is not None:
            index = int(match.group(1))
            parts.append(token)
            node = node[index] if isinstance(node, list) and index < len(node) else None
            if parts == ["bots", token] and isinstance(node, dict) and isinstance(node.get("name"), str):
                bot = node["name"]
        elif token == "[...]":
            entry = _entry_of_type(node, got)
            parts.append("." + _toml_key(entry) if entry is not None else ".<entry>")
            node = node[entry] if isinstance(node, dict) and entry is not None else None
        else:
            parts.append(("." if parts else "") + token)
            node = node.get(token) if isinstance(node, dict) else None
    return "".join(parts), bot


def _entry_of_type(node: object, got: str | None) -> str | None:
    if not isinstance(node, dict) or got is None:
        return None
    for name, value in node.items():
        if _msgspec_type(value) == got:
            return str(name)
    return None


def _msgspec_type(value: object) -> str:
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (list, "array"),
                       (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__  # datetime, date, time


def _toml_key(name: str) -> str:
    return name if _BARE_KEY.match(name) else msgspec.json.encode(name).decode()


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def one_line(text: str) -> str:
    return " ".join(text.split())
