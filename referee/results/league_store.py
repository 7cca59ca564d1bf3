"""A league's rows in the results database: its versions, its deal groups and its lifecycle requests; its games are
``games`` rows like a tournament's (slot ``g<group>|r<rotation>``, deal key ``g<group>``).

One league per database, a ``tournaments`` row of kind ``league``; its finals are rows of kind ``finals`` whose
``parent`` is the league. The daemon is the only writer of games and groups; the lifecycle commands
(``durak league add`` ...) write requests, which the daemon (or the command itself, when no daemon runs) carries
out. All SQL of the league is here.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from referee.rating.summaries import encode_summary, summarize
from referee.results.requests import Payload, PayloadProblem, RequestKind, decode_payload, encode_payload
from referee.results.rows import TournamentRow
from referee.results.stamps import stamp
from referee.results.store import Store, StoreError, StoreReads

GroupStatus = Literal["open", "complete", "void"]
#: The schema that keeps each complete group's summary for the board's fit (``league_summaries``).
SUMMARIES_SCHEMA = 11
#: Summaries read or stored at a time: each read or write a short transaction of its own.
SUMMARY_CHUNK = 5000
#: What a version's bot name must be to name one folder of the bot store: no separator, no NUL, not ``.``, ``..``
#: nor another hidden name (the store's own ``.staged`` and ``.uploads``), short. The league's name rule
#: (:func:`referee.league.names.name_problem`), checked where names enter, is much stricter.
_STORE_NAME = re.compile(r"[^./\x00][^/\x00]{0,199}")


#: Why a version row that is not of a version's form never plays (a row written by hand into the database).
UNPLAYABLE = "its row is not of a version's form (written outside the referee): never played"


def bot_store(db_path: Path) -> Path:
    """The league's bot store, beside its database (``league.db`` keeps its versions in ``league-bots/BOT/N``)."""
    return db_path.with_name(f"{db_path.stem}-bots")


@dataclass(frozen=True)
class VersionRow:
    """One version of one bot: ``name`` (``bot@number``) is what its games call it; it runs from ``dir``, its
    snapshot in the league's bot store, identified by ``sha256`` over its files."""

    name: str
    bot: str
    number: int
    author: str
    command: list[str]
    env: dict[str, str]
    dir: str
    sha256: str
    added: str = ""
    retired: str | None = None  # when it was retired
    quarantined: str | None = None  # why it gets no new games

    @property
    def active(self) -> bool:
        return self.retired is None and self.quarantined is None

    def state(self, *, why: bool = True) -> str:
        """The version's state as the README, the board, ``durak league status``, the report and the web arena
        name it: ``active``, ``retired`` or ``quarantined: why`` (``why=False``: ``quarantined`` alone, for a
        reader who may not see why). The one place that spells it."""
        if self.retired is not None:
            return "retired"
        if self.quarantined is not None:
            return f"quarantined: {self.quarantined}" if why else "quarantined"
        return "active"

    @classmethod
    def from_row(cls, row: sqlite3.Row, store: Path) -> VersionRow:
        """The version of a row, to run from its folder of the bot ``store``, ``BOT/N``: the row's ``dir`` is not
        read (whoever can write the database could point it anywhere on the host). A row whose name, number,
        command or environment is not of a version's form is shown as it is but never played: quarantined, with
        no folder and no command."""
        bot, number, name = str(row["bot"]), row["number"], str(row["name"])
        try:
            command = msgspec.json.decode(row["command"], type=list[str])
            env = msgspec.json.decode(row["env"], type=dict[str, str])
            playable = (_STORE_NAME.fullmatch(bot) is not None and type(number) is int and number >= 1
                        and name == f"{bot}@{number}")
        except (msgspec.DecodeError, TypeError, RecursionError):
            command, env, playable = [], {}, False
        quarantined = row["quarantined"] if playable else row["quarantined"] or UNPLAYABLE
        return cls(name=name, bot=bot, number=number if type(number) is int else 0, author=str(row["author"]),
                   command=command if playable else [], env=env if playable else {},
                   dir=str(store / bot / str(number)) if playable else "", sha256=str(row["sha256"]),
                   added=str(row["added"]), retired=row["retired"], quarantined=quarantined)


