"""Game outcomes in columns: what ratings and leaderboard statistics need of a million games, as arrays.

Every seat of every game becomes one entry of ``bot`` (a bot index), ``place`` (1 = first out; tied
players share the place, the fools have the last one) and ``fool``; every game one entry of ``size``
(its seats, stored consecutively), ``cluster`` (its deal) and ``drawn``. Built from result records, or
straight from the compact ``outcome`` text a results database keeps beside each record
(:func:`outcome_text`), which skips decoding a million JSON records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import msgspec
import numpy as np
import numpy.typing as npt

from protocol.records import ResultRecord

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Outcomes:
    bots: tuple[str, ...]  # sorted names; ``bot`` indexes them
    clusters: tuple[str, ...]  # deal keys; ``cluster`` indexes them
    bot: IntArray  # per seat
    place: IntArray  # per seat, 1-based; ties share a place
    fool: BoolArray  # per seat
    size: IntArray  # per game: its seats, stored one game after another
    cluster: IntArray  # per game
    drawn: BoolArray  # per game: no fool
    disqualified: Mapping[str, str] = field(default_factory=dict)  # bot -> why it was disqualified

    @property
    def n_games(self) -> int:
        return len(self.size)


def outcome_text(record: ResultRecord) -> str:
    """``"alice bob carol|1 2 2|1"``: players by seat, each one's place, and whether the game had a fool.

    A config's names never hold whitespace or ``|`` (the config checks them), but a row written by another hand
    may: a game with such a name is kept as ``|`` and a JSON array (``|[["a b","c"],[1,2],true]``), which no plain
    text can be, since a plain one starts with a name. So an outcome always parses back to its players, whatever
    they are called.
    """
    places = _places(record)
    if any(_unsafe(name) for name in record.players):
        return "|" + _OUTCOME_JSON.encode((record.players, places, bool(record.fools))).decode()
    return f"{' '.join(record.players)}|{' '.join(map(str, places))}|{int(bool(record.fools))}"


def _unsafe(name: str) -> bool:
    """A name that the plain text could not split back out."""
    return not name or "|" in name or any(char.isspace() for char in name)


_OUTCOME_JSON = msgspec.json.Encoder()
_OUTCOME_DECODER = msgspec.json.Decoder(tuple[list[str], list[int], bool])


def _places(record: ResultRecord) -> list[int]:
    """Each player's place, by seat: 1 + the number of players strictly ahead."""
    place_of: dict[str, int] = {}
    place = 1
    for group in record.order:
        for name in group:
            place_of[name] = place
        place += len(group)
    return [place_of[name] for name in record.players]


class _Builder:
    """Collects games seat by seat, numbering bots and deals in order of first appearance."""

    def __init__(self) -> None:
        self.bot_index: dict[str, int] = {}
        self.deal_index: dict[str, int] = {}
        self.bots: list[int] = []
        self.places: list[int] = []
        self.sizes: list[int] = []
        self.deals: list[int] = []
        self.fooled: list[bool] = []

    def add(self, deal: str, seats: list[str], places: Iterable[int], has_fool: bool) -> None:
        index = self.bot_index
        self.bots.extend([index.setdefault(name, len(index)) for name in seats])
        self.places.extend(places)
        self.sizes.append(len(seats))
        self.deals.append(self.deal_index.setdefault(deal, len(self.deal_index)))
        self.fooled.append(has_fool)

    def build(self, disqualified: Mapping[str, str]) -> Outcomes:
        names = sorted(self.bot_index)
        by_name = np.empty(len(names), dtype=np.int64)
        by_name[[self.bot_index[n] for n in names]] = np.arange(len(names))
        size = np.asarray(self.sizes, dtype=np.int64)
        place = np.asarray(self.places, dtype=np.int64)
        drawn = ~np.asarray(self.fooled, dtype=np.bool_)
        last_place = np.zeros(len(size), dtype=np.int64)
        if len(place):
            last_place = np.maximum.reduceat(place, np.concatenate(([0], np.cumsum(size)[:-1])))
        fool = (place == np.repeat(last_place, size)) & ~np.repeat(drawn, size)
        return Outcomes(
            bots=tuple(names), clusters=tuple(self.deal_index), bot=by_name[np.asarray(self.bots, dtype=np.int64)],
            place=place, fool=fool, size=size, cluster=np.asarray(self.deals, dtype=np.int64), drawn=drawn,
            disqualified=dict(disqualified),
        )


def outcomes_from_rows(rows: Iterable[tuple[str, str]], disqualified: Mapping[str, str] | None = None) -> Outcomes:
    """From ``(deal key, outcome text)`` rows, as a results database returns them; ``disqualified``: bot ->
    why."""
    builder = _Builder()
    for deal, text in rows:
        builder.add(deal, *parse_outcome(text))
    return builder.build(disqualified or {})


def parse_outcome(text: str) -> tuple[list[str], list[int], bool]:
    """An :func:`outcome_text`'s players by seat, their places and whether the game had a fool."""
    if text.startswith("|"):
        return _OUTCOME_DECODER.decode(text[1:])
    names, places, has_fool = text.split("|")
    return names.split(" "), [int(place) for place in places.split(" ")], has_fool == "1"


def outcome_players(text: str) -> list[str]:
    """An :func:`outcome_text`'s players by seat, without reading the rest."""
    if text.startswith("|"):
        return parse_outcome(text)[0]
    return text.partition("|")[0].split(" ")


def outcomes_from_records(records: Iterable[ResultRecord]) -> Outcomes:
    """From result records (a JSON-lines file, say), each checked to be a consistent result.

    :raises ValueError: a finishing order that does not list every player once, or fools that are not
        its last place.
    """
    builder = _Builder()
    disqualified: dict[str, str] = {}
    for record in records:
        _check(record)
        builder.add(record.deal, record.players, _places(record), bool(record.fools))
        for verdict in record.verdicts:
            if verdict.kind == "disqualified":
                disqualified.setdefault(verdict.bot, verdict.reason)
    return builder.build(disqualified)


def _check(record: ResultRecord) -> None:
    players = record.players
    if len(set(players)) != len(players):
        raise ValueError(f"game {record.game}: a bot appears more than once in one game")
    for fool in record.fools:
        if fool not in players:
            raise ValueError(f"game {record.game}: fool {fool!r} is not one of the players")
    if sorted(name for group in record.order for name in group) != sorted(players):
        raise ValueError(f"game {record.game}: the finishing order does not list every player once")
    if record.fools and sorted(record.fools) != sorted(record.order[-1]):
        raise ValueError(f"game {record.game}: the fools {record.fools} are not the last place of the order")
