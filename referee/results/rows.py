"""The rows of a results database as typed records, and the one encoder or decoder of each stored column.

Rows are read by column name (:class:`sqlite3.Row`), so a query's column order is no record's business.
"""

from __future__ import annotations

import sqlite3
import zlib
from dataclasses import dataclass, field

import msgspec

from protocol.records import ResultRecord, StderrChunk
from referee.rating.outcomes import outcome_text


@dataclass(frozen=True)
class TournamentRow:
    id: int
    name: str
    config_path: str
    fingerprint: str
    seed: int  # secret until the tournament is over: `durak seed` prints it
    created: str = ""
    config: str = ""  # the config's text, as stored (it holds no seed)
    kind: str = "tournament"  # or "league" (schema 4), or "finals" (a league's, its ``parent``)
    parent: int | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TournamentRow:
        """From a row of :data:`TOURNAMENT_COLUMNS`."""
        return cls(id=row["id"], name=row["name"], config_path=row["config_path"], fingerprint=row["fingerprint"],
                   seed=row["seed"], created=row["created"], config=row["config"], kind=row["kind"],
                   parent=row["parent"])


#: The columns :meth:`TournamentRow.from_row` reads; before schema 4 (read unmigrated) every row was a tournament.
TOURNAMENT_COLUMNS = "id, name, config_path, fingerprint, seed, created, config, kind, parent"
TOURNAMENT_COLUMNS_3 = "id, name, config_path, fingerprint, seed, created, config, 'tournament' AS kind, NULL AS parent"


@dataclass(frozen=True)
class TournamentInfo:
    """A tournament as ``durak tournaments`` lists it."""

    id: int
    name: str
    created: str
    config_path: str
    active: bool
    games: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TournamentInfo:
        """From a row of a tournament's columns and its count of stored ``games``."""
        return cls(id=row["id"], name=row["name"], created=row["created"], config_path=row["config_path"],
                   active=bool(row["active"]), games=int(row["games"]))


@dataclass(frozen=True)
class BotRow:
    """A bot of a tournament: ``settings`` (its config, JSON) and ``files`` (path -> SHA-256) identify it,
    ``sha256`` is the digest over its files; ``version`` is what it last said in its handshake (recorded,
    not part of its identity)."""

    name: str
    command: list[str]
    dir: str
    sha256: str
    version: str
    disqualified: bool = False
    settings: str = ""
    files: dict[str, str] = field(default_factory=dict)
    reason: str = ""  # why it was disqualified

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> BotRow:
        """From a row of the ``bots`` table (``command`` and ``files`` as JSON)."""
        return cls(name=row["name"], command=msgspec.json.decode(row["command"]), dir=row["dir"],
                   sha256=row["sha256"], version=row["version"], disqualified=bool(row["disqualified"]),
                   settings=row["settings"], files=msgspec.json.decode(row["files"]), reason=row["reason"])

    def to_values(self) -> tuple[object, ...]:
        """The values of the ``bots`` columns after ``tournament_id``, in the table's order."""
        return (self.name, msgspec.json.encode(self.command).decode(), self.dir, self.sha256, self.version,
                int(self.disqualified), self.settings, msgspec.json.encode(self.files).decode(), self.reason)


@dataclass(frozen=True)
class StoredGameRow:
    """A stored game as ``durak games`` lists it: its number in its tournament (1 = first stored)."""

    number: int
    record: ResultRecord
    move_us: list[list[int]] | None  # per seat, every decision's time in microseconds; None before schema 2
    id: int = 0  # the database's row id (game data is fetched by it: :meth:`Store.replays_by_id`)

    @classmethod
    def from_row(cls, row: sqlite3.Row, number: int) -> StoredGameRow:
        """From a row of a game's ``id``, ``record`` and ``move_us``."""
        return cls(number, decode_record(row["record"]), decode_move_us(row["move_us"]), row["id"])


@dataclass(frozen=True)
class SlotSeeds:
    """What the seeds of a stored game's bots derive from: its slot's deal seed and rotation, and its index in
    the slot's series (:func:`referee.results.reproduce.tournament_bot_seeds`)."""

    deal_seed: int
    rotation: int
    game_index: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SlotSeeds:
        return cls(row["deal_seed"], row["rotation"], row["game_index"])


