"""What the web server reads from a league's database beyond the league's and arena's own queries: every game
with its deal group's status (the server decides who may see which), one game by number, and the server's own way
of opening the file (read-write, never created nor migrated: the daemon owns the file)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from protocol.records import ResultRecord
from referee.results.arena_store import ArenaStore
from referee.results.league_store import GroupStatus
from referee.results.rows import StoredReplay, TournamentRow, decode_record
from referee.results.schema import SCHEMA_VERSION, open_shared, schema_version
from referee.results.store import StoreError, _why

_GROUP = "LEFT JOIN league_groups lg ON lg.tournament_id = g.tournament_id AND lg.deal_key = g.deal_key"
_GAME_COLUMNS = f"g.id, g.number, g.record, g.deal_key, COALESCE(lg.status, 'complete') AS status FROM games g {_GROUP}"


@dataclass(frozen=True)
class LeagueGame:
    """A league game as the web lists it: its number, its record and its deal group's status (a game outside any
    group, which a league does not make, counts as complete)."""

    id: int
    number: int
    record: ResultRecord
    status: GroupStatus

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LeagueGame:
        return cls(id=row["id"], number=row["number"], record=decode_record(row["record"]), status=row["status"])


@dataclass(frozen=True)
class GameQuery:
    """Which league games to read: in SQL, so a page of a long league reads only its own rows.

    Attributes:
        with_open: the games of open groups too (the admin's view; nobody else may see them).
        players: only games one of these versions played (None: any; empty: none).
        verdict: only games with a verdict of this kind, or ``any``.
        table: only games of this many players.
    """

    with_open: bool = True
    players: tuple[str, ...] | None = None
    verdict: str | None = None
    table: int | None = None
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0

    def source(self, league_id: int) -> tuple[str, str, tuple[object, ...]]:
        """The rows to read (``FROM ...``, games ``g`` with their group ``lg``), their order, and the parameters.
        A bot's games are read from the seats' index, newest first by id (numbers follow ids in a league): a
        query ordered by the games' numbers walked that index over a million games (7.8 s) to find one bot's."""
        direction = "DESC" if self.newest_first else "ASC"
        if self.players is None:
            return f"FROM games g {_GROUP} WHERE g.tournament_id = ?", f"g.number {direction}", (league_id,)
        marks = ", ".join("?" * len(self.players)) or "NULL"
        return (f"FROM league_seats s JOIN games g ON g.id = s.game_id {_GROUP} WHERE s.tournament_id = ? AND "
                f"s.version IN ({marks})", f"s.game_id {direction}", (league_id, *self.players))

    def where(self) -> tuple[str, tuple[object, ...]]:
        """The conditions (``AND ...``) on ``games g`` joined with its group ``lg``, and their parameters."""
        parts: list[str] = [] if self.with_open else ["COALESCE(lg.status, 'complete') != 'open'"]
        params: list[object] = []
        if self.verdict == "any":
            parts.append("json_array_length(g.record, '$.verdicts') > 0")
        elif self.verdict:
            parts.append("EXISTS (SELECT 1 FROM json_each(g.record, '$.verdicts') WHERE "
                         "json_extract(value, '$.kind') = ?)")
            params.append(self.verdict)
        if self.table is not None:
            parts.append("json_array_length(g.record, '$.players') = ?")
            params.append(self.table)
        return "".join(f" AND {part}" for part in parts), tuple(params)


@dataclass(frozen=True)
class Meetings:
    """How often one of a bot's versions sat with ``opponent`` (a version) in shown games, and who was the fool."""

    opponent: str
    games: int
    fool: int  # games the bot was a fool of
    opponent_fool: int  # games the opponent was


def _seen(with_open: bool) -> str:
    return "" if with_open else " AND COALESCE(lg.status, 'complete') != 'open'"


_SEATS_GROUP = ("LEFT JOIN league_groups lg ON lg.tournament_id = s.tournament_id AND lg.deal_key = s.deal_key "
                "WHERE s.tournament_id = ? AND s.version IN ({marks})")


class WebStore(ArenaStore):
    """A league's database as ``durak serve`` opens it: read-write but never created nor migrated; a database of
    another schema, or with no league, is refused in one line."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}")
        try:
            self._db = open_shared(self.path)
            self.schema_version = schema_version(self._db)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {str(self.path)!r}: {_why(exc)}") from None
        if self.schema_version != SCHEMA_VERSION:
            self._db.close()
            raise StoreError(f"{str(self.path)!r} has database schema {self.schema_version}, the web server needs "
                             f"{SCHEMA_VERSION} (the league daemon, durak league run, migrates it)")

    def the_league(self) -> TournamentRow:
        """:raises StoreError: the database holds no league."""
        league = self.league()
        if league is None:
            raise StoreError(f"{str(self.path)!r} holds no league (durak league run CONFIG --db DB starts one)")
        return league

    def league_games(self, league_id: int, wanted: GameQuery | None = None) -> list[LeagueGame]:
        """The league's games ``wanted`` picks (default: all, open groups' included), by number (newest first if
        asked), a page of them if it says so."""
        wanted = wanted or GameQuery()
        rows, order, chosen = wanted.source(league_id)
        where, params = wanted.where()
        page = f"LIMIT {int(wanted.limit)} OFFSET {int(wanted.offset)}" if wanted.limit is not None else ""
        return [LeagueGame.from_row(row) for row in self._query(
            f"SELECT g.id, g.number, g.record, g.deal_key, COALESCE(lg.status, 'complete') AS status {rows} {where} "
            f"ORDER BY {order} {page}", (*chosen, *params))]

    def count_league_games(self, league_id: int, wanted: GameQuery) -> int:
        rows, _, chosen = wanted.source(league_id)
        where, params = wanted.where()
        row = self._query_one(f"SELECT COUNT(*) AS games {rows} {where}", (*chosen, *params))
        return int(row["games"]) if row else 0

    def meetings(self, league_id: int, versions: list[str], *, with_open: bool) -> list[Meetings]:
        """Each opponent version met by ``versions`` in games the viewer may see (open groups' only ``with_open``)."""
        marks = ", ".join("?" * len(versions)) or "NULL"
        rows = self._query(
            f"SELECT o.version AS opponent, COUNT(*) AS games, SUM(s.fool) AS fool, SUM(o.fool) AS opponent_fool "
            f"FROM league_seats s JOIN league_seats o ON o.game_id = s.game_id AND o.version NOT IN ({marks}) "
            f"{_SEATS_GROUP.format(marks=marks)}{_seen(with_open)} GROUP BY o.version",
            (*versions, league_id, *versions))
        return [Meetings(row["opponent"], row["games"], row["fool"], row["opponent_fool"]) for row in rows]

    def verdict_counts(self, league_id: int, versions: list[str], *, with_open: bool) -> dict[str, int]:
        """How many of ``versions``' shown games ended in a verdict against them, by kind."""
        marks = ", ".join("?" * len(versions)) or "NULL"
        rows = self._query(f"SELECT s.verdict AS kind, COUNT(*) AS games FROM league_seats s "
                           f"{_SEATS_GROUP.format(marks=marks)} AND s.verdict IS NOT NULL{_seen(with_open)} "
                           "GROUP BY s.verdict ORDER BY s.verdict", (league_id, *versions))
        return {row["kind"]: row["games"] for row in rows}

    def league_game(self, league_id: int, number: int) -> tuple[LeagueGame, StoredReplay] | None:
        """A game of the league by number, whatever its group's status, with its stored replay."""
        row = self._query_one(f"SELECT {_GAME_COLUMNS} WHERE g.tournament_id = ? AND g.number = ?",
                              (league_id, number))
        if row is None:
            return None
        replay, = self.replays_by_id([row["id"]])
        return LeagueGame.from_row(row), replay

