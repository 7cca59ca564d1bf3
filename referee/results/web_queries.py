"""What the web server reads from a league's database beyond the league's and arena's own queries: every game
with its deal group's status (the server decides who may see which), one game by number, and the server's own way
of opening the file (read-write, never created nor migrated: the daemon owns the file)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import msgspec

from protocol.records import Verdict
from referee.results.analysis_store import AnalysisRequests
from referee.results.arena_store import ArenaVisits
from referee.results.league_store import GroupStatus, LeagueRequests
from referee.results.packed import unpack
from referee.results.rows import TournamentRow
from referee.results.schema import SCHEMA_VERSION, open_shared, schema_version
from referee.results.side_store import SideRequests
from referee.results.store import StoreError, _why
from referee.results.table_store import TablePlay


def _group_of(rows: str) -> str:
    """The join of ``rows`` (games ``g``, seats ``s``: anything with a league and a deal key) with their deal group
    ``lg`` (none for a game outside any group)."""
    return f"LEFT JOIN league_groups lg ON lg.tournament_id = {rows}.tournament_id AND lg.deal_key = {rows}.deal_key"


_GROUP = _group_of("g")
_GAME_FIELDS = "g.id, g.number, g.record, g.deal_key, COALESCE(lg.status, 'complete') AS status"
_GAME_COLUMNS = f"{_GAME_FIELDS} FROM games g {_GROUP}"
#: The most ids one query names (SQLite's own bound on a statement's parameters is 32,766).
_IDS_AT_ONCE = 500


class ListedRecord(msgspec.Struct, frozen=True):
    """What a list of games shows of a game's stored record (:class:`~protocol.records.ResultRecord`): the rest
    (rules, times, strikes) is skipped, not decoded. A page of 50 games decoded whole records at 4.7 us each, these
    at 1.9 (the bench's records)."""

    game: str
    deal: str
    players: list[str]
    fools: list[str]
    end: str
    verdicts: list[Verdict] = []


_listed_decoder = msgspec.json.Decoder(ListedRecord)


@dataclass(frozen=True)
class LeagueGame:
    """A league game as the web lists it: its number, what a list shows of its record and its deal group's status
    (a game outside any group, which a league does not make, counts as complete)."""

    id: int
    number: int
    record: ListedRecord
    status: GroupStatus

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LeagueGame:
        return cls(id=row["id"], number=row["number"], record=_listed_decoder.decode(row["record"]),
                   status=row["status"])


@dataclass(frozen=True)
class ShownGame:
    """A league game as its replay shows it: its line, its kept public view (JSON) if made, and whether an analysis
    of it was asked for (then its replay shows the analyses the viewer may see, and is built)."""

    game: LeagueGame
    view: bytes | None
    analysed: bool


@dataclass(frozen=True)
class GameQuery:
    """Which league games to read: in SQL, each page through an index, so that a page's cost does not grow with
    the games stored (tests/test_query_plans.py holds every query of the web to that).

    Attributes:
        with_open: the games of open groups too (the admin's view; nobody else may see them).
        players: only games one of these versions played (None: any; empty: none).
        verdict: only games with a verdict of this kind, or ``any``.
        table: only games of this many players.
        before: only games numbered below this (the next page of a list newest first: a keyset, not an offset).
        after: only games numbered above this (the page before, read oldest first and turned round).
    """

    with_open: bool = True
    players: tuple[str, ...] | None = None
    verdict: str | None = None
    table: int | None = None
    newest_first: bool = False
    limit: int | None = None
    offset: int = 0
    before: int | None = None
    after: int | None = None

    def source(self, league_id: int) -> tuple[str, str, tuple[object, ...]]:
        """The rows of a list without a bot (``FROM ...``, games ``g`` with their group ``lg``, the filters'
        table first where there is one), the column that orders them (a game's number), and the parameters.
        Each filter is an index's range: verdict kinds in ``league_verdicts``, table sizes and whether a game
        has verdicts in ``league_games`` (kept as games are stored), never a JSON function over every record."""
        if self.verdict not in (None, "any"):
            return (f"FROM league_verdicts v JOIN games g ON g.id = v.game_id {_GROUP} WHERE v.tournament_id = ? "
                    "AND v.kind = ?", "v.number", (league_id, self.verdict))
        if self.verdict == "any" or self.table is not None:
            return (f"FROM league_games x JOIN games g ON g.id = x.game_id {_GROUP} WHERE x.tournament_id = ?",
                    "x.number", (league_id,))
        return f"FROM games g {_GROUP} WHERE g.tournament_id = ?", "g.number", (league_id,)

    def where(self, *, open_groups: bool = False) -> tuple[str, tuple[object, ...]]:
        """The conditions (``AND ...``) on ``games g`` joined with its group ``lg``, and their parameters: the
        filters the source has not applied (``open_groups``: the caller reads the games of open groups alone)."""
        parts: list[str] = [] if self.with_open or open_groups else [_SHOWN.removeprefix(" AND ")]
        params: list[object] = []
        if self.verdict == "any":
            parts.append("x.verdicts > 0" if self.players is None and not open_groups else
                         "EXISTS (SELECT 1 FROM league_verdicts v WHERE v.game_id = g.id)")
        elif self.verdict and (self.players is not None or open_groups):
            parts.append("EXISTS (SELECT 1 FROM league_verdicts v WHERE v.game_id = g.id AND v.kind = ?)")
            params.append(self.verdict)
        if self.table is not None:
            # On the source's own row where it is ``league_games``: through its index by size, or with any
            # verdict through the index of the games with verdicts by size (schema 14), never a row per game.
            on_sizes = self.players is None and self.verdict in (None, "any") and not open_groups
            parts.append("x.players = ?" if on_sizes else
                         "(SELECT players FROM league_games WHERE game_id = g.id) = ?")
            params.append(self.table)
        return "".join(f" AND {part}" for part in parts), tuple(params)


@dataclass(frozen=True)
class Meetings:
    """How often a bot's versions sat with ``opponent`` (another bot's) in shown games, and who was the fool."""

    opponent: str
    games: int
    fool: int  # games the bot was a fool of
    opponent_fool: int  # games the opponent was


#: The games of a league's open groups (``x``, rows of ``league_games``, with the group ``lg``): few, the groups in
#: flight, found through the groups' status (``CROSS JOIN``: the groups first, whatever the planner guesses without
#: statistics; from the games first, it read every game of the league). What a page that may not show them
#: subtracts from a stored count.
_OPEN_GROUPS = ("FROM league_groups lg CROSS JOIN league_games x ON x.tournament_id = lg.tournament_id AND "
                "x.deal_key = lg.deal_key{joined} WHERE lg.tournament_id = ? AND lg.status = 'open'")
_OPEN_GAMES = _OPEN_GROUPS.format(joined=" JOIN games g ON g.id = x.game_id")


_SHOWN = " AND COALESCE(lg.status, 'complete') != 'open'"


@dataclass(frozen=True)
class Marks:
    """Some of the database's read marks (schema 10's ``read_marks``, raised by triggers as what a page shows
    changes): their values, in the order asked for (0: never raised), and when the latest of them moved (unix
    seconds; 0.0: never)."""

    values: tuple[int, ...]
    changed: float


class WebStore(ArenaVisits, SideRequests, TablePlay, AnalysisRequests, LeagueRequests):
    """A league's database as ``durak serve`` opens it: read-write but never created nor migrated; a database of
    another schema, or with no league, is refused in one line. It reads, and writes what a person's request writes
    (the classes it takes: :data:`~referee.results.schema.WEB_WRITES` are the tables its connection may write); the
    daemon's writes are not its methods, and its connection could not make them."""

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

    def marks(self, names: tuple[str, ...]) -> Marks:
        """The read marks ``names`` (each a primary key's seek: a page's check costs the same however big the
        league)."""
        rows = {row["name"]: row for row in self._query(
            f"SELECT name, value, changed FROM read_marks WHERE name IN ({', '.join('?' * len(names)) or 'NULL'})",
            names)}
        return Marks(tuple(int(rows[name]["value"]) if name in rows else 0 for name in names),
                     max((float(row["changed"]) for row in rows.values()), default=0.0))

    def settled_below(self, league_id: int) -> int:
        """A game number below which every game of the league is in a group over (complete or void) for good: the
        lowest number stored in a group in flight, or past the newest game. No game below it will ever change whether
        it is shown (a game stored later is numbered above every stored one), so a page of games below it changes only
        when a game is deleted (a few seeks: the groups in flight, and the games' numbers' index)."""
        row = self._query_one(f"SELECT COALESCE((SELECT MIN(g.number) {_OPEN_GAMES}), (SELECT number FROM games "
                              "WHERE tournament_id = ? ORDER BY number DESC LIMIT 1) + 1, 1) AS below",
                              (league_id, league_id))
        return int(row["below"]) if row else 1

    def all_marks(self) -> dict[str, int]:
        """Every read mark's value, by name (one small table: a row per kind of fact and per bot)."""
        return {row["name"]: int(row["value"]) for row in self._query("SELECT name, value FROM read_marks", ())}

    @property
    def reading(self) -> bool:
        """Whether a read transaction (:meth:`snapshot`) is open."""
        return self._db.in_transaction

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: every query inside sees the database as of its first (the marks a page is built
        under and the rows it shows agree, whatever the daemon commits meanwhile). Short: a page's queries."""
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    def the_league(self) -> TournamentRow:
        """:raises StoreError: the database holds no league."""
        league = self.league()
        if league is None:
            raise StoreError(f"{str(self.path)!r} holds no league (durak league run CONFIG --db DB starts one)")
        return league

    def league_games(self, league_id: int, wanted: GameQuery | None = None) -> list[LeagueGame]:
        """The league's games ``wanted`` picks (default: all, open groups' included), by number (newest first if
        asked), a page of them if it says so (``before``/``after``: the games past a number, through the index;
        ``offset``: counted from the end)."""
        wanted = wanted or GameQuery()
        if (wanted.players is None and wanted.newest_first and wanted.offset and wanted.limit is not None
                and wanted.before is None and wanted.after is None):
            first = self._number_at(league_id, wanted, wanted.offset)
            if first is None:
                return []
            wanted = replace(wanted, offset=0, before=first + 1)  # the page by number, read as a keyset
        newest_first = wanted.newest_first if wanted.after is None else False
        if wanted.players is not None:
            games = self._bots_games(league_id, wanted, newest_first)
        else:
            rows, key, chosen = wanted.source(league_id)
            where, params = wanted.where()
            bounds, marks = _bounds(key, wanted)
            page = _page(wanted)
            games = [LeagueGame.from_row(row) for row in self._query(
                f"SELECT g.id, g.number, g.record, g.deal_key, COALESCE(lg.status, 'complete') AS status {rows} "
                f"{where}{bounds} ORDER BY {key} {'DESC' if newest_first else 'ASC'} {page}",
                (*chosen, *params, *marks))]
        return games[::-1] if wanted.after is not None and wanted.newest_first else games

    def _number_at(self, league_id: int, wanted: GameQuery, skip: int) -> int | None:
        """The number of the game after the newest ``skip`` that ``wanted`` shows (None: there are no more): where
        a page asked for by its number alone begins. Counted down a narrow index (a filter's own, or the games'
        numbers), never through the game rows; without filters, where the numbers run without a gap (a league's
        do), computed. The open groups' games, when not shown, are stepped over: few, and the newest."""
        hidden = set() if wanted.with_open else {int(row["number"]) for row in self._query(
            f"SELECT g.number AS number {_OPEN_GAMES}{wanted.where(open_groups=True)[0]}",
            (league_id, *wanted.where(open_groups=True)[1]))}
        at = skip
        while True:
            number = self._nth_number(league_id, wanted, at)
            if number is None:
                return None
            stepped = sum(other >= number for other in hidden)  # shown games before it: at - stepped
            if number not in hidden and at - stepped == skip:
                return number
            at = skip + stepped

    def _nth_number(self, league_id: int, wanted: GameQuery, at: int) -> int | None:
        """The number of the game ``at`` places below the newest of those ``wanted``'s filters pick, open groups'
        included."""
        if wanted.verdict not in (None, "any"):
            size = " AND (SELECT players FROM league_games WHERE game_id = v.game_id) = ?" if wanted.table else ""
            sql = f"SELECT number FROM league_verdicts v WHERE tournament_id = ? AND kind = ?{size}"
            params: tuple[object, ...] = (league_id, wanted.verdict, *(() if wanted.table is None else
                                                                       (wanted.table,)))
        elif wanted.verdict == "any":
            size = " AND +players = ?" if wanted.table else ""
            sql = f"SELECT number FROM league_games WHERE tournament_id = ? AND verdicts > 0{size}"
            params = (league_id, *(() if wanted.table is None else (wanted.table,)))
        elif wanted.table is not None:
            sql, params = "SELECT number FROM league_games WHERE tournament_id = ? AND players = ?", (
                league_id, wanted.table)
        else:
            # The lowest and highest numbers: a seek each (MIN and MAX in one SELECT read every entry between).
            span = self._query_one("SELECT (SELECT number FROM games WHERE tournament_id = ? ORDER BY number LIMIT 1) "
                                   "AS low, (SELECT number FROM games WHERE tournament_id = ? ORDER BY number DESC "
                                   "LIMIT 1) AS high, "
                                   "(SELECT COALESCE(SUM(games), 0) FROM league_game_counts WHERE tournament_id = ?) "
                                   "AS games", (league_id, league_id, league_id))
            if span is not None and span["high"] is not None and span["high"] - span["low"] + 1 == span["games"]:
                return int(span["high"]) - at if at < span["games"] else None
            sql, params = "SELECT number FROM games WHERE tournament_id = ?", (league_id,)
        row = self._query_one(f"{sql} ORDER BY number DESC LIMIT 1 OFFSET ?", (*params, at))
        return int(row["number"]) if row else None

    def _bots_games(self, league_id: int, wanted: GameQuery, newest_first: bool) -> list[LeagueGame]:
        """A bot's games: each version's ids from the seats' index (newest first by id: numbers follow ids in a
        league), as many as the page needs, merged, and then the page's games read (one query over all the
        versions read every game of the bot to sort them: 34 ms at a million games for a bot of two versions; each
        version's whole games, merged, read and decoded twice the games a page shows)."""
        assert wanted.players is not None
        where, params = wanted.where()
        bounds, marks = "", tuple[object, ...]()
        if wanted.before is not None:
            bounds, marks = " AND s.game_id < ?", (self._game_id_from(league_id, wanted.before, above=True),)
        if wanted.after is not None:
            bounds, marks = " AND s.game_id > ?", (self._game_id_from(league_id, wanted.after, above=False),)
        page = (f"LIMIT {int(wanted.limit) + int(wanted.offset)}" if wanted.limit is not None and
                wanted.after is None and wanted.before is None else _page(replace(wanted, offset=0)))
        ids: list[int] = []
        for version in wanted.players:
            ids += [row[0] for row in self._query(
                f"SELECT s.game_id FROM league_seats s JOIN games g ON g.id = s.game_id {_GROUP} WHERE "
                f"s.tournament_id = ? AND s.version = ?{where}{bounds} ORDER BY s.game_id "
                f"{'DESC' if newest_first else 'ASC'} {page}", (league_id, version, *params, *marks))]
        ids.sort(reverse=newest_first)
        if wanted.limit is not None:
            skip = 0 if wanted.after is not None or wanted.before is not None else int(wanted.offset)
            ids = ids[skip:skip + int(wanted.limit)]
        games = {row["id"]: LeagueGame.from_row(row) for chunk in range(0, len(ids), _IDS_AT_ONCE)
                 for row in self._query(f"SELECT {_GAME_COLUMNS} WHERE g.id IN "
                                        f"({', '.join('?' * len(ids[chunk:chunk + _IDS_AT_ONCE]))})",
                                        tuple(ids[chunk:chunk + _IDS_AT_ONCE]))}
        # A signed-in viewer's page reads outside one read transaction: a game superseded between the two reads is
        # left out, not an error.
        return [games[game_id] for game_id in ids if game_id in games]

    def _game_id_from(self, league_id: int, number: int, *, above: bool) -> int:
        """The id that bounds the league's games numbered from ``number`` up (``above``) or down: the first of
        them by number (numbers follow ids in a league); past the end, a bound that keeps every game."""
        row = self._query_one(f"SELECT id FROM games WHERE tournament_id = ? AND number {'>=' if above else '<='} ? "
                              f"ORDER BY number {'ASC' if above else 'DESC'} LIMIT 1", (league_id, number))
        return int(row["id"]) if row else (2**63 - 1 if above else 0)

    def count_league_games(self, league_id: int, wanted: GameQuery) -> int:
        """How many games ``wanted`` picks (its page aside): a stored count or an index's range, less the games
        of the open groups when they are not shown."""
        sizes: tuple[object, ...] = () if wanted.table is None else (wanted.table,)
        if wanted.players is not None:
            total = self._count_bots_games(league_id, wanted)
        elif wanted.verdict is None:
            size = " AND players = ?" if sizes else ""
            row = self._query_one(f"SELECT COALESCE(SUM(games), 0) AS games FROM league_game_counts "
                                  f"WHERE tournament_id = ?{size}", (league_id, *sizes))
            total = int(row["games"]) if row else 0
        else:  # the games with verdicts (few) through their own index, no game row read
            if wanted.verdict == "any":
                size = " AND x.players = ?" if sizes else ""
                row = self._query_one("SELECT COUNT(*) AS games FROM league_games x WHERE x.tournament_id = ? AND "
                                      f"x.verdicts > 0{size}", (league_id, *sizes))
            else:
                size = " AND (SELECT players FROM league_games WHERE game_id = v.game_id) = ?" if sizes else ""
                row = self._query_one("SELECT COUNT(*) AS games FROM league_verdicts v WHERE v.tournament_id = ? AND "
                                      f"v.kind = ?{size}", (league_id, wanted.verdict, *sizes))
            total = int(row["games"]) if row else 0
        if wanted.with_open:
            return total
        return total - self._count_open(league_id, wanted)

    def _count_bots_games(self, league_id: int, wanted: GameQuery) -> int:
        """A bot's games: its versions' counts of seats (schema 15's table, kept as seats are stored), or with a
        filter, from its seats (their primary key) and the filter through the games' side table."""
        assert wanted.players is not None
        marks = ", ".join("?" * len(wanted.players)) or "NULL"
        where, params = replace(wanted, with_open=True).where()
        if not where:
            row = self._query_one(f"SELECT COALESCE(SUM(seats), 0) AS games FROM league_version_seats WHERE "
                                  f"tournament_id = ? AND version IN ({marks})", (league_id, *wanted.players))
            return int(row["games"]) if row else 0
        row = self._query_one(f"SELECT COUNT(*) AS games FROM league_seats s JOIN games g ON g.id = s.game_id WHERE "
                              f"s.tournament_id = ? AND s.version IN ({marks}){where}",
                              (league_id, *wanted.players, *params))
        return int(row["games"]) if row else 0

    def _count_open(self, league_id: int, wanted: GameQuery) -> int:
        """The games ``wanted`` picks among those of the open groups (a bot's: one per seat of its versions)."""
        where, params = wanted.where(open_groups=True)
        seats, chosen = "", tuple[str, ...]()
        if wanted.players is not None:
            seats = (f" JOIN league_seats s ON s.game_id = x.game_id AND s.version IN "
                     f"({', '.join('?' * len(wanted.players)) or 'NULL'})")
            chosen = wanted.players
        row = self._query_one(f"SELECT COUNT(*) AS games {_OPEN_GAMES.replace(' WHERE', seats + ' WHERE', 1)}"
                              f"{where}", (*chosen, league_id, *params))
        return int(row["games"]) if row else 0

    def meetings(self, league_id: int, bot: str, versions: list[str], *, with_open: bool) -> list[Meetings]:
        """Each other bot met by ``bot`` (whose versions are ``versions``) in games the viewer may see (open groups'
        only ``with_open``), its versions added up, by name: read from ``league_bot_meetings`` (kept as games are
        stored: a row per bot met, in its order), less the meetings in open groups' games."""
        met = {opponent: [games, fool, opponent_fool] for opponent, games, fool, opponent_fool in self._tuples(
            "SELECT opponent, games, fool, opponent_fool FROM league_bot_meetings "
            "WHERE tournament_id = ? AND bot = ? AND opponent != ? ORDER BY opponent", (league_id, bot, bot))}
        if not with_open:
            marks = ", ".join("?" * len(versions)) or "NULL"
            for row in self._query(
                    "SELECT COALESCE(v.bot, o.version) AS opponent, s.fool AS fool, o.fool AS opponent_fool " +
                    _OPEN_GROUPS.format(
                        joined=f" JOIN league_seats s ON s.game_id = x.game_id AND s.version IN ({marks}) "
                               f"JOIN league_seats o ON o.game_id = x.game_id AND o.version NOT IN ({marks}) "
                               f"LEFT JOIN league_versions v ON v.tournament_id = o.tournament_id "
                               f"AND v.name = o.version"),
                    (*versions, *versions, league_id)):
                counts = met[row["opponent"]]
                counts[0] -= 1
                counts[1] -= row["fool"]
                counts[2] -= row["opponent_fool"]
        return [Meetings(opponent, *counts) for opponent, counts in met.items() if counts[0] > 0]

    def verdict_counts(self, league_id: int, versions: list[str], *, with_open: bool) -> dict[str, int]:
        """How many of ``versions``' shown games ended in a verdict against them, by kind: each version's seats
        with a verdict (few), read through their own index (schema 15's: not every seat of the version), counted
        here."""
        marks = ", ".join("?" * len(versions)) or "NULL"
        counts: dict[str, int] = {}
        for row in self._query(f"SELECT s.verdict AS kind FROM league_seats s {_group_of('s')} WHERE "
                               f"s.tournament_id = ? AND s.version IN ({marks}) AND s.verdict IS NOT NULL"
                               f"{'' if with_open else _SHOWN}",
                               (league_id, *versions)):
            counts[row["kind"]] = counts.get(row["kind"], 0) + 1
        return dict(sorted(counts.items()))

    # -- the board's live facts: each a seek, or a range no wider than an hour's games -----------------------

    def ratings_at(self, league_id: int, fitted: str) -> dict[str, float]:
        """Each board version's rating at its latest history point fitted at or before ``fitted`` (left out: one
        with none that old): a seek down the history's primary key per version, in one statement (a statement per
        version took 8 of the board's 9 ms at 1,000 versions)."""
        return {row["version"]: float(row["elo"]) for row in self._query(
            "SELECT b.version AS version, (SELECT h.elo FROM league_rating_history h WHERE h.tournament_id = "
            "b.tournament_id AND h.version = b.version AND h.fitted <= ? ORDER BY h.fitted DESC LIMIT 1) AS elo "
            "FROM league_board b WHERE b.tournament_id = ?", (fitted, league_id)) if row["elo"] is not None}

    def last_game(self, league_id: int, version: str, *, with_open: bool) -> tuple[int, str] | None:
        """The number and end time of ``version``'s latest game the viewer may see (open groups' only
        ``with_open``): down the seats' primary key from the newest, past the few games of groups in flight."""
        row = self._query_one(f"SELECT g.number AS number, g.finished AS finished FROM league_seats s JOIN games g ON "
                              f"g.id = s.game_id {_group_of('s')} WHERE s.tournament_id = ? AND s.version = ?"
                              f"{'' if with_open else _SHOWN} ORDER BY s.game_id DESC LIMIT 1", (league_id, version))
        return None if row is None else (int(row["number"]), str(row["finished"]))

    def games_since(self, league_id: int, since: str, *, with_open: bool) -> int:
        """How many of the league's games the viewer may see were stored at or after ``since`` (a time stamp as
        the store writes them). A league's games are numbered as they are stored, so their times rise with their
        numbers: the first game at or after ``since`` is found by bisecting the numbers (a seek each), and the games
        from it on are counted along the numbers' index, less those of the groups in flight."""
        found = self.first_game_since(league_id, since)
        if found is None:
            return 0
        first = found[0]
        row = self._query_one("SELECT COUNT(*) AS games FROM games WHERE tournament_id = ? AND number >= ?",
                              (league_id, first))
        total = int(row["games"]) if row else 0
        if with_open:
            return total
        hidden = self._query_one(f"SELECT COUNT(*) AS games {_OPEN_GAMES} AND g.number >= ?", (league_id, first))
        return total - (int(hidden["games"]) if hidden else 0)

    def version_games_since(self, league_id: int, version: str, first_id: int, *, with_open: bool) -> int:
        """How many of ``version``'s games the viewer may see are the game ``first_id`` or later (the hour's, from
        :meth:`first_game_since`): a range of its seats' primary key no wider than that."""
        row = self._query_one(f"SELECT COUNT(*) AS games FROM league_seats s {_group_of('s')} WHERE "
                              f"s.tournament_id = ? AND s.version = ? AND s.game_id >= ?{'' if with_open else _SHOWN}",
                              (league_id, version, first_id))
        return int(row["games"]) if row else 0

    def first_game_since(self, league_id: int, since: str) -> tuple[int, int] | None:
        """The number and id of the league's first game stored at or after ``since`` (None: none is)."""
        def at_or_after(number: int) -> sqlite3.Row | None:
            return self._query_one("SELECT id, number, finished FROM games WHERE tournament_id = ? AND number >= ? "
                                   "ORDER BY number LIMIT 1", (league_id, number))
        newest = self._query_one("SELECT number, finished FROM games WHERE tournament_id = ? ORDER BY number DESC "
                                 "LIMIT 1", (league_id,))
        if newest is None or newest["finished"] < since:
            return None
        # The least number whose first game at or after it is recent: the answer is that game (numbers may skip).
        low, high = 1, int(newest["number"])
        while low < high:
            middle = (low + high) // 2
            found = at_or_after(middle)
            if found is not None and found["finished"] >= since:
                high = middle
            else:
                low = middle + 1
        first = at_or_after(low)
        return None if first is None else (int(first["number"]), int(first["id"]))

    def playing(self, league_id: int) -> list[tuple[str, ...]]:
        """The seats of each deal group in flight (through the groups' index by status: few)."""
        return [tuple(msgspec.json.decode(row["seats"], type=list[str])) for row in self._query(
            "SELECT seats FROM league_groups WHERE tournament_id = ? AND status = 'open'", (league_id,))]

    def league_game_shown(self, league_id: int, number: int, shape: int) -> ShownGame | None:
        """A game of the league by number (:meth:`league_game_line`), and in the same query its replay view as the
        daemon's publisher kept it in the viewer data's version ``shape`` (its JSON; None: not made yet, or made in
        another shape) and whether an analysis of it was asked for: a replay a crowd asks for is one query, not
        three."""
        row = self._query_one(
            f"SELECT {_GAME_FIELDS}, v.body AS view, EXISTS (SELECT 1 FROM analysis_requests a WHERE a.game_id = g.id) "
            f"AS analysed FROM games g {_GROUP} LEFT JOIN replay_views v ON v.game_id = g.id AND v.shape = ? "
            f"WHERE g.tournament_id = ? AND g.number = ?", (shape, league_id, number))
        if row is None:
            return None
        return ShownGame(LeagueGame.from_row(row), None if row["view"] is None else unpack(row["view"]),
                         bool(row["analysed"]))

    def league_game_line(self, league_id: int, number: int) -> LeagueGame | None:
        """A game of the league by number, whatever its group's status (its replay is read apart)."""
        row = self._query_one(f"SELECT {_GAME_COLUMNS} WHERE g.tournament_id = ? AND g.number = ?",
                              (league_id, number))
        return None if row is None else LeagueGame.from_row(row)



def _bounds(key: str, wanted: GameQuery) -> tuple[str, tuple[object, ...]]:
    """The keyset's condition on the ordering column ``key`` (a game's number), and its parameter."""
    if wanted.before is not None:
        return f" AND {key} < ?", (wanted.before,)
    if wanted.after is not None:
        return f" AND {key} > ?", (wanted.after,)
    return "", ()


def _page(wanted: GameQuery) -> str:
    if wanted.limit is None:
        return ""
    offset = 0 if wanted.before is not None or wanted.after is not None else int(wanted.offset)
    return f"LIMIT {int(wanted.limit)}" + (f" OFFSET {offset}" if offset else "")
