"""Unrated side games of a league: the queue of requests for them and what became of each (schema 6).

A side game is played by the league's daemon between the league's own games, on deals of its asker's own seed
domain, and never rated: a request's games go to a ``tournaments`` row of kind ``side`` whose ``parent`` is the
league, which no board, fit or league query reads (those read the league's row). The only kind so far is
``challenge`` (an author's bot against chosen opponents); the queue names no kind's particulars, so another kind
(a person's table against bots) can use it as it is. All SQL of side games is here.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

import msgspec

from referee.results.league_store import LeagueReads, LeagueStore
from referee.results.rows import StoredGameRow, StoredReplay, TournamentRow, decode_move_us
from referee.results.stamps import stamp
from referee.results.store import StoreError

SideKind = Literal["challenge"]
SideStatus = Literal["pending", "playing", "done", "void"]
#: The kind of a side request's tournament row.
SIDE_ROW_KIND = "side"


@dataclass(frozen=True)
class SideRow:
    """A request for unrated side games: ``games`` games of ``seats`` (versions, rotation 0's order, the asker's
    first), asked by ``author``; ``tournament_id`` is the row its games go to, once the daemon starts them."""

    id: int
    league_id: int
    kind: SideKind
    author: str
    seats: tuple[str, ...]
    games: int
    created: str
    status: SideStatus = "pending"
    result: str = ""
    tournament_id: int | None = None
    finished: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SideRow:
        """Tolerant of a row the web server's user wrote by hand: seats that do not decode are none, a count of games
        that is no integer is 0, and the daemon voids such a request (:mod:`referee.league.side`)."""
        try:
            seats = tuple(msgspec.json.decode(row["seats"], type=list[str]))
        except (msgspec.DecodeError, TypeError, RecursionError):
            seats = ()
        games = row["games"] if type(row["games"]) is int else 0
        return cls(id=row["id"], league_id=row["league_id"], kind=row["kind"], author=str(row["author"]),
                   seats=seats, games=games, created=row["created"],
                   status=row["status"], result=row["result"], tournament_id=row["tournament_id"],
                   finished=row["finished"])


class SideReads(LeagueReads):
    """A league's database with its queue of side games, read (:class:`~referee.results.league_store.LeagueReads`
    and more)."""

    def side(self, side_id: int) -> SideRow:
        """:raises StoreError: no such request."""
        row = self._query_one("SELECT * FROM side_requests WHERE id = ?", (side_id,))
        if row is None:
            raise StoreError(f"no side request {side_id} in {str(self.path)!r}")
        return SideRow.from_row(row)

    def sides(self, league_id: int, *, author: str | None = None, statuses: tuple[SideStatus, ...] = (),
              limit: int = 100) -> list[SideRow]:
        """The league's requests (``author``'s, or everyone's; of ``statuses``, or all): the newest ``limit`` of
        them, oldest first (the order the daemon plays them in)."""
        where, params = "", []
        if author is not None:
            where, params = " AND author = ?", [author]
        if statuses:
            where += f" AND status IN ({', '.join('?' * len(statuses))})"
            params += list(statuses)
        rows = self._query(f"SELECT * FROM (SELECT * FROM side_requests WHERE league_id = ?{where} ORDER BY id DESC "
                           "LIMIT ?) ORDER BY id", (league_id, *params, limit))
        return [SideRow.from_row(row) for row in rows]

    def next_side(self, league_id: int) -> SideRow | None:
        """The oldest request not carried out yet (one being played first: a restart resumes it)."""
        row = self._query_one("SELECT * FROM side_requests WHERE league_id = ? AND status IN ('pending', 'playing') "
                              "ORDER BY status = 'pending', id LIMIT 1", (league_id,))
        return None if row is None else SideRow.from_row(row)

    def side_usage(self, author: str, since: str) -> tuple[int, float]:
        """What ``author`` used since ``since`` (an ISO time): the games they asked for (every request, whatever
        became of it), and the CPU seconds of their side games stored since then: the sum of every seat's measured
        move times (the referee's clock from a request to its bot's reply, every bot of the table counted)."""
        row = self._query_one("SELECT SUM(games) AS games FROM side_requests WHERE author = ? AND created >= ?",
                              (author, since))
        asked = int(row["games"] or 0) if row is not None else 0
        micros = 0
        for game in self._query(
                "SELECT g.move_us FROM games g JOIN side_requests s ON s.tournament_id = g.tournament_id "
                "WHERE s.author = ? AND g.finished >= ?", (author, since)):
            micros += sum(sum(seat) for seat in decode_move_us(game["move_us"]) or [])
        return asked, micros / 1e6

    def side_usage_times(self, author: str, since: str) -> tuple[list[tuple[str, int]], list[tuple[str, float]]]:
        """What :meth:`side_usage` adds up, item by item, oldest first: each request's time and games, and each
        stored side game's time and CPU seconds (when each leaves the hour: a quota's ``Retry-After``)."""
        asked = [(str(row["created"]), int(row["games"])) for row in self._query(
            "SELECT created, games FROM side_requests WHERE author = ? AND created >= ? ORDER BY created",
            (author, since))]
        played = sorted((str(row["finished"]), sum(sum(seat) for seat in decode_move_us(row["move_us"]) or []) / 1e6)
                        for row in self._query(  # sorted here: in SQL, a temp B-tree over the author's side games
                            "SELECT g.finished, g.move_us FROM games g JOIN side_requests s ON s.tournament_id = "
                            "g.tournament_id WHERE s.author = ? AND g.finished >= ?", (author, since)))
        return asked, played

    def side_games(self, side: SideRow) -> list[StoredGameRow]:
        """A request's stored games, by number (through the games' index by number: by id, the order
        :meth:`games` reads a tournament in, took a temp B-tree)."""
        if side.tournament_id is None:
            return []
        return [StoredGameRow.from_row(row, row["number"]) for row in self._query(
            "SELECT id, record, move_us, number FROM games WHERE tournament_id = ? ORDER BY number",
            (side.tournament_id,))]

    def side_game(self, side: SideRow, number: int) -> StoredReplay | None:
        """One of a request's games, with its replay (None: no such game)."""
        if side.tournament_id is None:
            return None
        row = self._query_one("SELECT id FROM games WHERE tournament_id = ? AND number = ?",
                              (side.tournament_id, number))
        return None if row is None else next(self.replays_by_id([row["id"]]), None)


