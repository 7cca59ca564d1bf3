"""The results database: SQLite (standard library), WAL mode, one writer, one transaction per slot.

A tournament row holds its config, fingerprint and seed; bot rows their identity (config settings and the
hash of each of their files), last self-reported version and any disqualification with its reason; game rows
the result record, the compressed replay, each seat's capped stderr, per-move times and the hash of each
seat's bot files. Resume plays the slots whose games are not stored; a slot's games (one, unless the config
plays series) are committed together, so a slot is either wholly stored or not at all. Games of a bot that was
replaced and replayed move to ``superseded_games``: kept as history, never rated.

Readers (``create=False``) open the database read-only, so a database the user may only read can be rated,
exported and replayed. A writer migrates an older schema in place; a newer schema is refused.

The tournament seed (every deck follows from it) lives here and nowhere else, so the database is private:
created mode 600, and an existing one (with its ``-wal``, ``-shm`` and ``-journal`` files, which SQLite
creates with the database's own mode) tightened to owner-only whenever its owner opens it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import stat
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from protocol.records import ResultRecord, StderrChunk
from referee.rating.outcomes import Outcomes, outcome_players, outcome_text, outcomes_from_rows

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created TEXT NOT NULL,
    config_path TEXT NOT NULL,
    config TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    seed INTEGER NOT NULL,
    active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS bots (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    name TEXT NOT NULL,
    command TEXT NOT NULL,
    dir TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    version TEXT NOT NULL,
    disqualified INTEGER NOT NULL DEFAULT 0,
    settings TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '{}',
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (tournament_id, name)
);
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    slot_key TEXT NOT NULL,
    game_index INTEGER NOT NULL,
    game_key TEXT NOT NULL,
    deal_key TEXT NOT NULL,
    deal_seed INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    end_reason TEXT NOT NULL,
    outcome TEXT NOT NULL,
    record TEXT NOT NULL,
    replay BLOB NOT NULL,
    stderr BLOB NOT NULL,
    finished TEXT NOT NULL,
    move_us BLOB,
    bot_files TEXT NOT NULL DEFAULT '[]',
    UNIQUE (tournament_id, slot_key, game_index)
);
CREATE INDEX IF NOT EXISTS games_by_key ON games (game_key);
CREATE TABLE IF NOT EXISTS superseded_games AS SELECT *, '' AS superseded FROM games WHERE 0;
"""
#: Schema 1 -> 2: bot identity beside the file hash, disqualification reasons, per-move times, the files hash
#: of each game's bots, and the table of superseded games.
_MIGRATIONS = {
    1: """
ALTER TABLE bots ADD COLUMN settings TEXT NOT NULL DEFAULT '';
ALTER TABLE bots ADD COLUMN files TEXT NOT NULL DEFAULT '{}';
ALTER TABLE bots ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN move_us BLOB;
ALTER TABLE games ADD COLUMN bot_files TEXT NOT NULL DEFAULT '[]';
""",
}


class StoreError(RuntimeError):
    """The database cannot be opened, read or written; the message is one line."""


@dataclass(frozen=True)
class TournamentRow:
    id: int
    name: str
    config_path: str
    fingerprint: str
    seed: int  # secret until the tournament is over: `durak seed` prints it
    created: str = ""
    config: str = ""  # the config's text, as stored (it holds no seed)


@dataclass(frozen=True)
class TournamentInfo:
    """A tournament as ``durak tournaments`` lists it."""

    id: int
    name: str
    created: str
    config_path: str
    active: bool
    games: int


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


@dataclass(frozen=True)
class StoredGameRow:
    """A stored game as ``durak games`` lists it: its number in its tournament (1 = first stored)."""

    number: int
    record: ResultRecord
    move_us: list[list[int]] | None  # per seat, every decision's time in microseconds; None before schema 2
    id: int = 0  # the database's row id (game data is fetched by it: :meth:`Store.replays_by_id`)


