"""The protocol's documents against its code: protocol/schema.json and every example in protocol/PROTOCOL.md.

protocol/messages.py is the single source of truth; these tests fail when the committed schema or the
bot authors' spec drifts from it.
"""

from __future__ import annotations

import json
import re
import sys
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.events import AnyEvent
from protocol.messages import (
    PROTOCOL_VERSION,
    BotMessage,
    RefereeMessage,
    bot_decoder,
    json_schema,
    referee_decoder,
)
from protocol.rules import VARIANTS, Rules
from protocol.views import PlayerView
from referee.bots.errors import LauncherError
from referee.bots.launcher import BotCommand, wrapper_paths
from referee.bots.limits import TimeControl
from referee.bots.session import BotClient
from referee.games.match import Series, play_series

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "protocol" / "schema.json"
DOC = ROOT / "protocol" / "PROTOCOL.md"
REGENERATE = "protocol/schema.json is stale: run `durak schema > protocol/schema.json`"

DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    "referee → bot": referee_decoder,
    "bot → referee": bot_decoder,
    "view": msgspec.json.Decoder(PlayerView),
    "event": msgspec.json.Decoder(AnyEvent),
}
# "Example (referee → bot):" or "Example (view), ...:" on the line before a ```json block
LABEL = re.compile("\\((" + "|".join(map(re.escape, DECODERS)) + ")\\)")
UNLABELLED = "unlabelled"
TRANSCRIPT_DIRECTIONS = {"<": "referee → bot", ">": "bot → referee"}


def generated_schema() -> str:
    """What ``durak schema`` prints: the schema text and the newline ``typer.echo`` adds."""
    from referee.cli import schema_text  # here, so that the doc tests do not depend on the whole CLI

    return schema_text(json_schema()) + "\n"


def tags(union: Any) -> set[str]:
    return {member.__struct_config__.tag for member in typing.get_args(union)}


# -- the schema ------------------------------------------------------------------------------


def test_committed_schema_is_current() -> None:
    assert SCHEMA.is_file(), REGENERATE
    assert SCHEMA.read_text(encoding="utf-8") == generated_schema(), REGENERATE


def test_durak_schema_prints_the_schema() -> None:
    from clirun import invoke

    ran = invoke("schema")
    assert ran.code == 0, ran.output
    assert ran.out == generated_schema()


def test_schema_names_the_protocol_version_and_every_message() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["title"].endswith(f"version {PROTOCOL_VERSION}")
    assert set(schema["referee_to_bot"]["discriminator"]["mapping"]) == tags(RefereeMessage)
    assert set(schema["bot_to_referee"]["discriminator"]["mapping"]) == tags(BotMessage)


# -- the examples in PROTOCOL.md -------------------------------------------------------------


class Example(typing.NamedTuple):
    kind: str  # a key of DECODERS
    text: str
    line: int  # in PROTOCOL.md, for failure messages


def doc_lines() -> list[str]:
    return DOC.read_text(encoding="utf-8").splitlines()


def fenced_blocks(lines: list[str], info: str) -> list[tuple[int, list[str]]]:
    """``(line number of the opening fence, body lines)`` of every ```info block."""
    blocks, start = [], None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == f"```{info}":
            start = number
        elif start is not None and line.strip() == "```":
            blocks.append((start, lines[start:number - 1]))
            start = None
    assert start is None, f"PROTOCOL.md:{start}: unclosed ```{info} block"
    return blocks


def json_examples() -> list[Example]:
    """Every ```json block, labelled by the last parenthesis of the line before it."""
    lines = doc_lines()
    examples = []
    for start, body in fenced_blocks(lines, "json"):
        before = next((line for line in reversed(lines[:start - 1]) if line.strip()), "")
        label = LABEL.search(before)
        examples.append(Example(label.group(1) if label else UNLABELLED, "\n".join(body), start))
    return examples


def event_table_examples() -> list[Example]:
    """The inline ``{...}`` examples of the events section (section 6)."""
    lines = doc_lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## ") and "Events" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return [Example("event", span, number + 1) for number in range(start, end)
            for span in re.findall(r"`(\{.*?\})`", lines[number])]


def transcript_examples() -> list[Example]:
    """The lines of ```text transcripts that are complete (not cut with "...")."""
    examples = []
    for start, body in fenced_blocks(doc_lines(), "text"):
        for offset, line in enumerate(body, 1):
            direction, _, text = line.partition(" ")
            if direction in TRANSCRIPT_DIRECTIONS and text.startswith("{") and "..." not in text:
                examples.append(Example(TRANSCRIPT_DIRECTIONS[direction], text, start + offset))
    return examples


