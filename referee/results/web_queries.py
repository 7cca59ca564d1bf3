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

_GAME_COLUMNS = ("g.id, g.number, g.record, g.deal_key, COALESCE(lg.status, 'complete') AS status FROM games g "
                 "LEFT JOIN league_groups lg ON lg.tournament_id = g.tournament_id AND lg.deal_key = g.deal_key")


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

    def league_games(self, league_id: int) -> list[LeagueGame]:
        """Every game of the league, open groups' included, by number."""
        return [LeagueGame.from_row(row) for row in self._query(
            f"SELECT {_GAME_COLUMNS} WHERE g.tournament_id = ? ORDER BY g.number", (league_id,))]

    def league_game(self, league_id: int, number: int) -> tuple[LeagueGame, StoredReplay] | None:
        """A game of the league by number, whatever its group's status, with its stored replay."""
        row = self._query_one(f"SELECT {_GAME_COLUMNS} WHERE g.tournament_id = ? AND g.number = ?",
                              (league_id, number))
        if row is None:
            return None
        replay, = self.replays_by_id([row["id"]])
        return LeagueGame.from_row(row), replay
