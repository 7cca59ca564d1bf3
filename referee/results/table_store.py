"""The web arena's card tables in a league database: a person's seat against bots (``durak serve``'s table page,
played by the daemon). All their SQL is here.

The web server writes a table when an author opens it (within the caps, checked in the same transaction) and the
person's answers; the daemon writes the rest: the seat's protocol messages in order (the bytes a bot at that seat
would be sent), the open request's deadline, and at the end the stored game. A table's game is a row of the
league's ``tables`` tournament row (kind ``tables``, parent the league): no rating and no league query reads it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

import msgspec

from referee.results.league_store import LeagueReads, LeagueStore
from referee.results.rows import GAME_COLUMNS, StoredGame
from referee.results.stamps import stamp
from referee.results.store import StoreError

TableStatus = Literal["waiting", "playing", "over"]
#: The statuses a table holds sandboxed bots in (or soon will): what the caps count.
TABLE_OPEN: tuple[TableStatus, ...] = ("waiting", "playing")
#: The kind of the tournaments row that holds the tables' games.
TABLES_KIND = "tables"


class TableRefused(StoreError):
    """A table the caps do not allow now (the message says which)."""


@dataclass(frozen=True)
class NewTable:
    """What an author asks for: a ``variant``, their ``seat``, and the league versions at the other seats in seat
    order (the table's size is one more)."""

    author: str
    variant: str
    seat: int
    bots: list[str]


@dataclass(frozen=True)
class TableRow:
    """A card table: who opened it, the game (``variant``, ``players``), the person's ``seat`` and the bots (league
    versions) at the other seats in seat order; the open request's ``deadline`` (unix seconds) while it plays; the
    stored game's row id once it is over."""

    id: int
    tournament_id: int  # the league's
    author: str
    variant: str
    players: int
    seat: int
    bots: list[str]
    created: str
    status: TableStatus
    deadline: float | None
    game_id: int | None
    reason: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TableRow:
        return cls(id=row["id"], tournament_id=row["tournament_id"], author=row["author"], variant=row["variant"],
                   players=row["players"],
                   seat=row["seat"], bots=_bots(row["bots"]), created=row["created"],
                   status=row["status"], deadline=row["deadline"], game_id=row["game_id"], reason=row["reason"])


def _bots(text: object) -> list[str]:
    """A table's bots; none if the row (the web server's user's to write) holds anything else: such a table cannot
    be played, and the daemon ends it with why."""
    if not isinstance(text, str | bytes):
        return []
    try:
        return msgspec.json.decode(text, type=list[str])
    except (msgspec.DecodeError, RecursionError):
        return []


_TABLE_COLUMNS = "id, tournament_id, author, variant, players, seat, bots, created, status, deadline, game_id, reason"
_OPEN = ", ".join(f"'{status}'" for status in TABLE_OPEN)


class TableReads(LeagueReads):
    """A league's database with the card tables, read (:class:`~referee.results.league_store.LeagueReads` and
    more)."""

    # -- reads --------------------------------------------------------------------------------

    def table(self, table_id: int) -> TableRow | None:
        row = self._query_one(f"SELECT {_TABLE_COLUMNS} FROM human_tables WHERE id = ?", (table_id,))
        return None if row is None else TableRow.from_row(row)

    def tables(self, league_id: int, *statuses: TableStatus, author: str | None = None) -> list[TableRow]:
        """The league's tables in these statuses (all without), ``author``'s only if given, oldest first."""
        where, params = "tournament_id = ?", list[object]([league_id])
        if statuses:
            where += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += statuses
        if author is not None:
            where += " AND author = ?"
            params.append(author)
        return [TableRow.from_row(row) for row in self._query(
            f"SELECT {_TABLE_COLUMNS} FROM human_tables WHERE {where} ORDER BY id", tuple(params))]

    def table_messages(self, table_id: int, since: int = 0) -> list[str]:
        """The seat's protocol messages from number ``since`` on (0: all), as sent."""
        return [row["line"] for row in self._query(
            "SELECT line FROM human_messages WHERE table_id = ? AND n >= ? ORDER BY n", (table_id, since))]

    def last_table_message(self, table_id: int) -> str | None:
        """The seat's latest message (the open request, while one is open)."""
        row = self._query_one("SELECT line FROM human_messages WHERE table_id = ? ORDER BY n DESC LIMIT 1",
                              (table_id,))
        return None if row is None else str(row["line"])

    def is_resigned(self, table_id: int) -> bool:
        row = self._query_one("SELECT resigned FROM human_tables WHERE id = ?", (table_id,))
        return row is not None and bool(row["resigned"])

    def move(self, table_id: int, request: int) -> str | None:
        """The person's answer to ``request``, if it came."""
        row = self._query_one("SELECT action FROM human_moves WHERE table_id = ? AND request = ?", (table_id, request))
        return None if row is None else str(row["action"])


class TablePlay(TableReads):
    """What a person at a card table writes: the table opened, their moves, resigning (the web's writes of
    ``human_tables`` and ``human_moves``)."""

    # -- the web server's writes -------------------------------------------------------------

    def open_table(self, league_id: int, new: NewTable, *, per_author: int, total: int) -> TableRow:
        """A new table, waiting for the daemon; :raises TableRefused: its author has ``per_author`` open tables,
        or the arena ``total`` (checked and written in one transaction: two requests cannot both pass a cap)."""
        with self._transaction():
            mine, every = self._db.execute(
                f"SELECT COALESCE(SUM(author = ?), 0), COUNT(*) FROM human_tables WHERE status IN ({_OPEN})",
                (new.author,)).fetchone()
            if mine >= per_author:
                raise TableRefused(f"you have {mine} open tables, the most an author may have: finish one first")
            if every >= total:
                raise TableRefused(f"the arena has {every} open tables, the most it runs at once: try again later")
            cursor = self._db.execute(
                "INSERT INTO human_tables (tournament_id, author, variant, players, seat, bots, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (league_id, new.author, new.variant, len(new.bots) + 1, new.seat,
                 msgspec.json.encode(new.bots).decode(), stamp()))
        assert cursor.lastrowid is not None
        found = self.table(cursor.lastrowid)
        assert found is not None
        return found

    def resign_table(self, table_id: int) -> bool:
        """The person gives the game up (False: the table is not playing)."""
        with self._transaction():
            cursor = self._db.execute("UPDATE human_tables SET resigned = 1 WHERE id = ? AND status = 'playing'",
                                      (table_id,))
        return cursor.rowcount == 1

    def add_move(self, table_id: int, request: int, action: str) -> bool:
        """The person's answer to ``request`` (False: it was answered already; the first answer stands)."""
        with self._transaction():
            cursor = self._db.execute("INSERT OR IGNORE INTO human_moves VALUES (?, ?, ?, ?)",
                                      (table_id, request, action, stamp()))
        return cursor.rowcount == 1