@dataclass(frozen=True)
class GroupRow:
    """One deal group as issued: its deal at every cyclic rotation of ``seats`` (rotation 0's order)."""

    number: int
    deal_seed: int
    seats: tuple[str, ...]
    anchor: str
    issued: str = ""
    status: GroupStatus = "open"
    reason: str = ""  # why it is void

    @property
    def deal_key(self) -> str:
        return f"g{self.number}"

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> GroupRow:
        return cls(number=row["number"], deal_seed=row["deal_seed"], seats=tuple(msgspec.json.decode(row["seats"])),
                   anchor=row["anchor"], issued=row["issued"], status=row["status"], reason=row["reason"])


@dataclass(frozen=True)
class RequestRow:
    """A lifecycle request: what ``durak league add/update/retire/reinstate``, an upload or the admin asked, and
    what came of it. Read from a row anyone with write access to the database may have written: ``payload`` is
    None and ``problem`` says why when the row does not decode (:func:`~referee.results.requests.decode_payload`)."""

    id: int
    kind: str
    bot: str
    payload: Payload | None
    created: str
    status: str = "pending"
    result: str = ""
    problem: str = ""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RequestRow:
        payload: Payload | None = None
        problem = ""
        try:
            payload = decode_payload(row["kind"], row["payload"])
        except PayloadProblem as exc:
            problem = str(exc)
        bot = row["bot"] if isinstance(row["bot"], str) else ""
        if not problem and not isinstance(row["bot"], str):
            problem = "the request's bot is no text"
        return cls(id=row["id"], kind=str(row["kind"]), bot=bot, payload=payload, created=str(row["created"]),
                   status=str(row["status"]), result=str(row["result"]), problem=problem)


