"""Replays: a game as JSON lines (a ``game`` header, every event in full, the ``result``), and
its telling for people (``durak replay``), either all-seeing or as one seat saw it.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from protocol.cards import CARD_NAMES, parse_cards
from protocol.events import AnyEvent, event_for_seat
from protocol.records import SeatTimes, StderrChunk, Verdict
from protocol.rules import HAND_SIZE, Rules
from protocol.views import GameResult
from referee.results.narrate import describe_event, describe_result
from referee.results.record import GameRecord
from referee.text import visible


class ReplayHeader(msgspec.Struct, tag="game", tag_field="type", frozen=True):
    game: str
    deal: str
    names: list[str]
    rules: Rules
    dealer: int
    deck: list[str]
    bot_seeds: list[int] = []  # per seat, the seed its game message carried (empty in older replays)


class ReplayResult(msgspec.Struct, tag="result", tag_field="type", frozen=True):
    result: GameResult
    verdicts: list[Verdict]
    times: list[SeatTimes | None]


ReplayLine = ReplayHeader | ReplayResult | AnyEvent
_line_decoder = msgspec.json.Decoder(ReplayLine)
_line_encoder = msgspec.json.Encoder()


class ReplayError(ValueError):
    """A replay that does not decode."""


def replay_lines(record: GameRecord) -> bytes:
    """The game as JSON lines, newline-terminated."""
    header = ReplayHeader(game=record.game, deal=record.deal, names=record.names, rules=record.rules,
                          dealer=record.dealer, deck=record.deck, bot_seeds=record.bot_seeds)
    result = ReplayResult(result=record.result, verdicts=record.verdicts, times=record.times)
    return _line_encoder.encode_lines([header, *record.events, result])


def decode_replay_line(line: bytes) -> ReplayLine:
    """One line of a replay."""
    try:
        return _line_decoder.decode(line)
    except msgspec.DecodeError as exc:
        raise ReplayError(f"not a replay: {exc}") from None


def parse_replay(data: bytes) -> tuple[ReplayHeader, list[AnyEvent], ReplayResult]:
    try:
        lines = [_line_decoder.decode(line) for line in data.splitlines() if line.strip()]
    except msgspec.DecodeError as exc:
        raise ReplayError(f"not a replay: {exc}") from None
    if len(lines) < 2 or not isinstance(lines[0], ReplayHeader) or not isinstance(lines[-1], ReplayResult):
        raise ReplayError("not a replay: it needs a game header first and a result last")
    return lines[0], lines[1:-1], lines[-1]  # type: ignore[return-value]


def tell(data: bytes, seat: int | None = None, stderr: Sequence[Sequence[StderrChunk]] | None = None) -> list[str]:
    """The game for a reader: every hand and draw, or (``seat``) only what that seat was told.

    With ``stderr`` (per seat), what the bots wrote there is told beside the moves it was written during:
    only ``seat``'s own with a seat, every seat's without one (the organizer's view).
    """
    header, events, end = parse_replay(data)
    names = [visible(name) for name in header.names]
    lines = [f"game {visible(header.game)} ({header.rules.variant}, {len(names)} players, {header.rules.deck} "
             f"cards), dealer {names[header.dealer]}"]
    lines += _opening_hands(header, names, seat)
    written = _stderr_by_event(stderr or [], seat)
    for index, event in enumerate(events):
        lines += [f"   {names[s]} stderr| {visible(line)}" for s, line in written.pop(index, [])]
        shown = event if seat is None else event_for_seat(event, seat)
        line = describe_event(shown, names)
        if line is not None:
            lines.append(line)
    lines += [f"   {names[s]} stderr| {visible(line)}" for index in sorted(written) for s, line in written[index]]
    result = end.result
    if seat is not None and seat != result.forfeit_seat:  # the reason may quote the offender's stderr
        result = msgspec.structs.replace(result, reason=None)
    lines.append("result: " + describe_result(result, names))
    lines += [f"verdict: {visible(v.bot)} (seat {v.seat}) {visible(v.kind)}"
              + (f": {visible(v.reason)}" if seat is None or seat == v.seat else "") for v in end.verdicts]
    return lines


def _stderr_by_event(stderr: Sequence[Sequence[StderrChunk]], seat: int | None) -> dict[int, list[tuple[int, str]]]:
    """Event index -> (seat, line) of the stderr written just before it; only ``seat``'s with a seat."""
    by_event: dict[int, list[tuple[int, str]]] = {}
    for s, chunks in enumerate(stderr):
        if seat is not None and s != seat:
            continue
        for chunk in chunks:
            by_event.setdefault(chunk.after, []).extend((s, line) for line in chunk.text.splitlines())
    return by_event


def _opening_hands(header: ReplayHeader, names: Sequence[str], seat: int | None) -> list[str]:
    """Bout games: the six cards each seat was dealt (RULES.md 8.1); Fool's Fool's ladder tells its own deal."""
    if not header.rules.is_bout_game:
        return []
    players = len(header.names)
    deck = parse_cards(" ".join(header.deck))
    hands: list[list[int]] = [[] for _ in range(players)]
    for i, card in enumerate(deck[:players * HAND_SIZE]):
        hands[(header.dealer + 1 + i) % players].append(card)
    trump = deck[players * HAND_SIZE] if len(deck) > players * HAND_SIZE else deck[players * HAND_SIZE - 1]
    lines = [f"trump card {CARD_NAMES[trump]}"]
    for s, hand in enumerate(hands):
        if seat is None or s == seat:
            lines.append(f"   {names[s]} is dealt {' '.join(CARD_NAMES[c] for c in sorted(hand))}")
    return lines


def seat_of(names: Sequence[str], bot: str) -> int:
    if bot not in names:
        raise ReplayError(f"bot {bot!r} did not play this game (players: {', '.join(names)})")
    return list(names).index(bot)


def replays_of_log(data: bytes) -> list[bytes]:
    """The games of a ``durak play --log`` file (replays one after another), each as its replay's bytes."""
    games: list[list[bytes]] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            is_header = isinstance(_line_decoder.decode(line), ReplayHeader)
        except msgspec.DecodeError as exc:
            raise ReplayError(f"not a replay log: {exc}") from None
        if is_header or not games:
            games.append([])
        games[-1].append(line)
    return [b"\n".join(lines) + b"\n" for lines in games]