class TableStore(TablePlay, LeagueStore):
    """The card tables as the daemon runs them (the seat's messages, a table started and ended with its game)."""

    # -- the daemon's writes ------------------------------------------------------------------

    def add_table_message(self, table_id: int, line: str, deadline: float | None) -> None:
        """The seat's next message, and the deadline of the request it asks (None: nothing asked now)."""
        with self._transaction():
            self._db.execute("INSERT INTO human_messages SELECT ?, COUNT(*), ? FROM human_messages WHERE table_id = ?",
                             (table_id, line, table_id))
            self._db.execute("UPDATE human_tables SET deadline = ? WHERE id = ?", (deadline, table_id))

    def start_table(self, table_id: int) -> None:
        with self._transaction():
            self._db.execute("UPDATE human_tables SET status = 'playing' WHERE id = ?", (table_id,))

    def end_table(self, table_id: int, game: StoredGame | None, reason: str = "") -> None:
        """The table is over: its game stored in the league's ``tables`` row (None: it could not be played, and
        ``reason`` says why), in one transaction."""
        with self._transaction():
            game_id = None
            if game is not None:
                league_id = self._db.execute("SELECT tournament_id FROM human_tables WHERE id = ?",
                                             (table_id,)).fetchone()[0]
                tables = self._tables_row(league_id)
                marks = ", ".join("?" * len(GAME_COLUMNS.split(", ")))
                cursor = self._db.execute(f"INSERT INTO games ({GAME_COLUMNS}, number) VALUES ({marks}, ?)",
                                          (*game.to_values(tables, stamp()), self._last_number(tables) + 1))
                game_id = cursor.lastrowid
            self._db.execute("UPDATE human_tables SET status = 'over', deadline = NULL, game_id = ?, reason = ?, "
                             "finished = ? WHERE id = ?", (game_id, reason, stamp(), table_id))

    def _tables_row(self, league_id: int) -> int:
        """The id of the league's ``tables`` tournament row, made on first use (inside the caller's transaction)."""
        row = self._db.execute("SELECT id FROM tournaments WHERE kind = ? AND parent = ?",
                               (TABLES_KIND, league_id)).fetchone()
        if row is not None:
            return int(row[0])
        league = self._db.execute("SELECT name, config_path, config, fingerprint, seed FROM tournaments WHERE id = ?",
                                  (league_id,)).fetchone()
        cursor = self._db.execute(
            "INSERT INTO tournaments (name, config_path, config, fingerprint, seed, created, kind, parent, active) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)", (f"{league[0]} tables", *tuple(league)[1:], stamp(), TABLES_KIND,
                                                   league_id))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