@dataclass(frozen=True)
class StoredReplay:
    """A stored game to replay: its replay (JSON lines), each seat's stderr, its result record (strikes) and
    per-move times; ``number`` is its number in its tournament where the lookup knows it."""

    id: int
    replay: bytes
    stderr: list[list[StderrChunk]]
    record: ResultRecord
    move_us: list[list[int]] | None
    number: int | None = None


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


#: The files of a database: SQLite's journals are named after it.
DATABASE_SUFFIXES = ("", "-wal", "-shm", "-journal")


def make_private(path: str | Path) -> None:
    """Clear the group and other permission bits of a database and its journals, where they are ours."""
    for suffix in DATABASE_SUFFIXES:
        name = f"{path}{suffix}"
        try:
            info = os.stat(name)
            if info.st_uid == os.geteuid() and info.st_mode & 0o077:
                os.chmod(name, stat.S_IMODE(info.st_mode) & 0o700)
        except FileNotFoundError:
            continue


def is_database(path: str | Path) -> bool:
    """True if ``path`` is an SQLite file (by its magic header)."""
    try:
        with open(path, "rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


_stderr_decoder = msgspec.json.Decoder(list[list[StderrChunk] | str])


def decode_stderr(data: bytes) -> list[list[StderrChunk]]:
    """A game's stored stderr per seat: chunks by move, or (databases before chunks) one text per seat."""
    seats = _stderr_decoder.decode(data)
    return [([StderrChunk(0, text)] if text else []) if isinstance(text, str) else text for text in seats]


_TOURNAMENT_COLUMNS = "id, name, config_path, fingerprint, seed, created, config"


class Store:
    """A results database: the one writer (``create=True``, the default: made if missing, migrated if old) or
    a reader (``create=False``: opened read-only). Use it as a context manager."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}")
        try:
            if create:
                if not self.path.exists():
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
                make_private(self.path)
                self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA busy_timeout=5000")
                self._prepare_schema()
            else:
                with contextlib.suppress(OSError):  # read-only files or folders stay as they are
                    make_private(self.path)
                self._db = _open_read_only(self.path)
            self.schema_version = self._schema_version()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {str(self.path)!r}: {_why(exc)}") from None
        if self.schema_version > SCHEMA_VERSION:
            self._db.close()
            raise StoreError(f"{str(self.path)!r} was made by a newer durak-referee (database schema "
                             f"{self.schema_version}; this one knows schema {SCHEMA_VERSION} and older)")

    def _schema_version(self) -> int:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:
            return 0  # no meta table: an empty database, never written
        return int(row[0]) if row else 0

    def _prepare_schema(self) -> None:
        """Create the tables of a new database, or migrate an older schema (all in one transaction)."""
        version = self._schema_version()
        if version > SCHEMA_VERSION:
            return  # refused by the caller
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for step in range(version, SCHEMA_VERSION) if version else ():
                for statement in _MIGRATIONS[step].strip().split(";\n"):
                    self._db.execute(statement.rstrip(";"))
            for statement in _SCHEMA.strip().split(";\n"):
                self._db.execute(statement.rstrip(";"))
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- tournaments and bots ------------------------------------------------------------

    def active_tournament(self) -> TournamentRow | None:
        row = self._query_one(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE active = 1 ORDER BY id DESC "
                              "LIMIT 1")
        return None if row is None else TournamentRow(*row)

    def tournament(self, tournament_id: int | None = None) -> TournamentRow:
        """Tournament ``tournament_id`` (default: the active one).

        :raises StoreError: no such tournament (the message lists the ids there are).
        """
        if tournament_id is None:
            active = self.active_tournament()
            if active is None:
                raise StoreError(f"{str(self.path)!r} holds no tournament")
            return active
        row = self._query_one(f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE id = ?", (tournament_id,))
        if row is None:
            ids = ", ".join(str(t.id) for t in self.tournaments()) or "none"
            raise StoreError(f"{str(self.path)!r} holds no tournament {tournament_id} (its tournaments: {ids}; "
                             "durak tournaments DB lists them)")
        return TournamentRow(*row)

    def tournaments(self) -> list[TournamentInfo]:
        """Every tournament of the database, oldest first, with its stored games."""
        rows = self._query("SELECT t.id, t.name, t.created, t.config_path, t.active, "
                           "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) FROM tournaments t "
                           "ORDER BY t.id")
        return [TournamentInfo(r[0], r[1], r[2], r[3], bool(r[4]), int(r[5])) for r in rows]

    def create_tournament(self, name: str, config_path: str, config_text: str, fingerprint: str,
                          seed: int) -> TournamentRow:
        """A new active tournament; any earlier one stays in the database, inactive (``--fresh``)."""
        with self._transaction():
            self._db.execute("UPDATE tournaments SET active = 0")
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, created, config_path, config, fingerprint, seed) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, _now(), config_path, config_text, fingerprint, seed))
        assert cursor.lastrowid is not None
        return self.tournament(cursor.lastrowid)

    def bots(self, tournament_id: int) -> dict[str, BotRow]:
        if self.schema_version < 2:
            rows = self._query("SELECT name, command, dir, sha256, version, disqualified, '', '{}', '' FROM bots "
                               "WHERE tournament_id = ?", (tournament_id,))
        else:
            rows = self._query("SELECT name, command, dir, sha256, version, disqualified, settings, files, reason "
                               "FROM bots WHERE tournament_id = ?", (tournament_id,))
        return {r[0]: BotRow(r[0], msgspec.json.decode(r[1]), r[2], r[3], r[4], bool(r[5]), r[6],
                             msgspec.json.decode(r[7]), r[8]) for r in rows}

    def save_bot(self, tournament_id: int, bot: BotRow) -> None:
        """Insert or replace a bot's row (a new bot, a new version accepted, or a new handshake version)."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO bots (tournament_id, name, command, dir, sha256, version, disqualified, "
                "settings, files, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (tournament_id, bot.name, msgspec.json.encode(bot.command).decode(), bot.dir, bot.sha256,
                 bot.version, int(bot.disqualified), bot.settings, msgspec.json.encode(bot.files).decode(),
                 bot.reason))

    def disqualify(self, tournament_id: int, name: str, reason: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE bots SET disqualified = 1, reason = ? WHERE tournament_id = ? AND name = ?",
                             (reason, tournament_id, name))

    def supersede(self, tournament_id: int, names: list[str], why: str) -> int:
        """Move every stored game with a bot of ``names`` to ``superseded_games`` (history, never rated), so
        that their slots are played again; returns how many games moved."""
        slots = {key for key, text in self._query("SELECT slot_key, outcome FROM games WHERE tournament_id = ?",
                                                  (tournament_id,))
                 if not set(outcome_players(text)).isdisjoint(names)}
        if not slots:
            return 0
        marks = ", ".join("?" * len(slots))
        with self._transaction():
            self._db.execute(f"INSERT INTO superseded_games SELECT *, ? FROM games WHERE tournament_id = ? AND "
                             f"slot_key IN ({marks})", (why, tournament_id, *slots))
            cursor = self._db.execute(f"DELETE FROM games WHERE tournament_id = ? AND slot_key IN ({marks})",
                                      (tournament_id, *slots))
        return cursor.rowcount

    def bots_with_games(self, tournament_id: int) -> set[str]:
        """The bots that play in a stored game of the tournament."""
        rows = self._query("SELECT DISTINCT outcome FROM games WHERE tournament_id = ?", (tournament_id,))
        return {name for (text,) in rows for name in outcome_players(text)}

    # -- games ---------------------------------------------------------------------------

    def stored_slots(self, tournament_id: int) -> set[str]:
        rows = self._query("SELECT DISTINCT slot_key FROM games WHERE tournament_id = ?", (tournament_id,))
        return {row[0] for row in rows}

    def slot_outcomes(self, tournament_id: int) -> dict[str, list[str]]:
        """Each stored slot's games as outcome texts (:func:`~referee.rating.outcomes.outcome_text`), by game index."""
        rows = self._query("SELECT slot_key, outcome FROM games WHERE tournament_id = ? ORDER BY slot_key, game_index",
                           (tournament_id,))
        slots: dict[str, list[str]] = {}
        for key, outcome in rows:
            slots.setdefault(key, []).append(outcome)
        return slots

    def save_slot(self, tournament_id: int, games: list[StoredGame]) -> bool:
        """Store a slot's games in one transaction: all of them, or none if anything fails. A slot already
        stored is left as it is (a cluster may play a batch again after losing a worker): False."""
        return self.save_slots(tournament_id, [games])[0]

    def save_slots(self, tournament_id: int, slots: Sequence[list[StoredGame]]) -> list[bool]:
        """Store several slots' games (each slot's games have one ``slot_key``) in one transaction, all or none;
        per slot, whether it was stored (False: it was stored already, and is left as it is). One commit for a
        batch of slots keeps the single writer ahead of a cluster."""
        finished = _now()
        rows = [[_game_row(tournament_id, game, finished) for game in games] for games in slots]
        saved = []
        with self._transaction():
            for games, slot_rows in zip(slots, rows, strict=True):
                if not games or self._db.execute(
                        "SELECT 1 FROM games WHERE tournament_id = ? AND slot_key = ? LIMIT 1",
                        (tournament_id, games[0].slot_key)).fetchone():
                    saved.append(False)
                    continue
                self._db.executemany(
                    "INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, rotation, "
                    "end_reason, outcome, record, replay, stderr, finished, move_us, bot_files) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", slot_rows)
                saved.append(True)
        return saved

    def count_games(self, tournament_id: int) -> int:
        row = self._query_one("SELECT COUNT(*) FROM games WHERE tournament_id = ?", (tournament_id,))
        return int(row[0]) if row else 0

    def record_texts(self, tournament_id: int | None = None) -> Iterator[str]:
        """The result records of a tournament (default: the active one) as stored JSON, in the order stored."""
        tournament_id = self._chosen(tournament_id)
        try:
            cursor = self._db.execute("SELECT record FROM games WHERE tournament_id = ? ORDER BY id",
                                      (tournament_id,))
            for (text,) in cursor:
                yield text
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    def records_with_stderr(self, tournament_id: int | None = None) -> Iterator[ResultRecord]:
        """The result records of a tournament (default: the active one), each with its seats' stderr."""
        tournament_id = self._chosen(tournament_id)
        decoder = msgspec.json.Decoder(ResultRecord)
        try:
            cursor = self._db.execute("SELECT record, stderr FROM games WHERE tournament_id = ? ORDER BY id",
                                      (tournament_id,))
            for text, stderr in cursor:
                yield msgspec.structs.replace(decoder.decode(text), stderr=decode_stderr(zlib.decompress(stderr)))
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    def records(self, tournament_id: int | None = None) -> Iterator[ResultRecord]:
        """The result records of a tournament (default: the active one), in the order stored."""
        decoder = msgspec.json.Decoder(ResultRecord)
        return (decoder.decode(text) for text in self.record_texts(tournament_id))

    def games(self, tournament_id: int | None = None) -> Iterator[StoredGameRow]:
        """A tournament's games (default: the active one's) with their numbers and per-move times."""
        tournament_id = self._chosen(tournament_id)
        decoder = msgspec.json.Decoder(ResultRecord)
        try:
            cursor = self._db.execute(f"SELECT id, record, {self._move_us_column} FROM games WHERE tournament_id = ? "
                                      "ORDER BY id", (tournament_id,))
            for number, (gid, text, move_us) in enumerate(cursor, 1):
                yield StoredGameRow(number, decoder.decode(text), _move_us(move_us), gid)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    @property
    def _move_us_column(self) -> str:
        return "move_us" if self.schema_version >= 2 else "NULL"

    def disqualified(self, tournament_id: int | None = None) -> dict[str, str]:
        """The disqualified bots of a tournament (default: the active one) and why."""
        bots = self.bots(self._chosen(tournament_id))
        return {name: bot.reason or "failed too many games in a row" for name, bot in bots.items()
                if bot.disqualified}

    def outcomes(self, tournament_id: int | None = None) -> Outcomes:
        """The outcomes of a tournament's games (default: the active one) in columns, for ratings: read from
        the compact ``outcome`` column, so a million games need no JSON decoding."""
        tournament_id = self._chosen(tournament_id)
        disqualified = self.disqualified(tournament_id)
        try:
            cursor = self._db.execute("SELECT deal_key, outcome FROM games WHERE tournament_id = ? ORDER BY id",
                                      (tournament_id,))
            return outcomes_from_rows(cursor, disqualified)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    def replay(self, game: str, tournament_id: int | None = None) -> StoredReplay:
        """A stored game, by game key or by its number in its tournament (default: the active one), as
        ``durak games`` shows them."""
        tournament_id = self._chosen(tournament_id)
        row = self._query_one("SELECT id FROM games WHERE tournament_id = ? AND game_key = ?", (tournament_id, game))
        if row is None and game.isdigit() and int(game) > 0:
            row = self._query_one("SELECT id FROM games WHERE tournament_id = ? ORDER BY id LIMIT 1 OFFSET ?",
                                  (tournament_id, int(game) - 1))
        if row is None:
            raise StoreError(f"no game {game!r} in tournament {tournament_id} of {str(self.path)!r} (durak games DB "
                             "lists them)")
        found, = self.replays_by_id([row[0]])
        counted = self._query_one("SELECT COUNT(*) FROM games WHERE tournament_id = ? AND id <= ?",
                                  (tournament_id, row[0]))
        return dataclasses.replace(found, number=int(counted[0])) if counted else found

    def replays_by_id(self, ids: list[int]) -> Iterator[StoredReplay]:
        """The stored games of the given game ids (row ids, as :class:`StoredGameRow` holds them), by id."""
        decoder = msgspec.json.Decoder(ResultRecord)
        for start in range(0, len(ids), 500):
            batch = ids[start:start + 500]
            rows = self._query(f"SELECT id, replay, stderr, record, {self._move_us_column} FROM games WHERE id IN "
                               f"({','.join('?' * len(batch))}) ORDER BY id", tuple(batch))
            for gid, replay, stderr, record, move_us in rows:
                yield StoredReplay(gid, zlib.decompress(replay), decode_stderr(zlib.decompress(stderr)),
                                   decoder.decode(record), _move_us(move_us))

    # -- plumbing ------------------------------------------------------------------------

    def _chosen(self, tournament_id: int | None) -> int:
        """``tournament_id``, or the active tournament's (-1, which matches nothing, if there is none)."""
        if tournament_id is not None:
            return tournament_id
        active = self.active_tournament()
        return active.id if active is not None else -1

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    def _query_one(self, sql: str, params: tuple[object, ...] = ()) -> tuple[Any, ...] | None:
        rows = self._query(sql, params)
        return rows[0] if rows else None