def all_examples() -> list[Example]:
    return json_examples() + event_table_examples() + transcript_examples()


def unknown_keys(original: Any, decoded: Any, path: str = "$") -> list[str]:
    """Keys in the example that the Struct does not know (it may ignore them), and values it changed."""
    if isinstance(original, dict):
        if not isinstance(decoded, dict):
            return [f"{path}: {original!r} became {decoded!r}"]
        problems = [f"{path}.{key}: unknown field" for key in original if key not in decoded]
        for key in original.keys() & decoded.keys():
            problems += unknown_keys(original[key], decoded[key], f"{path}.{key}")
        return problems
    if isinstance(original, list) and isinstance(decoded, list) and len(original) == len(decoded):
        return [problem for i, (a, b) in enumerate(zip(original, decoded, strict=True))
                for problem in unknown_keys(a, b, f"{path}[{i}]")]
    return [] if original == decoded and type(original) is type(decoded) else [f"{path}: {original!r}"]


def decode(example: Example) -> Any:
    if example.kind == UNLABELLED:
        pytest.fail(f"PROTOCOL.md:{example.line}: the line before a ```json block must say which way it goes: "
                    f"{', '.join(f'({kind})' for kind in DECODERS)}")
    try:
        return DECODERS[example.kind].decode(example.text)
    except msgspec.DecodeError as exc:
        pytest.fail(f"PROTOCOL.md:{example.line}: the {example.kind} example does not decode: {exc}")


@pytest.mark.parametrize("example", all_examples(), ids=lambda e: f"line{e.line}-{e.kind.replace(' → ', '-to-')}")
def test_doc_example_decodes(example: Example) -> None:
    decoded = decode(example)
    problems = unknown_keys(json.loads(example.text), msgspec.to_builtins(decoded))
    assert not problems, f"PROTOCOL.md:{example.line}: the {example.kind} example disagrees with the code: {problems}"
    version = getattr(decoded, "protocol", PROTOCOL_VERSION)  # both hellos
    assert version == PROTOCOL_VERSION, f"PROTOCOL.md:{example.line}: protocol {version}, not {PROTOCOL_VERSION}"


def test_doc_has_examples_of_every_message_and_event() -> None:
    decoded = [(example.kind, decode(example)) for example in all_examples()]
    messages = {kind: {type(value).__struct_config__.tag for k, value in decoded if k == kind}
                for kind in ("referee → bot", "bot → referee")}
    assert messages["referee → bot"] >= tags(RefereeMessage)
    assert messages["bot → referee"] >= tags(BotMessage)
    events = [value for kind, value in decoded if kind == "event"]
    events += [event for _, value in decoded for event in getattr(value, "events", [])]
    assert {type(event).__struct_config__.tag for event in events} >= tags(AnyEvent)


def test_doc_names_the_protocol_version() -> None:
    assert f"# The durak-referee bot protocol, version {PROTOCOL_VERSION}" in DOC.read_text(encoding="utf-8")


# -- the minimal bot of PROTOCOL.md ----------------------------------------------------------


def minimal_bot() -> str:
    (_, body), = fenced_blocks(doc_lines(), "python")
    return "\n".join(body) + "\n"


def test_minimal_bot_is_short_and_needs_only_the_standard_library() -> None:
    source = minimal_bot()
    assert len(source.splitlines()) <= 15
    imported = set(re.findall(r"^import (\w+)", source, re.M)) | set(re.findall(r"^from (\w+)", source, re.M))
    assert imported <= {"json", "sys"}
    compile(source, "minimal_bot.py", "exec")


def test_minimal_bot_plays_every_variant(tmp_path: Path) -> None:
    try:
        wrapper_paths()
    except LauncherError as exc:
        pytest.skip(str(exc))
    bot = tmp_path / "minimal_bot.py"
    bot.write_text(minimal_bot(), encoding="utf-8")
    clock = TimeControl(move_time=2.0)
    clients = [BotClient(f"minimal{seat}", BotCommand([sys.executable, str(bot)]), time_control=clock)
               for seat in range(2)]
    try:
        for variant in VARIANTS:
            (record,) = play_series(Series(Rules(variant=variant), 1, 3, series_id=f"{variant}-"), clients)
            assert record.verdicts == [], record.verdicts
            assert record.actions > 0 and all(times is not None for times in record.times)
            assert record.result.end in ("fool", "draw", "action_cap")
    finally:
        for client in clients:
            client.stop()
