"""The results database: SQLite (standard library), WAL mode, one writer, one transaction per slot.

A tournament row holds its config, fingerprint and seed; bot rows their command, version and
file hash; game rows the result record, the compressed replay and each seat's capped stderr.
Resume plays the slots whose games are not stored; a slot's games (one, unless the config
plays series) are committed together, so a slot is either wholly stored or not at all.

The tournament seed (every deck follows from it) lives here and nowhere else, so the database is private:
created mode 600, and an existing one (with its ``-wal``, ``-shm`` and ``-journal`` files, which SQLite
creates with the database's own mode) tightened to owner-only whenever its owner opens it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from protocol.records import ResultRecord, StderrChunk
from referee.outcomes import Outcomes, outcome_text, outcomes_from_rows

SCHEMA_VERSION = 1
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
    UNIQUE (tournament_id, slot_key, game_index)
);
CREATE INDEX IF NOT EXISTS games_by_key ON games (game_key);
"""


class StoreError(RuntimeError):
    """The database cannot be opened, read or written; the message is one line."""


@dataclass(frozen=True)
class TournamentRow:
    id: int
    name: str
    config_path: str
    fingerprint: str
    seed: int  # secret until the tournament is over: `durak seed` prints it


@dataclass(frozen=True)
class BotRow:
    name: str
    command: list[str]
    dir: str
    sha256: str
    version: str
    disqualified: bool = False


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


class Store:
    """The one writer of a results database. Use it as a context manager."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}")
        try:
            if create and not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
            make_private(self.path)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=5000")
            if create:
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {str(self.path)!r}: {_why(exc)}") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- tournaments and bots ------------------------------------------------------------

    def active_tournament(self) -> TournamentRow | None:
        row = self._query_one("SELECT id, name, config_path, fingerprint, seed FROM tournaments "
                              "WHERE active = 1 ORDER BY id DESC LIMIT 1")
        return None if row is None else TournamentRow(*row)

    def create_tournament(self, name: str, config_path: str, config_text: str, fingerprint: str,
                          seed: int) -> TournamentRow:
        """A new active tournament; any earlier one stays in the database, inactive (``--fresh``)."""
        with self._transaction():
            self._db.execute("UPDATE tournaments SET active = 0")
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, created, config_path, config, fingerprint, seed) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, _now(), config_path, config_text, fingerprint, seed))
        assert cursor.lastrowid is not None
        return TournamentRow(cursor.lastrowid, name, config_path, fingerprint, seed)

    def bots(self, tournament_id: int) -> dict[str, BotRow]:
        rows = self._query("SELECT name, command, dir, sha256, version, disqualified FROM bots "
                           "WHERE tournament_id = ?", (tournament_id,))
        return {r[0]: BotRow(r[0], msgspec.json.decode(r[1]), r[2], r[3], r[4], bool(r[5])) for r in rows}

    def save_bot(self, tournament_id: int, bot: BotRow) -> None:
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO bots (tournament_id, name, command, dir, sha256, version, disqualified) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (tournament_id, bot.name, msgspec.json.encode(bot.command).decode(), bot.dir, bot.sha256,
                 bot.version, int(bot.disqualified)))

    def disqualify(self, tournament_id: int, name: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE bots SET disqualified = 1 WHERE tournament_id = ? AND name = ?",
                             (tournament_id, name))

    # -- games ---------------------------------------------------------------------------

    def stored_slots(self, tournament_id: int) -> set[str]:
        rows = self._query("SELECT DISTINCT slot_key FROM games WHERE tournament_id = ?", (tournament_id,))
        return {row[0] for row in rows}

    def save_slot(self, tournament_id: int, games: list[StoredGame]) -> bool:
        """Store a slot's games in one transaction: all of them, or none if anything fails. A slot already
        stored is left as it is (a cluster may play a batch again after losing a worker): False."""
        finished = _now()
        rows = [(tournament_id, g.slot_key, g.game_index, g.record.game, g.record.deal, g.deal_seed, g.rotation,
                 g.record.end, outcome_text(g.record), msgspec.json.encode(g.record).decode(),
                 zlib.compress(g.replay, 6), zlib.compress(msgspec.json.encode(g.stderr), 6), finished)
                for g in games]
        with self._transaction():
            if games and self._db.execute("SELECT 1 FROM games WHERE tournament_id = ? AND slot_key = ? LIMIT 1",
                                          (tournament_id, games[0].slot_key)).fetchone():
                return False
            self._db.executemany(
                "INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, rotation, "
                "end_reason, outcome, record, replay, stderr, finished) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return True

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

    def outcomes(self, tournament_id: int | None = None) -> Outcomes:
        """The outcomes of a tournament's games (default: the active one) in columns, for ratings: read from
        the compact ``outcome`` column, so a million games need no JSON decoding."""
        tournament_id = self._chosen(tournament_id)
        disqualified = [name for name, bot in self.bots(tournament_id).items() if bot.disqualified]
        try:
            cursor = self._db.execute("SELECT deal_key, outcome FROM games WHERE tournament_id = ? ORDER BY id",
                                      (tournament_id,))
            return outcomes_from_rows(cursor, disqualified)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read {str(self.path)!r}: {_why(exc)}") from None

    def replay(self, game: str) -> tuple[bytes, list[list[StderrChunk]]]:
        """A game's replay (JSON lines) and per-seat stderr, by game key or numeric id."""
        row = self._query_one("SELECT replay, stderr FROM games WHERE game_key = ? ORDER BY id DESC LIMIT 1",
                              (game,))
        if row is None and game.isdigit():
            row = self._query_one("SELECT replay, stderr FROM games WHERE id = ?", (int(game),))
        if row is None:
            raise StoreError(f"no game {game!r} in {str(self.path)!r}")
        return zlib.decompress(row[0]), decode_stderr(zlib.decompress(row[1]))

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


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
