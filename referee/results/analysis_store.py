"""Post-game analyses asked for from the web (schema 12): the queue of requests and what became of each. All SQL of
the analyses is here.

``durak serve`` writes a request (an author's bot's seat of a league game, or a person's seat of their card table's
game); the league's daemon carries it out (:mod:`referee.league.analyses`) and stores the analysis as JSON (a
:class:`~referee.analysis.analyze.GameAnalysis`, which this layer does not decode: the store sits below the
analysis) with the CPU seconds it took, which the author's hourly quota counts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Literal

from referee.results.league_store import LeagueReads, LeagueStore
from referee.results.stamps import stamp
from referee.results.store import StoreError

AnalysisKind = Literal["game", "table"]  # a league game's seat, or a card table's person's seat
AnalysisStatus = Literal["pending", "running", "done", "failed"]
_COLUMNS = "id, league_id, author, kind, game_id, seat, playouts, seed, created, status, result, cpu_seconds, finished"


class AnalysisAsked(StoreError):
    """That seat of that game has an analysis asked for already (one per seat)."""


@dataclass(frozen=True)
class NewAnalysis:
    """What is asked: ``seat`` of the stored game ``game_id`` (a ``games`` row), by ``author``, judged with
    ``playouts`` worlds per decision from ``seed``."""

    author: str
    kind: AnalysisKind
    game_id: int
    seat: int
    playouts: int
    seed: int


@dataclass(frozen=True)
class AnalysisRow:
    """A request and what became of it; ``analysis`` (JSON) only when read with it and done."""

    id: int
    league_id: int
    author: str
    kind: AnalysisKind
    game_id: int
    seat: int
    playouts: int
    seed: int
    created: str
    status: AnalysisStatus
    result: str
    cpu_seconds: float
    finished: str | None
    analysis: bytes | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> AnalysisRow:
        text = row["analysis"] if "analysis" in row.keys() else None  # noqa: SIM118 (a Row has no __contains__)
        return cls(id=row["id"], league_id=row["league_id"], author=str(row["author"]), kind=row["kind"],
                   game_id=row["game_id"], seat=row["seat"], playouts=row["playouts"], seed=row["seed"],
                   created=row["created"], status=row["status"], result=row["result"],
                   cpu_seconds=float(row["cpu_seconds"]), finished=row["finished"],
                   analysis=text.encode() if isinstance(text, str) else text)


class AnalysisReads(LeagueReads):
    """A league's database with its queue of analyses, read (:class:`~referee.results.league_store.LeagueReads`
    and more)."""

    def analysis(self, analysis_id: int, *, with_result: bool = False) -> AnalysisRow | None:
        columns = _COLUMNS + (", analysis" if with_result else "")
        row = self._query_one(f"SELECT {columns} FROM analysis_requests WHERE id = ?", (analysis_id,))
        return None if row is None else AnalysisRow.from_row(row)

    def analyses_of(self, game_id: int, *, with_result: bool = True) -> list[AnalysisRow]:
        """Every request for the game ``game_id`` (a ``games`` row), by seat."""
        columns = _COLUMNS + (", analysis" if with_result else "")
        return [AnalysisRow.from_row(row) for row in self._query(
            f"SELECT {columns} FROM analysis_requests WHERE game_id = ? ORDER BY seat", (game_id,))]

    def pending_analyses(self, league_id: int) -> list[AnalysisRow]:
        """The requests not carried out yet, oldest first (the daemon's order, each author within their quota)."""
        return [AnalysisRow.from_row(row) for row in self._query(
            f"SELECT {_COLUMNS} FROM analysis_requests WHERE league_id = ? AND status = 'pending' ORDER BY id",
            (league_id,))]

    def analysis_usage_times(self, author: str, since: str) -> tuple[list[str], list[tuple[str, float]]]:
        """What ``author`` used since ``since`` (an ISO time), oldest first: when each request was made (whatever
        became of it), and each carried-out one's end and CPU seconds (when each leaves the hour: a quota's
        ``Retry-After``)."""
        asked = [str(row["created"]) for row in self._query(
            "SELECT created FROM analysis_requests WHERE author = ? AND created >= ? ORDER BY created",
            (author, since))]
        used = [(str(row["finished"]), float(row["cpu_seconds"])) for row in self._query(
            "SELECT finished, cpu_seconds FROM analysis_requests WHERE author = ? AND finished >= ? ORDER BY finished",
            (author, since))]
        return asked, used


class AnalysisRequests(AnalysisReads):
    """An author's request for a post-game analysis (the web's write of ``analysis_requests``)."""

    def add_analysis(self, league_id: int, new: NewAnalysis) -> AnalysisRow:
        """Queue a request (the web's write). :raises AnalysisAsked: that seat of that game is asked for already."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO analysis_requests (league_id, author, kind, game_id, seat, playouts, seed, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (league_id, new.author, new.kind, new.game_id, new.seat, new.playouts, new.seed, stamp()))
        if cursor.rowcount == 0:
            raise AnalysisAsked(f"seat {new.seat} of that game is analyzed already")
        assert cursor.lastrowid is not None
        found = self.analysis(cursor.lastrowid)
        assert found is not None
        return found


class AnalysisStore(AnalysisRequests, LeagueStore):
    """The analyses as the daemon makes them (each started, done or failed, and queued again after a restart)."""

    def start_analysis(self, analysis_id: int) -> None:
        with self._transaction():
            self._db.execute("UPDATE analysis_requests SET status = 'running' WHERE id = ?", (analysis_id,))

    def requeue_analyses(self, league_id: int) -> int:
        """Put back the requests a stopped daemon left running (their work was lost with it); how many."""
        with self._transaction():
            return self._db.execute("UPDATE analysis_requests SET status = 'pending' WHERE league_id = ? AND "
                                    "status = 'running'", (league_id,)).rowcount

    def finish_analysis(self, analysis_id: int, analysis: bytes | None, cpu_seconds: float, result: str = "") -> None:
        """Store the analysis (JSON; None: it failed, ``result`` says why) and what it took."""
        with self._transaction():
            self._db.execute(
                "UPDATE analysis_requests SET status = ?, analysis = ?, cpu_seconds = ?, result = ?, finished = ? "
                "WHERE id = ?", ("failed" if analysis is None else "done",
                                 None if analysis is None else analysis.decode(), cpu_seconds, result, stamp(),
                                 analysis_id))