class SideRequests(SideReads):
    """A person's request for side games (the web's write of ``side_requests``)."""

    def add_side(self, league_id: int, kind: SideKind, author: str, seats: tuple[str, ...], games: int) -> SideRow:
        """Queue a request (the web's write; the daemon carries it out)."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO side_requests (league_id, kind, author, seats, games, created) VALUES (?, ?, ?, ?, ?, ?)",
                (league_id, kind, author, msgspec.json.encode(list(seats)).decode(), games, stamp()))
        assert cursor.lastrowid is not None
        return self.side(cursor.lastrowid)


class SideStore(SideRequests, LeagueStore):
    """The side games' queue as the daemon keeps it (it plays each request and stores its result)."""

    def start_side(self, side: SideRow, league: TournamentRow, seed: int) -> SideRow:
        """Give a pending request its tournament row (kind ``side``, the league its parent, ``seed`` its deals'
        domain) and mark it playing, in one transaction; a request started already is returned as it is."""
        if side.tournament_id is not None:
            return side
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, config_path, config, fingerprint, seed, created, kind, parent, active) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                (f"{league.name}: {side.kind} {side.id}", league.config_path,
                 msgspec.json.encode({"side": side.id, "seats": list(side.seats)}).decode(), league.fingerprint, seed,
                 stamp(), SIDE_ROW_KIND, league.id))
            self._db.execute("UPDATE side_requests SET status = 'playing', tournament_id = ? WHERE id = ?",
                             (cursor.lastrowid, side.id))
        return self.side(side.id)

    def finish_side(self, side_id: int, status: Literal["done", "void"], result: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE side_requests SET status = ?, result = ?, finished = ? WHERE id = ?",
                             (status, result, stamp(), side_id))