def _game_row(tournament_id: int, g: StoredGame, finished: str) -> tuple[object, ...]:
    return (tournament_id, g.slot_key, g.game_index, g.record.game, g.record.deal, g.deal_seed, g.rotation,
            g.record.end, outcome_text(g.record), msgspec.json.encode(g.record).decode(),
            zlib.compress(g.replay, 6), zlib.compress(msgspec.json.encode(g.stderr), 6), finished,
            zlib.compress(msgspec.json.encode(g.move_us), 6), msgspec.json.encode(g.bot_files).decode())


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error, which becomes a StoreError."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __enter__(self) -> None:
        try:
            self._store._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write {str(self._store.path)!r}: {_why(exc)}") from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        db = self._store._db
        if exc_type is None:
            try:
                db.execute("COMMIT")
                return
            except sqlite3.Error as error:
                exc = error
        if db.in_transaction:
            db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"cannot write {str(self._store.path)!r}: {_why(exc)}") from None


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection; where SQLite cannot make the WAL index beside a database it may only read (a
    read-only folder), the file is read as immutable, which is right: nothing can be writing it then."""
    uri = path.resolve().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None,
                               check_same_thread=False)


_move_us_decoder = msgspec.json.Decoder(list[list[int]])


def _move_us(blob: bytes | None) -> list[list[int]] | None:
    return None if blob is None else _move_us_decoder.decode(zlib.decompress(blob))


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