@dataclass(frozen=True)
class StoredReplay:
    """A stored game to replay: its replay (JSON lines), each seat's stderr, its result record (strikes) and
    per-move times; ``number`` is its number in its tournament where the lookup knows it, ``superseded`` why
    the game was moved to history (empty for a game of the tournament)."""

    id: int
    replay: bytes
    stderr: list[list[StderrChunk]]
    record: ResultRecord
    move_us: list[list[int]] | None
    number: int | None = None
    seeds: SlotSeeds | None = None
    superseded: str = ""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredReplay:
        """From a row of a game's ``id``, ``replay``, ``stderr``, ``record``, ``move_us``, ``number`` (NULL: not
        stored) and :class:`SlotSeeds` columns."""
        return cls(row["id"], zlib.decompress(row["replay"]), decode_stderr(zlib.decompress(row["stderr"])),
                   decode_record(row["record"]), decode_move_us(row["move_us"]), row["number"],
                   SlotSeeds.from_row(row))


@dataclass(frozen=True)
class StoredDeal:
    """A stored game as ``durak export`` writes it: its result record (JSON, as stored), its replay still
    compressed (only its opening is read, for the deal), what its bots' seeds derive from, and each seat's
    stderr where it was asked for."""

    record: str
    replay: bytes
    seeds: SlotSeeds
    stderr: list[list[StderrChunk]] | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredDeal:
        """From a row of a game's ``record``, ``replay``, ``stderr`` (or NULL) and :class:`SlotSeeds` columns."""
        stderr = None if row["stderr"] is None else decode_stderr(zlib.decompress(row["stderr"]))
        return cls(row["record"], row["replay"], SlotSeeds.from_row(row), stderr)


@dataclass(frozen=True)
class StoredGame:
    """One game to store: its result record, replay (JSON lines) and each seat's stderr."""

    slot_key: str
    game_index: int
    deal_seed: int
    rotation: int
    record: ResultRecord
    replay: bytes
    stderr: list[list[StderrChunk]]
    move_us: list[list[int]] = field(default_factory=list)  # per seat, each decision's time (microseconds)
    bot_files: list[str] = field(default_factory=list)  # per seat, the SHA-256 of the bot's files

    def to_values(self, tournament_id: int, finished: str) -> tuple[object, ...]:
        """The values of :data:`GAME_COLUMNS`: the record as JSON with its outcome text beside it, the replay,
        stderr and move times compressed."""
        record = self.record
        return (tournament_id, self.slot_key, self.game_index, record.game, record.deal, self.deal_seed,
                self.rotation, record.end, outcome_text(record), msgspec.json.encode(record).decode(),
                zlib.compress(self.replay, 6), zlib.compress(msgspec.json.encode(self.stderr), 6), finished,
                zlib.compress(msgspec.json.encode(self.move_us), 6), msgspec.json.encode(self.bot_files).decode())


#: The columns :meth:`StoredGame.to_values` fills.
GAME_COLUMNS = ("tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, rotation, end_reason, outcome, "
                "record, replay, stderr, finished, move_us, bot_files")

_record_decoder = msgspec.json.Decoder(ResultRecord)
_stderr_decoder = msgspec.json.Decoder(list[list[StderrChunk] | str])
_move_us_decoder = msgspec.json.Decoder(list[list[int]])


def decode_record(text: str | bytes) -> ResultRecord:
    """A game's stored result record (JSON)."""
    return _record_decoder.decode(text)


def decode_stderr(data: bytes) -> list[list[StderrChunk]]:
    """A game's stored stderr per seat: chunks by move, or (databases before chunks) one text per seat."""
    seats = _stderr_decoder.decode(data)
    return [([StderrChunk(0, text)] if text else []) if isinstance(text, str) else text for text in seats]


def decode_move_us(blob: bytes | None) -> list[list[int]] | None:
    """A game's stored per-move times (compressed JSON), or None where the database has none (schema 1)."""
    return None if blob is None else _move_us_decoder.decode(zlib.decompress(blob))
