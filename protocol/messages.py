"""The wire protocol: one UTF-8 JSON object per line, each with a ``type`` (PROTOCOL.md).

These Structs are the single source of truth: the referee encodes and decodes with them,
``protocol/schema.json`` is generated from them, and Python bots may import them.

Referee to bot: ``hello``, ``game``, ``request``, ``game_over``, ``shutdown``.
Bot to referee: ``hello`` (the handshake reply) and ``action`` (the reply to a request).
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.events import AnyEvent
from protocol.rules import Rules
from protocol.views import GameResult, PlayerView

PROTOCOL_VERSION = 2


class Message(msgspec.Struct, tag_field="type", frozen=True):
    """Base of every message; ``type`` names it on the wire.

    Bots should ignore fields and message types they do not know (a newer referee may add them);
    the referee rejects unknown fields in what bots send.
    """


# -- referee to bot ----------------------------------------------------------------------


class Hello(Message, tag="hello", frozen=True):
    """The first line a bot receives. It must answer with its own ``hello`` within ``time_ms``."""

    protocol: int
    referee: str
    time_ms: int


class GameStart(Message, tag="game", frozen=True):
    """A new game: the bot's ``seat`` of ``players``, the rules, and its first view.

    ``names`` are the referee's names of the seats' bots (config or command line), not their hello names.
    ``seed`` is for the bot's own randomness in this game (reseed from it, and the same game plays the
    same way again): derived for this game and seat from the run's secret, it tells nothing of the cards.
    Sent with the bot's first request of the game (or with game over); needs no reply.
    """

    game: str
    seat: int
    players: int
    names: list[str]
    rules: Rules
    dealer: int
    view: PlayerView
    seed: int


class Request(Message, tag="request", frozen=True):
    """A decision: answer with an ``action`` naming this ``id`` and one of ``legal`` within ``time_ms``.

    ``events`` are what happened since this bot's last message, as its seat may see them.
    """

    id: int
    game: str
    view: PlayerView
    legal: list[str]
    time_ms: int
    events: list[AnyEvent] = []


class GameOver(Message, tag="game_over", frozen=True):
    """The game has ended; ``events`` are the last ones this seat had not yet been sent. No reply."""

    game: str
    result: GameResult
    events: list[AnyEvent] = []


class Shutdown(Message, tag="shutdown", frozen=True):
    """The referee is done with this bot: it should exit within ``grace_ms``."""

    grace_ms: int


RefereeMessage = Hello | GameStart | Request | GameOver | Shutdown


# -- bot to referee ----------------------------------------------------------------------


class BotHello(Message, tag="hello", frozen=True, forbid_unknown_fields=True):
    """The handshake reply: the protocol version the bot speaks, its name and version."""

    protocol: int
    name: str
    version: str = ""


class Reply(Message, tag="action", frozen=True, forbid_unknown_fields=True):
    """The answer to request ``id``: one of its legal action strings."""

    id: int
    action: str


BotMessage = BotHello | Reply

referee_decoder = msgspec.json.Decoder(RefereeMessage)  # for Python bots
bot_decoder = msgspec.json.Decoder(BotMessage)  # for the referee
encoder = msgspec.json.Encoder()


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every message both ways (``protocol/schema.json``, ``durak schema``)."""
    (referee_ref, bot_ref), components = msgspec.json.schema_components(
        [RefereeMessage, BotMessage], ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"durak-referee wire protocol, version {PROTOCOL_VERSION}",
        "description": "One JSON object per line. 'referee_to_bot' and 'bot_to_referee' list the messages.",
        "referee_to_bot": referee_ref,
        "bot_to_referee": bot_ref,
        "$defs": components,
    }
