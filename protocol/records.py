"""The result record: one JSON line per finished game (``durak play --json``, ``durak export``).

It is the one shape the leaderboard reads, so results produced elsewhere can be rated too.
"""

from __future__ import annotations

import msgspec

from protocol.rules import Rules


class Verdict(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Why a bot forfeited: ``kind`` is timeout, crash, memory, illegal, protocol, disqualified or resigned
    (a person at the table gave up)."""

    seat: int
    bot: str
    kind: str
    reason: str


class SeatTimes(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A seat's decision times in one game, in milliseconds on the referee's monotonic clock."""

    moves: int
    median_ms: float
    max_ms: float


class StderrChunk(msgspec.Struct, frozen=True, array_like=True, forbid_unknown_fields=True):
    """What a bot wrote to stderr from one mark to the next: ``after`` is the number of game events there
    were when the chunk began, so the chunk belongs beside ``events[after:]`` (the bot's move, or its start
    at 0). On the wire and in the database it is ``[after, text]``."""

    after: int
    text: str


def stderr_text(chunks: list[StderrChunk]) -> str:
    """The chunks joined into one text, as the bot wrote it (with any note of bytes dropped)."""
    return "".join(chunk.text for chunk in chunks)


class ResultRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A finished game, as ratings and exports see it.

    ``order`` is the finishing order, best first, each place a list of tied players; the
    fools form the last place. ``fools`` is empty for a draw. ``deal`` is the cluster key:
    every rotation of one deal shares it.
    """

    game: str
    deal: str
    variant: str
    players: list[str]
    order: list[list[str]]
    fools: list[str]
    end: str
    verdicts: list[Verdict] = []
    chases: list[int] | None = None
    capped: bool = False
    rules: Rules | None = None
    times: list[SeatTimes | None] | None = None  # per seat, for games between bot processes
    #: per seat, replies after the move time but inside the grace (PROTOCOL.md 8); None when not timed
    strikes: list[int] | None = None
    #: per seat, what its bot wrote to stderr, by move: only in the organizer's ``durak export --stderr``
    stderr: list[list[StderrChunk]] | None = None
    #: The game's deal, to play it again (``durak export`` only, the organizer's: it is every card of the game;
    #: stored records and ``durak play --json`` leave it null): the deck order, top first, as ``durak play
    #: --deal`` takes it; the dealer's seat; the seat that moved first (``--leader``); per seat, the seed its
    #: ``game`` message carried (``--bot-seeds``), where known.
    deck: str | None = None
    dealer: int | None = None
    leader: int | None = None
    bot_seeds: list[int] | None = None