class LeagueReads(StoreReads):
    """The results database of a league, read (:class:`~referee.results.store.StoreReads`, with the league's
    tables)."""

    # -- the league ---------------------------------------------------------------------

    def league(self) -> TournamentRow | None:
        """The database's league, if it holds one."""
        if self.schema_version < 4:
            return None
        row = self._query_one("SELECT id FROM tournaments WHERE kind = 'league' ORDER BY id DESC LIMIT 1")
        return None if row is None else self.tournament(row["id"])

    def finals(self, league: TournamentRow) -> list[TournamentRow]:
        rows = self._query("SELECT id FROM tournaments WHERE kind = 'finals' AND parent = ? ORDER BY id",
                           (league.id,))
        return [self.tournament(row["id"]) for row in rows]

    def disqualified(self, tournament_id: int | None = None) -> dict[str, str]:
        """A league's versions that no longer play, as the board marks them (``retired``, ``quarantined: why``);
        a tournament's disqualified bots as :class:`~referee.results.store.Store` has them."""
        chosen = self.tournament(tournament_id) if tournament_id is not None else self.active_tournament()
        if chosen is None or chosen.kind != "league":
            return super().disqualified(tournament_id)
        return {v.name: v.state() for v in self.versions(chosen.id) if not v.active}

    def has_played(self, row_id: int) -> bool:
        """Whether a league (or finals) row has issued a group or stored a game."""
        return self._query_one("SELECT 1 FROM games WHERE tournament_id = ? UNION ALL SELECT 1 FROM league_groups "
                               "WHERE tournament_id = ? LIMIT 1", (row_id, row_id)) is not None

    # -- versions -----------------------------------------------------------------------

    def versions(self, league_id: int) -> list[VersionRow]:
        """Every version of the league, in the order added (:meth:`VersionRow.from_row`: each runs from its folder
        of the bot store, and a row not of a version's form is never played)."""
        root = bot_store(self.path)
        return [VersionRow.from_row(row, root) for row in self._query(
            "SELECT * FROM league_versions WHERE tournament_id = ? ORDER BY added, bot, number", (league_id,))]

    # -- deal groups --------------------------------------------------------------------

    def groups(self, league_id: int, *statuses: GroupStatus) -> list[GroupRow]:
        """The league's groups (of ``statuses``, or all), in the order issued."""
        where = f"AND status IN ({', '.join('?' * len(statuses))})" if statuses else ""
        return [GroupRow.from_row(row) for row in self._query(
            f"SELECT * FROM league_groups WHERE tournament_id = ? {where} ORDER BY number", (league_id, *statuses))]

    def group_games(self, league_id: int, number: int) -> int:
        """How many of a group's rotations are stored."""
        row = self._query_one("SELECT COUNT(*) AS games FROM games WHERE tournament_id = ? AND deal_key = ?",
                              (league_id, f"g{number}"))
        return int(row["games"]) if row else 0

    # -- the board's summaries (schema 11) ---------------------------------------------------

    def summaries(self, league_id: int, after: int, limit: int = SUMMARY_CHUNK) -> list[tuple[int, str]]:
        """Up to ``limit`` stored group summaries (:mod:`referee.rating.summaries`) after row ``after``, by row:
        rows are added as groups complete, so a reader that keeps the last row it read reads only what is new (down
        the rows' key from ``after``: the league kept off the index (``+``), which SQLite otherwise chose, reading
        every summary of the league and sorting them, 22 ms a read at a million games)."""
        rows = self._query("SELECT id, summary FROM league_summaries WHERE id > ? AND +tournament_id = ? ORDER BY id "
                           "LIMIT ?", (after, league_id, limit))
        return [(int(row[0]), str(row[1])) for row in rows]

    def summary_counts(self, league_id: int) -> tuple[int, int]:
        """The league's complete groups and its stored summaries, in one snapshot (equal once every complete group
        has its summary: always, but for a database of an older schema until :meth:`fill_summaries`)."""
        row = self._query_one("SELECT (SELECT COUNT(*) FROM league_groups WHERE tournament_id = ?1 AND status = "
                              "'complete'), (SELECT COUNT(*) FROM league_summaries WHERE tournament_id = ?1)",
                              (league_id,))
        assert row is not None
        return int(row[0]), int(row[1])

    def games_deleted(self) -> int:
        """How many times games were deleted (schema 10's read mark ``gone``, raised by the deletion's own
        transaction): while it stays, no summary was removed (a game's deletion takes its group's summary with it),
        and every group completed since came with its summary (:meth:`close_group`). A primary key's seek."""
        row = self._query_one("SELECT value FROM read_marks WHERE name = 'gone'")
        return int(row[0]) if row is not None else 0

    def unsummarized(self, league_id: int, after: int, limit: int = SUMMARY_CHUNK) -> list[tuple[int, list[str]]]:
        """Up to ``limit`` complete groups numbered after ``after`` with no stored summary, each with its games'
        outcome texts."""
        numbers = [number for number, in self._query(
            "SELECT number FROM league_groups lg WHERE tournament_id = ? AND status = 'complete' AND number > ? AND "
            "NOT EXISTS (SELECT 1 FROM league_summaries s WHERE s.tournament_id = lg.tournament_id AND "
            "s.number = lg.number) ORDER BY number LIMIT ?", (league_id, after, limit))]
        return list(self._group_outcomes(league_id, numbers).items())

    # -- replay views (schema 12: referee.report.publisher makes them) ---------------------

    def queued_replay_views(self, limit: int) -> list[int]:
        """Up to ``limit`` public games whose replay view is not made yet (game ids), newest first: the games a
        visitor is likeliest to open, and all of them once the queue is empty (a seek of its partial index)."""
        return [game_id for game_id, in self._query(
            "SELECT game_id FROM replay_views WHERE shape IS NULL ORDER BY game_id DESC LIMIT ?", (limit,))]

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: whatever is read inside sees the database as it was at its first read."""
        with self._failing("read"):
            self._db.execute("BEGIN")
            try:
                yield
            finally:
                self._db.execute("COMMIT")

    def _group_outcomes(self, league_id: int, numbers: list[int]) -> dict[int, list[str]]:
        """Each group's games as outcome texts, in the order stored, through the games' index by deal."""
        found: dict[int, list[str]] = {number: [] for number in numbers}
        for start in range(0, len(numbers), 500):  # under SQLite's limit of bound parameters
            part = numbers[start:start + 500]
            for number, outcome in self._db.execute(
                    f"SELECT CAST(substr(x.deal_key, 2) AS INTEGER), g.outcome FROM league_games x JOIN games g ON "
                    f"g.id = x.game_id WHERE x.tournament_id = ? AND x.deal_key IN ({', '.join('?' * len(part))}) "
                    "ORDER BY g.id", (league_id, *(f"g{number}" for number in part))):
                found[number].append(outcome)
        return found

    # -- requests -----------------------------------------------------------------------

    def pending_requests(self, league_id: int) -> list[RequestRow]:
        return [RequestRow.from_row(row) for row in self._query(
            "SELECT * FROM league_requests WHERE tournament_id = ? AND status = 'pending' ORDER BY id", (league_id,))]

    def abandoned_requests(self, league_id: int) -> list[RequestRow]:
        """Requests left ``working``: their process died while carrying them out (read while holding the lock)."""
        return [RequestRow.from_row(row) for row in self._query(
            "SELECT * FROM league_requests WHERE tournament_id = ? AND status = 'working' ORDER BY id", (league_id,))]

    def latest_request(self, league_id: int, kind: RequestKind) -> RequestRow | None:
        """The league's latest request of ``kind``, whatever became of it."""
        row = self._query_one("SELECT * FROM league_requests WHERE tournament_id = ? AND kind = ? ORDER BY id DESC "
                              "LIMIT 1", (league_id, kind))
        return None if row is None else RequestRow.from_row(row)

    def request(self, request_id: int) -> RequestRow:
        row = self._query_one("SELECT * FROM league_requests WHERE id = ?", (request_id,))
        if row is None:
            raise StoreError(f"no request {request_id} in {str(self.path)!r}")
        return RequestRow.from_row(row)


