"""The results database: SQLite (standard library), WAL mode, one writer, one transaction per slot.

The row types are in :mod:`referee.results.rows`, the schema and the file's mode in :mod:`referee.results.schema`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from protocol.records import ResultRecord
from referee.rating.outcomes import Outcomes, outcome_players, outcomes_from_rows
from referee.results.rows import (
    GAME_COLUMNS,
    TOURNAMENT_COLUMNS,
    TOURNAMENT_COLUMNS_3,
    BotRow,
    StoredDeal,
    StoredGame,
    StoredGameRow,
    StoredReplay,
    TournamentInfo,
    TournamentRow,
    decode_record,
    decode_stderr,
)
from referee.results.schema import (
    DATABASE_SUFFIXES,
    SCHEMA_VERSION,
    is_database,
    open_reader,
    open_writer,
    schema_version,
)
from referee.results.stamps import stamp

#: The columns :meth:`StoredReplay.from_row` reads besides ``move_us`` and ``number``.
_REPLAY_COLUMNS = "id, replay, stderr, record, deal_seed, rotation, game_index"

# What the rest of the code imports from here (the row types and file helpers moved out of this module).
__all__ = [
    "DATABASE_SUFFIXES",
    "SCHEMA_VERSION",
    "BotRow",
    "Store",
    "StoreError",
    "StoredDeal",
    "StoredGame",
    "StoredGameRow",
    "StoredReplay",
    "TournamentInfo",
    "TournamentRow",
    "decode_stderr",
    "is_database",
]


class StoreError(RuntimeError):
    """The database cannot be opened, read or written; the message is one line."""


class StoreReads:
    """What any process may read of a results database (:class:`Store` opens one; the web server's own class,
    :class:`~referee.results.web_queries.WebStore`, opens it as the web may), and the plumbing its reads and writes
    share. Its subclasses' names say who writes: a ``...Reads`` class reads, a ``...Store`` class adds the writes of
    the daemon and the CLI, and the writes a person's request makes are classes of their own, which the web's store
    takes (:data:`~referee.results.schema.WEB_WRITES`: the tables its connection may write).

    A results database: the one writer (``create=True``, the default: made if missing, migrated if old) or
    a reader (``create=False``: opened read-only, so a database the user may only read can be rated, exported
    and replayed). Use it as a context manager.

    A tournament row holds its config, fingerprint and seed; bot rows their identity (config settings and the
    hash of each of their files), last self-reported version and any disqualification with its reason; game
    rows the result record, the compressed replay, each seat's capped stderr, per-move times and the hash of
    each seat's bot files. Resume plays the slots whose games are not stored; a slot's games (one, unless the
    config plays series) are committed together, so a slot is either wholly stored or not at all. Games of a
    bot that was replaced and replayed move to ``superseded_games``: kept as history, never rated. Each game
    is numbered when stored (per tournament: 1, 2, ...) and keeps its number, superseded or not.

    The tournament seed (every deck follows from it) lives here and nowhere else, so the database is private:
    created mode 600, and an existing one (with its ``-wal``, ``-shm`` and ``-journal`` files, which SQLite
    creates with the database's own mode) tightened to owner-only whenever its owner opens it. A writer
    migrates an older schema in place; a newer schema is refused.
    """

    path: Path
    schema_version: int
    _db: sqlite3.Connection

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # -- tournaments and bots ------------------------------------------------------------

    def active_tournament(self) -> TournamentRow | None:
        row = self._query_one(f"SELECT {self._tournament_columns()} FROM tournaments WHERE active = 1 AND "
                              f"{self._kind_is('tournament', 'league')} ORDER BY id DESC LIMIT 1")
        return None if row is None else TournamentRow.from_row(row)

    def tournament(self, tournament_id: int | None = None) -> TournamentRow:
        """Tournament ``tournament_id`` (default: the active one).

        :raises StoreError: no such tournament (the message lists the ids there are).
        """
        if tournament_id is None:
            active = self.active_tournament()
            if active is None:
                raise StoreError(f"{str(self.path)!r} holds no tournament")
            return active
        row = self._query_one(f"SELECT {self._tournament_columns()} FROM tournaments WHERE id = ?", (tournament_id,))
        if row is None:
            ids = ", ".join(str(t.id) for t in self.tournaments()) or "none"
            raise StoreError(f"{str(self.path)!r} holds no tournament {tournament_id} (its tournaments: {ids}; "
                             "durak tournaments DB lists them)")
        return TournamentRow.from_row(row)

    def tournaments(self) -> list[TournamentInfo]:
        """Every tournament of the database, oldest first, with its stored games."""
        rows = self._query("SELECT t.id, t.name, t.created, t.config_path, t.active, "
                           "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) AS games FROM tournaments t "
                           "ORDER BY t.id")
        return [TournamentInfo.from_row(row) for row in rows]

    def bots(self, tournament_id: int) -> dict[str, BotRow]:
        # Schema 1 had no identity beside the hash, nor reasons: their defaults stand in.
        identity = "settings, files, reason" if self.schema_version >= 2 else \
            "'' AS settings, '{}' AS files, '' AS reason"
        rows = self._query(f"SELECT name, command, dir, sha256, version, disqualified, {identity} FROM bots "
                           "WHERE tournament_id = ?", (tournament_id,))
        return {row["name"]: BotRow.from_row(row) for row in rows}

    def bots_with_games(self, tournament_id: int) -> set[str]:
        """The bots that play in a stored game of the tournament."""
        rows = self._query("SELECT DISTINCT outcome FROM games WHERE tournament_id = ?", (tournament_id,))
        return {name for row in rows for name in outcome_players(row["outcome"])}

    # -- games ---------------------------------------------------------------------------

    def stored_slots(self, tournament_id: int) -> set[str]:
        rows = self._query("SELECT DISTINCT slot_key FROM games WHERE tournament_id = ?", (tournament_id,))
        return {row["slot_key"] for row in rows}

    def slot_outcomes(self, tournament_id: int) -> dict[str, list[str]]:
        """Each stored slot's games as outcome texts (:func:`~referee.rating.outcomes.outcome_text`), by game index."""
        rows = self._query("SELECT slot_key, outcome FROM games WHERE tournament_id = ? ORDER BY slot_key, game_index",
                           (tournament_id,))
        slots: dict[str, list[str]] = {}
        for row in rows:
            slots.setdefault(row["slot_key"], []).append(row["outcome"])
        return slots

    def count_games(self, tournament_id: int) -> int:
        row = self._query_one("SELECT COUNT(*) AS games FROM games WHERE tournament_id = ?", (tournament_id,))
        return int(row["games"]) if row else 0

    def record_texts(self, tournament_id: int | None = None) -> Iterator[str]:
        """The result records of a tournament (default: the active one) as stored JSON, in the order stored."""
        for row in self._stream(f"SELECT record FROM games WHERE tournament_id = ? {self._in_groups()} ORDER BY id",
                                (self._chosen(tournament_id),)):
            yield row["record"]

    def records(self, tournament_id: int | None = None) -> Iterator[ResultRecord]:
        """The result records of a tournament (default: the active one), in the order stored."""
        return (decode_record(text) for text in self.record_texts(tournament_id))

    def games(self, tournament_id: int | None = None) -> Iterator[StoredGameRow]:
        """A tournament's games (default: the active one's) with their numbers and per-move times, in the
        order stored (by id, which is also the order of their numbers)."""
        rows = self._stream(f"SELECT id, record, {self._move_us_column}, {self._number_column} FROM games "
                            f"WHERE tournament_id = ? {self._in_groups()} ORDER BY id", (self._chosen(tournament_id),))
        for place, row in enumerate(rows, 1):
            yield StoredGameRow.from_row(row, row["number"] or place)

    @property
    def _move_us_column(self) -> str:
        """The ``move_us`` column, NULL in a database of schema 1 (which kept no per-move times)."""
        return "move_us" if self.schema_version >= 2 else "NULL AS move_us"

    def _in_groups(self, *only: str) -> str:
        """A condition on games (``AND ...``): a league's games only once their deal group is over, complete or
        void (a game of a group in flight shows what a later rotation of its deal will be dealt), or with
        ``only``, of groups in those states (ratings: ``complete``). Nothing for a tournament's games (they have
        no group) nor before schema 4."""
        if self.schema_version < 4:
            return ""
        hidden = f"lg.status NOT IN ({', '.join(repr(status) for status in only)})" if only else "lg.status = 'open'"
        return ("AND NOT EXISTS (SELECT 1 FROM league_groups lg WHERE lg.tournament_id = games.tournament_id AND "
                f"lg.deal_key = games.deal_key AND {hidden})")

    def _tournament_columns(self) -> str:
        return TOURNAMENT_COLUMNS if self.schema_version >= 4 else TOURNAMENT_COLUMNS_3

    def _kind_is(self, *kinds: str) -> str:
        """A condition on a tournament row's kind (always true before schema 4, which had tournaments only)."""
        if self.schema_version < 4:
            return "1" if "tournament" in kinds else "0"
        return f"kind IN ({', '.join(repr(kind) for kind in kinds)})"

    @property
    def _number_column(self) -> str:
        """The stored ``number``; NULL before schema 3, read unmigrated (only a writer migrates): there a game's
        number is what those schemas computed, its place among the tournament's games by id (:meth:`games`,
        :meth:`replay`), as its own referee showed it; its superseded games have none."""
        return "number" if self.schema_version >= 3 else "NULL AS number"

    def _game_table_columns(self) -> list[str]:
        """The columns of the ``games`` table, by name."""
        return [row["name"] for row in self._query("PRAGMA table_info(games)")]

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
        # Straight from the cursor, not through _stream: its generator costs 3% more here, where rows are cheap
        # (20,000 games: 70 ms as tuples, 73 ms as rows by name, 75 ms by name through _stream; CPU time).
        with self._failing("read"):
            rows = self._db.execute(f"SELECT deal_key, outcome FROM games WHERE tournament_id = ? "
                                    f"{self._in_groups('complete')} ORDER BY id", (tournament_id,))
            return outcomes_from_rows(((row["deal_key"], row["outcome"]) for row in rows), disqualified)

    def replay(self, game: str, tournament_id: int | None = None) -> StoredReplay:
        """A stored game, by game key or by its number in its tournament (default: the active one), as
        ``durak games`` shows them. A number stays its game's for good: a superseded game's number finds that
        game in the history (:attr:`StoredReplay.superseded` says why it was), never its replacement."""
        tournament_id = self._chosen(tournament_id)
        row = self._query_one(f"SELECT id FROM games WHERE tournament_id = ? AND game_key = ? {self._in_groups()}",
                              (tournament_id, game))
        number = int(game) if game.isdigit() and 0 < int(game) < 1 << 62 else None
        if row is None and number is not None:
            if self.schema_version >= 3:
                row = self._query_one(f"SELECT id FROM games WHERE tournament_id = ? AND number = ? "
                                      f"{self._in_groups()}", (tournament_id, number))
                if row is None:
                    return self._superseded_replay(game, tournament_id, number)
            else:
                row = self._query_one("SELECT id FROM games WHERE tournament_id = ? ORDER BY id LIMIT 1 OFFSET ?",
                                      (tournament_id, number - 1))
        if row is None:
            raise self._no_game(game, tournament_id)
        found, = self.replays_by_id([row["id"]])
        if found.number is not None:
            return found
        counted = self._query_one("SELECT COUNT(*) AS number FROM games WHERE tournament_id = ? AND id <= ?",
                                  (tournament_id, row["id"]))
        return dataclasses.replace(found, number=int(counted["number"])) if counted else found

    def _superseded_replay(self, game: str, tournament_id: int, number: int) -> StoredReplay:
        row = self._query_one(f"SELECT {_REPLAY_COLUMNS}, move_us, number, superseded FROM superseded_games "
                              "WHERE tournament_id = ? AND number = ?", (tournament_id, number))
        if row is None:
            raise self._no_game(game, tournament_id)
        return dataclasses.replace(StoredReplay.from_row(row), superseded=row["superseded"] or "superseded")

    def _no_game(self, game: str, tournament_id: int) -> StoreError:
        return StoreError(f"no game {game!r} in tournament {tournament_id} of {str(self.path)!r} (durak games DB "
                          "lists them)")

    def replays_by_id(self, ids: list[int]) -> Iterator[StoredReplay]:
        """The stored games of the given game ids (row ids, as :class:`StoredGameRow` holds them), by id."""
        for start in range(0, len(ids), 500):
            batch = ids[start:start + 500]
            rows = self._query(f"SELECT {_REPLAY_COLUMNS}, {self._move_us_column}, {self._number_column} FROM games "
                               f"WHERE id IN ({','.join('?' * len(batch))}) ORDER BY id", tuple(batch))
            yield from (StoredReplay.from_row(row) for row in rows)

    def deals(self, tournament_id: int | None = None, *, stderr: bool = False) -> Iterator[StoredDeal]:
        """A tournament's games (default: the active one's) for ``durak export``, in the order stored: each
        record as stored (with each seat's stderr, if asked for), its compressed replay (for its deal) and what
        its bots' seeds derive from."""
        stderr_column = "stderr" if stderr else "NULL AS stderr"
        rows = self._stream(f"SELECT record, replay, deal_seed, rotation, game_index, {stderr_column} FROM games "
                            f"WHERE tournament_id = ? {self._in_groups()} ORDER BY id", (self._chosen(tournament_id),))
        for row in rows:
            yield StoredDeal.from_row(row)

    # -- plumbing ------------------------------------------------------------------------

    def _chosen(self, tournament_id: int | None) -> int:
        """``tournament_id``, or the active tournament's (-1, which matches nothing, if there is none)."""
        if tournament_id is not None:
            return tournament_id
        active = self.active_tournament()
        return active.id if active is not None else -1

    @contextlib.contextmanager
    def _failing(self, action: Literal["read", "write"]) -> Iterator[None]:
        """Turn an SQLite error inside into a one-line StoreError: ``cannot read|write PATH: why``."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"cannot {action} {str(self.path)!r}: {_why(exc)}") from None

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[sqlite3.Row]:
        """Every row of a query, read at once."""
        with self._failing("read"):
            rows: list[sqlite3.Row] = self._db.execute(sql, params).fetchall()
            return rows

    def _tuples(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row of a query as a plain tuple (a row read by name costs an object more: for a few hundred rows
        read by position)."""
        with self._failing("read"):
            cursor = self._db.execute(sql, params)
            cursor.row_factory = None
            rows: list[tuple[Any, ...]] = cursor.fetchall()
            return rows

    def _query_one(self, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Row | None:
        rows = self._query(sql, params)
        return rows[0] if rows else None

    def _stream(self, sql: str, params: tuple[object, ...]) -> Iterator[sqlite3.Row]:
        """The rows of a query as the caller reads them (a million games are never all in memory): the query
        runs at the first row asked for, and an error at any row is a StoreError."""
        with self._failing("read"):
            yield from self._db.execute(sql, params)

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error; an SQLite error becomes a StoreError."""
        with self._failing("write"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise


class Store(StoreReads):
    """A results database opened by its one writer (``create=True``) or a reader (``create=False``): see
    :class:`StoreReads`; with the tournament runner's writes (tournaments, bots, the games of each slot)."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}")
        try:
            self._db = open_writer(self.path) if create else open_reader(self.path)
            self.schema_version = schema_version(self._db)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {str(self.path)!r}: {_why(exc)}") from None
        if self.schema_version > SCHEMA_VERSION:
            self._db.close()
            raise StoreError(f"{str(self.path)!r} was made by a newer durak-referee (database schema "
                             f"{self.schema_version}; this one knows schema {SCHEMA_VERSION} and older)")

    def create_tournament(self, name: str, config_path: str, config_text: str, fingerprint: str,
                          seed: int) -> TournamentRow:
        """A new active tournament; any earlier one stays in the database, inactive (``--fresh``)."""
        with self._transaction():
            self._db.execute("UPDATE tournaments SET active = 0")
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, created, config_path, config, fingerprint, seed) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, stamp(), config_path, config_text, fingerprint, seed))
        assert cursor.lastrowid is not None
        return self.tournament(cursor.lastrowid)

    def save_bot(self, tournament_id: int, bot: BotRow) -> None:
        """Insert or replace a bot's row (a new bot, a new version accepted, or a new handshake version)."""
        with self._transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO bots (tournament_id, name, command, dir, sha256, version, disqualified, "
                "settings, files, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (tournament_id, *bot.to_values()))

    def disqualify(self, tournament_id: int, name: str, reason: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE bots SET disqualified = 1, reason = ? WHERE tournament_id = ? AND name = ?",
                             (reason, tournament_id, name))

    def supersede(self, tournament_id: int, names: list[str], why: str) -> int:
        """Move every stored game with a bot of ``names`` to ``superseded_games`` (history, never rated), so
        that their slots are played again; returns how many games moved."""
        rows = self._query("SELECT slot_key, outcome FROM games WHERE tournament_id = ?", (tournament_id,))
        slots = {row["slot_key"] for row in rows if not set(outcome_players(row["outcome"])).isdisjoint(names)}
        if not slots:
            return 0
        marks = ", ".join("?" * len(slots))
        columns = ", ".join(self._game_table_columns())  # by name: a migrated table has its own column order
        with self._transaction():
            self._db.execute(f"INSERT INTO superseded_games ({columns}, superseded) SELECT {columns}, ? FROM games "
                             f"WHERE tournament_id = ? AND slot_key IN ({marks})", (why, tournament_id, *slots))
            cursor = self._db.execute(f"DELETE FROM games WHERE tournament_id = ? AND slot_key IN ({marks})",
                                      (tournament_id, *slots))
        return cursor.rowcount

    def save_slot(self, tournament_id: int, games: list[StoredGame]) -> bool:
        """Store a slot's games in one transaction: all of them, or none if anything fails. A slot already
        stored is left as it is (a cluster may play a batch again after losing a worker): False."""
        return self.save_slots(tournament_id, [games])[0]

    def save_slots(self, tournament_id: int, slots: Sequence[list[StoredGame]]) -> list[bool]:
        """Store several slots' games (each slot's games have one ``slot_key``) in one transaction, all or none;
        per slot, whether it was stored (False: it was stored already, and is left as it is). One commit for a
        batch of slots keeps the single writer ahead of a cluster."""
        finished = stamp()
        rows = [[game.to_values(tournament_id, finished) for game in games] for games in slots]
        marks = ", ".join("?" * len(GAME_COLUMNS.split(", ")))
        saved = []
        with self._transaction():
            number = self._last_number(tournament_id)
            for games, slot_rows in zip(slots, rows, strict=True):
                if not games or self._db.execute(
                        "SELECT 1 FROM games WHERE tournament_id = ? AND slot_key = ? LIMIT 1",
                        (tournament_id, games[0].slot_key)).fetchone():
                    saved.append(False)
                    continue
                numbered = [(*values, number + i) for i, values in enumerate(slot_rows, 1)]
                number += len(numbered)
                self._db.executemany(f"INSERT INTO games ({GAME_COLUMNS}, number) VALUES ({marks}, ?)", numbered)
                saved.append(True)
        return saved

    def _last_number(self, tournament_id: int) -> int:
        """The highest number given in the tournament, to a game stored or superseded (0 for none): new games
        take the next ones, so none is given twice (read inside the writer's transaction)."""
        row = self._db.execute(
            "SELECT MAX((SELECT COALESCE(MAX(number), 0) FROM games WHERE tournament_id = ?), "
            "(SELECT COALESCE(MAX(number), 0) FROM superseded_games WHERE tournament_id = ?))",
            (tournament_id, tournament_id)).fetchone()
        return int(row[0])


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__