class LeagueRequests(StoreReads):
    """The requests people and the CLI make of the league daemon (the web's write of ``league_requests``)."""

    # -- requests -----------------------------------------------------------------------

    def add_request(self, league_id: int, bot: str, payload: Payload) -> int:
        """Ask for ``payload`` (its kind is its type's) about ``bot`` ("" for none)."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO league_requests (tournament_id, kind, bot, payload, created) VALUES (?, ?, ?, ?, ?)",
                (league_id, payload.kind, bot, encode_payload(payload), stamp()))
        assert cursor.lastrowid is not None
        return cursor.lastrowid


class LeagueStore(LeagueReads, LeagueRequests, Store):
    """A league's database as the daemon and the CLI open it: :class:`LeagueReads`, the requests, and the league's
    writes (the league and its finals, versions, deal groups, summaries, replay views, requests carried out)."""

    # -- the league ------------------------------------------------------------------------

    def create_league(self, name: str, config_path: str, config_text: str, fingerprint: str,
                      seed: int) -> TournamentRow:
        """The database's league (the active row: ``durak leaderboard DB`` rates it)."""
        return self._insert_row("league", (name, config_path, config_text, fingerprint, seed), None)

    def create_finals(self, league: TournamentRow, name: str, seed: int, config_text: str) -> TournamentRow:
        """A finals phase of ``league``: a row of its own (its seed, its games, ``config_text``: who plays), the
        league staying active."""
        return self._insert_row("finals", (name, league.config_path, config_text, league.fingerprint, seed),
                                league.id)

    def forget_seed(self, row_id: int) -> None:
        """Clear a row's seed (kept elsewhere now), and empty the write-ahead log that held the old page."""
        self._db.execute("PRAGMA secure_delete = ON")  # the old cell's bytes are zeroed, not left in free space
        with self._transaction():
            self._db.execute("UPDATE tournaments SET seed = 0 WHERE id = ?", (row_id,))
        self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def update_config(self, league_id: int, config_text: str) -> None:
        """Keep a newer config's text (its matchmaking settings changed; what defines the games did not)."""
        with self._transaction():
            self._db.execute("UPDATE tournaments SET config = ? WHERE id = ?", (config_text, league_id))

    def _insert_row(self, kind: str, values: tuple[str, str, str, str, int], parent: int | None) -> TournamentRow:
        with self._transaction():
            if kind == "league":
                self._db.execute("UPDATE tournaments SET active = 0")
            cursor = self._db.execute(
                "INSERT INTO tournaments (name, config_path, config, fingerprint, seed, created, kind, parent, "
                "active) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", (*values, stamp(), kind, parent, int(kind == "league")))
        assert cursor.lastrowid is not None
        return self.tournament(cursor.lastrowid)

    # -- versions --------------------------------------------------------------------------

    def add_version(self, league_id: int, version: VersionRow) -> VersionRow:
        """Store a new version (added now); StoreError if its name is taken."""
        added = stamp()
        try:
            with self._transaction():
                self._db.execute(
                    "INSERT INTO league_versions (tournament_id, name, bot, number, author, command, env, dir, "
                    "sha256, added) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (league_id, version.name, version.bot, version.number, version.author,
                     msgspec.json.encode(version.command).decode(), msgspec.json.encode(version.env).decode(),
                     version.dir, version.sha256, added))
        except StoreError as exc:
            raise StoreError(f"cannot add version {version.name!r}: {exc}") from None
        return VersionRow(**{**version.__dict__, "added": added})

    def set_version(self, league_id: int, name: str, *, retired: bool | None = None,
                    quarantined: str | Literal[False] | None = False) -> None:
        """Retire (``retired=True``) or reinstate (``False``) a version; quarantine it with a reason, or lift its
        quarantine (``quarantined=None``); an argument left out leaves that as it is."""
        with self._transaction():
            if retired is not None:
                self._db.execute("UPDATE league_versions SET retired = ? WHERE tournament_id = ? AND name = ?",
                                 (stamp() if retired else None, league_id, name))
            if quarantined is not False:
                self._db.execute("UPDATE league_versions SET quarantined = ? WHERE tournament_id = ? AND name = ?",
                                 (quarantined, league_id, name))

    # -- deal groups -----------------------------------------------------------------------

    def issue_group(self, league_id: int, group: GroupRow) -> None:
        """Store a group as issued, before any of its games starts; StoreError if its number was issued already
        (no deal is ever issued twice)."""
        with self._transaction():
            self._db.execute(
                "INSERT INTO league_groups (tournament_id, number, deal_key, deal_seed, seats, anchor, issued) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (league_id, group.number, group.deal_key, group.deal_seed,
                                                 msgspec.json.encode(list(group.seats)).decode(), group.anchor,
                                                 stamp()))

    def close_group(self, league_id: int, number: int, status: Literal["complete", "void"], reason: str = "") -> None:
        """Close an open group; a complete one's summary (what the board's fit reads of it) is stored with it."""
        with self._transaction():
            cursor = self._db.execute("UPDATE league_groups SET status = ?, reason = ?, finished = ? WHERE "
                                      "tournament_id = ? AND number = ? AND status = 'open'",
                                      (status, reason, stamp(), league_id, number))
            if status == "complete" and cursor.rowcount and self.schema_version >= SUMMARIES_SCHEMA:
                self._store_summaries(league_id, [number])

    # -- replay views ----------------------------------------------------------------------

    def keep_replay_views(self, views: list[tuple[int, bytes | None]], shape: int) -> None:
        """Store made replay views (game id, the compressed view; None: it could not be made, shape -1) of the
        viewer data's version ``shape``, in one short transaction; a game deleted since it was queued has no row
        left, and its view is dropped."""
        with self._transaction():
            self._db.executemany("UPDATE replay_views SET body = ?, shape = ? WHERE game_id = ?",
                                 [(body, shape if body is not None else -1, game_id) for game_id, body in views])

    def requeue_replay_views(self, shape: int, chunk: int = 20_000) -> int:
        """Queue again every view made in another shape than ``shape`` (the viewer's data changed), or that could not
        be made (-1), ``chunk`` game ids per transaction; how many. Once per shape (the meta row
        ``replay_views_shape`` says which was looked for last): the common case is one lookup."""
        row = self._query_one("SELECT value FROM meta WHERE key = 'replay_views_shape'")
        if row is not None and row[0] == str(shape):
            return 0
        top = int(self._query("SELECT COALESCE(MAX(game_id), 0) FROM replay_views")[0][0])
        queued = 0
        for low in range(0, top, chunk):
            with self._transaction():
                queued += self._db.execute(
                    "UPDATE replay_views SET body = NULL, shape = NULL WHERE game_id > ? AND game_id <= ? AND "
                    "shape != ?", (low, low + chunk, shape)).rowcount
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('replay_views_shape', ?)", (str(shape),))
        return queued

    # -- the board's summaries -------------------------------------------------------------

    def fill_summaries(self, league_id: int, chunk: int = SUMMARY_CHUNK) -> int:
        """Store the summary of every complete group without one (a database migrated from schema 10 or older),
        ``chunk`` groups per transaction: never a long one, so the web's reads and the WAL are not held up.
        Returns how many were stored."""
        stored = 0
        while True:
            with self._transaction():
                numbers = [number for number, in self._db.execute(
                    "SELECT number FROM league_groups lg WHERE tournament_id = ? AND status = 'complete' AND NOT "
                    "EXISTS (SELECT 1 FROM league_summaries s WHERE s.tournament_id = lg.tournament_id AND "
                    "s.number = lg.number) ORDER BY number LIMIT ?", (league_id, chunk))]
                self._store_summaries(league_id, numbers)
            stored += len(numbers)
            if len(numbers) < chunk:
                return stored

    def _store_summaries(self, league_id: int, numbers: list[int]) -> None:
        """Summarize complete groups and store their summaries (inside the caller's transaction)."""
        games = self._group_outcomes(league_id, numbers)
        self._db.executemany("INSERT OR IGNORE INTO league_summaries (tournament_id, number, summary) VALUES "
                             "(?, ?, ?)", [(league_id, number, encode_summary(summarize(games.get(number, []))))
                                           for number in numbers])

    # -- requests --------------------------------------------------------------------------

    def take_request(self, request_id: int) -> bool:
        """Mark a pending request ``working`` before it is carried out; False if it is no longer pending."""
        with self._transaction():
            cursor = self._db.execute("UPDATE league_requests SET status = 'working' WHERE id = ? AND "
                                      "status = 'pending'", (request_id,))
        return cursor.rowcount == 1

    def give_back_request(self, request_id: int) -> None:
        """A request whose carrying out was interrupted on purpose (Ctrl-C, SIGTERM): pending again."""
        with self._transaction():
            self._db.execute("UPDATE league_requests SET status = 'pending' WHERE id = ? AND status = 'working'",
                             (request_id,))

    def finish_request(self, request_id: int, status: Literal["done", "refused", "failed"], result: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE league_requests SET status = ?, result = ?, done = ? WHERE id = ?",
                             (status, result, stamp(), request_id))

