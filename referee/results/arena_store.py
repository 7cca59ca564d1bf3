"""The arena's rows in a league database: authors and their tokens' hashes, uploads, and the board the daemon keeps
for the web server (its latest fit and each version's rating history), so that a page never refits.

The daemon (``durak league run``) writes games, groups, the board and what becomes of an upload; the web server
(``durak serve``) writes only what it hands to the daemon: an upload (with its lifecycle request, in one
transaction) and the web's session key. All SQL of the arena is here.
"""

from __future__ import annotations

import math
import secrets
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

import msgspec

from referee.results.analysis_store import AnalysisReads, AnalysisStore
from referee.results.requests import CarryOutUpload, encode_payload
from referee.results.side_store import SideReads, SideStore
from referee.results.stamps import stamp
from referee.results.store import StoreError
from referee.results.table_store import TABLE_OPEN, TableReads, TableStore

#: Why a revoked author's open card table ended.
REVOKED_TABLE = "the author's token was revoked"
#: A version's rating history keeps every point of its last hour and, before that, the last point of each hour (of
#: UTC). It gains a point at every refit that moves its games (2,880 a day at the default 30 s), and its bot page
#: reads and draws them all: kept whole, the page's cost grew with the league's age.
HISTORY_WHOLE = timedelta(hours=1)
#: The points to thin at each refit: those fitted in the two hours before the last hour (once an hour is wholly in
#: there, only its last point stays); a point older than that was thinned then (:meth:`ArenaStore.thin_history`
#: thins a whole history, at the daemon's start).
_THINNED_AT_A_REFIT = timedelta(hours=2)
_THIN = ("DELETE FROM league_rating_history WHERE tournament_id = ?1 AND version = ?2 AND fitted >= ?3 AND fitted < ?4 "
         "AND fitted NOT IN (SELECT MAX(fitted) FROM league_rating_history WHERE tournament_id = ?1 AND version = ?2 "
         "AND fitted >= ?3 AND fitted < ?4 GROUP BY substr(fitted, 1, 13))")  # a stamp's first 13: its hour
_OPEN_TABLES = ", ".join(f"'{status}'" for status in TABLE_OPEN)

UploadStatus = Literal["pending", "extracting", "building", "gating", "accepted", "refused"]
#: An upload's statuses that are final.
UPLOAD_DONE: tuple[UploadStatus, ...] = ("accepted", "refused")


@dataclass(frozen=True)
class AuthorRow:
    """An author of bots (or the organizer, ``admin``). Only the SHA-256 of their token is kept; ``epoch`` rises when
    they are revoked, which ends every session signed before."""

    id: int
    name: str
    token_sha256: str
    admin: bool
    created: str
    revoked: str | None
    epoch: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> AuthorRow:
        return cls(id=row["id"], name=row["name"], token_sha256=row["token_sha256"], admin=bool(row["admin"]),
                   created=row["created"], revoked=row["revoked"], epoch=row["epoch"])


class UploadStep(msgspec.Struct, frozen=True):
    """One step of an upload as the author sees it: ``receive``, ``extract``, ``build``, ``check``, ``gate``."""

    step: str
    ok: bool
    detail: str
    seconds: float = 0.0


@dataclass(frozen=True)
class UploadRow:
    """An uploaded archive and what became of it (the archive itself is read apart: :meth:`ArenaStore.archive`)."""

    id: int
    author: str
    bot: str
    created: str
    size: int
    sha256: str
    request_id: int | None
    status: UploadStatus
    steps: list[UploadStep] = field(default_factory=list)
    build_log: str = ""
    gate_log: str = ""
    version: str | None = None
    finished: str | None = None

    @property
    def done(self) -> bool:
        return self.status in UPLOAD_DONE

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> UploadRow:
        return cls(id=row["id"], author=row["author"], bot=row["bot"], created=row["created"], size=row["size"],
                   sha256=row["sha256"], request_id=row["request_id"], status=row["status"],
                   steps=msgspec.json.decode(row["steps"], type=list[UploadStep]), build_log=row["build_log"],
                   gate_log=row["gate_log"], version=row["version"], finished=row["finished"])


@dataclass(frozen=True)
class BoardRow:
    """A version's line of the board, as the daemon's last refit left it (``sd`` None: not pinned yet)."""

    version: str
    rank: int
    elo: float
    sd: float | None
    games: int
    fitted: str


@dataclass(frozen=True)
class RatingPoint:
    """A version's rating at one refit (its history: kept when its rated games changed)."""

    version: str
    fitted: str
    elo: float
    sd: float | None
    games: int


_UPLOAD_COLUMNS = ("id, author, bot, created, size, sha256, request_id, status, steps, build_log, gate_log, "
                   "version, finished")


class ArenaReads(SideReads, TableReads, AnalysisReads):
    """A league's database with the arena's tables, read (the side games' queue of
    :class:`~referee.results.side_store.SideReads`, the card tables of
    :class:`~referee.results.table_store.TableReads`, the analyses of
    :class:`~referee.results.analysis_store.AnalysisReads`, and authors, sessions, uploads and the board)."""

    def author(self, name: str) -> AuthorRow | None:
        row = self._query_one("SELECT * FROM arena_authors WHERE name = ?", (name,))
        return None if row is None else AuthorRow.from_row(row)

    def author_by_id(self, author_id: int) -> AuthorRow | None:
        row = self._query_one("SELECT * FROM arena_authors WHERE id = ?", (author_id,))
        return None if row is None else AuthorRow.from_row(row)

    def authors(self) -> list[AuthorRow]:
        return [AuthorRow.from_row(row) for row in self._query("SELECT * FROM arena_authors ORDER BY name")]

    def upload(self, upload_id: int) -> UploadRow:
        """:raises StoreError: no such upload."""
        row = self._query_one(f"SELECT {_UPLOAD_COLUMNS} FROM arena_uploads WHERE id = ?", (upload_id,))
        if row is None:
            raise StoreError(f"no upload {upload_id} in {str(self.path)!r}")
        return UploadRow.from_row(row)

    def uploads(self, league_id: int, author: str | None = None, limit: int = 100) -> list[UploadRow]:
        """The league's latest uploads (an author's, or everyone's), newest first."""
        where, params = ("AND author = ?", (author,)) if author is not None else ("", ())
        return [UploadRow.from_row(row) for row in self._query(
            f"SELECT {_UPLOAD_COLUMNS} FROM arena_uploads WHERE tournament_id = ? {where} ORDER BY id DESC LIMIT ?",
            (league_id, *params, limit))]

    def archive(self, upload_id: int) -> bytes | None:
        """An upload's archive, until the daemon has carried it out (None after)."""
        row = self._query_one("SELECT archive FROM arena_uploads WHERE id = ?", (upload_id,))
        return None if row is None or row["archive"] is None else bytes(row["archive"])

    def upload_usage(self, author: str, since: str) -> tuple[int, int]:
        """How many uploads ``author`` made since ``since`` (an ISO time), and the bytes of every archive of theirs
        still stored (pending uploads, and the accepted ones' sizes, which their snapshots hold)."""
        row = self._query_one(
            "SELECT SUM(created >= ?) AS recent, SUM(CASE WHEN status != 'refused' THEN size ELSE 0 END) AS bytes "
            "FROM arena_uploads WHERE author = ?", (since, author))
        return (int(row["recent"] or 0), int(row["bytes"] or 0)) if row is not None else (0, 0)

    def board(self, league_id: int) -> list[BoardRow]:
        """The board as last fitted, best first (empty before the first fit)."""
        return [BoardRow(version=row["version"], rank=row["rank"], elo=row["elo"], sd=row["sd"], games=row["games"],
                         fitted=row["fitted"]) for row in self._query(
            "SELECT * FROM league_board WHERE tournament_id = ? ORDER BY rank", (league_id,))]

    def rating_history(self, league_id: int, versions: list[str]) -> list[RatingPoint]:
        """The rating history of ``versions``, oldest first (points of one refit by version): each version's from
        the primary key, merged here (sorted in SQL, the points of every version went through a temp B-tree)."""
        points = [RatingPoint(*row) for version in sorted(set(versions)) for row in self._query(  # its fields' order
            "SELECT version, fitted, elo, sd, games FROM league_rating_history WHERE tournament_id = ? AND version = ? "
            "ORDER BY fitted", (league_id, version))]
        return sorted(points, key=lambda point: point.fitted)


class ArenaVisits(ArenaReads):
    """What a visitor's request writes of the arena: a session begun and ended, an upload, the web's key made once
    (the web's writes of ``web_sessions``, ``arena_uploads`` and ``meta``)."""

    # -- the web's sessions ---------------------------------------------------------------

    def add_session(self, nonce: str, author_id: int, issued: float, expires: float) -> None:
        """A session begins (its cookie's nonce; unix seconds); the expired ones are purged on the way."""
        with self._transaction():
            self._db.execute("DELETE FROM web_sessions WHERE expires <= ?", (issued,))
            self._db.execute("INSERT INTO web_sessions (nonce, author_id, issued, expires) VALUES (?, ?, ?, ?)",
                             (nonce, author_id, issued, expires))

    def end_session(self, nonce: str) -> None:
        """A session ends (logout): its cookie is refused from now on, wherever a copy of it is."""
        with self._transaction():
            self._db.execute("DELETE FROM web_sessions WHERE nonce = ?", (nonce,))

    def session_live(self, nonce: str, author_id: int, now: float) -> bool:
        """Whether the session of ``nonce`` is ``author_id``'s and has not ended (logged out, revoked, expired:
        an expired one is purged here)."""
        row = self._query_one("SELECT author_id, expires FROM web_sessions WHERE nonce = ?", (nonce,))
        if row is None:
            return False
        if row["expires"] <= now:
            self.end_session(nonce)
            return False
        return bool(row["author_id"] == author_id)

    # -- the web's session key ----------------------------------------------------------

    def web_key(self) -> bytes:
        """The key that signs the web's session cookies: drawn (256 bits) the first time it is asked for, then kept
        in the database (whoever may read it could read every other secret there too)."""
        row = self._query_one("SELECT value FROM meta WHERE key = 'web_key'")
        if row is None:
            with self._transaction():
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('web_key', ?)", (secrets.token_hex(32),))
            row = self._query_one("SELECT value FROM meta WHERE key = 'web_key'")
            assert row is not None
        return bytes.fromhex(row["value"])

    # -- uploads ------------------------------------------------------------------------

    def add_upload(self, league_id: int, author: str, bot: str, archive: bytes, sha256: str) -> UploadRow:
        """Store an archive and ask the daemon to carry it out (a lifecycle request of kind ``upload``), in one
        transaction: an upload is never stored without its request, nor the other way round."""
        with self._transaction():
            cursor = self._db.execute(
                "INSERT INTO arena_uploads (tournament_id, author, bot, created, size, sha256, archive) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (league_id, author, bot, stamp(), len(archive), sha256, archive))
            upload_id = cursor.lastrowid
            assert upload_id is not None
            request = self._db.execute(
                "INSERT INTO league_requests (tournament_id, kind, bot, payload, created) "
                "VALUES (?, 'upload', ?, ?, ?)",
                (league_id, bot, encode_payload(CarryOutUpload(upload=upload_id, author=author)), stamp()))
            self._db.execute("UPDATE arena_uploads SET request_id = ? WHERE id = ?", (request.lastrowid, upload_id))
        assert upload_id is not None
        return self.upload(upload_id)


class ArenaStore(ArenaVisits, SideStore, TableStore, AnalysisStore):
    """An arena league's database as the daemon and the CLI open it: every read and every write (authors and their
    tokens, an upload's steps, the board)."""

    # -- authors ------------------------------------------------------------------------

    def add_author(self, name: str, token_sha256: str, *, admin: bool = False) -> AuthorRow:
        """A new author; :raises StoreError: the name is taken."""
        try:
            with self._transaction():
                self._db.execute("INSERT INTO arena_authors (name, token_sha256, admin, created) VALUES (?, ?, ?, ?)",
                                 (name, token_sha256, int(admin), stamp()))
        except StoreError as exc:
            raise StoreError(f"cannot add author {name!r}: {exc}") from None
        author = self.author(name)
        assert author is not None
        return author

    def set_token(self, name: str, token_sha256: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE arena_authors SET token_sha256 = ? WHERE name = ?", (token_sha256, name))

    def revoke_author(self, name: str) -> AuthorRow:
        """Revoke an author's token, end their sessions (their rows deleted, their epoch raised) and their open card
        tables (over, with :data:`REVOKED_TABLE` as the reason, so that no cap counts them; one playing is
        resigned too, so the daemon ends its game at once), in one transaction. :raises StoreError: no such
        author."""
        with self._transaction():
            cursor = self._db.execute("UPDATE arena_authors SET revoked = COALESCE(revoked, ?), epoch = epoch + 1 "
                                      "WHERE name = ?", (stamp(), name))
            self._db.execute("DELETE FROM web_sessions WHERE author_id IN (SELECT id FROM arena_authors WHERE "
                             "name = ?)", (name,))
            self._db.execute(f"UPDATE human_tables SET resigned = 1, status = 'over', deadline = NULL, reason = ?, "
                             f"finished = ? WHERE author = ? AND status IN ({_OPEN_TABLES})",
                             (REVOKED_TABLE, stamp(), name))
        if cursor.rowcount != 1:
            raise StoreError(f"no author {name!r} in {str(self.path)!r}")
        author = self.author(name)
        assert author is not None
        return author

    # -- uploads ---------------------------------------------------------------------------

    def step_upload(self, upload_id: int, status: UploadStatus, step: UploadStep | None = None, *,
                    build_log: str | None = None, gate_log: str | None = None, version: str | None = None) -> None:
        """Record an upload's progress: its status, one more step, its logs, its version. A final status drops the
        archive (the snapshot or the refusal is what remains)."""
        with self._transaction():
            row = self._db.execute("SELECT steps FROM arena_uploads WHERE id = ?", (upload_id,)).fetchone()
            if row is None:
                raise StoreError(f"no upload {upload_id} in {str(self.path)!r}")
            steps = msgspec.json.decode(row["steps"], type=list[UploadStep]) + ([step] if step else [])
            done = status in UPLOAD_DONE
            self._db.execute(
                "UPDATE arena_uploads SET status = ?, steps = ?, build_log = COALESCE(?, build_log), "
                "gate_log = COALESCE(?, gate_log), version = COALESCE(?, version), finished = ?, "
                "archive = CASE WHEN ? THEN NULL ELSE archive END WHERE id = ?",
                (status, msgspec.json.encode(steps).decode(), build_log, gate_log, version,
                 stamp() if done else None, done, upload_id))

    # -- the board ----------------------------------------------------------------------

    def save_board(self, league_id: int, rows: list[BoardRow]) -> None:
        """Replace the league's board with a new fit, and add a history point for each version whose rated games
        changed since its last one."""
        with self._transaction():
            last = {row["version"]: row["games"] for row in self._db.execute(
                "SELECT version, games FROM league_board WHERE tournament_id = ?", (league_id,))}
            self._db.execute("DELETE FROM league_board WHERE tournament_id = ?", (league_id,))
            self._db.executemany(
                "INSERT INTO league_board (tournament_id, version, rank, elo, sd, games, fitted) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(league_id, r.version, r.rank, r.elo, _finite(r.sd), r.games, r.fitted) for r in rows])
            points = [r for r in rows if r.games and last.get(r.version) != r.games]  # unrated: no point
            self._db.executemany(
                "INSERT OR REPLACE INTO league_rating_history (tournament_id, version, fitted, elo, sd, games) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(league_id, r.version, r.fitted, r.elo, _finite(r.sd), r.games) for r in points])
            self._thin(league_id, [(point.version, point.fitted) for point in points], _THINNED_AT_A_REFIT)

    def thin_history(self, league_id: int) -> None:
        """Thin every version's whole rating history as :data:`HISTORY_WHOLE` says, up to an hour before its
        latest point (a refit thins only the hours just past: a history kept whole before this rule is thinned
        here, once)."""
        with self._transaction():
            self._thin(league_id, [(row["version"], row["fitted"]) for row in self._db.execute(
                "SELECT version, MAX(fitted) AS fitted FROM league_rating_history WHERE tournament_id = ? "
                "GROUP BY version", (league_id,)).fetchall()], None)

    def _thin(self, league_id: int, newest: list[tuple[str, str]], span: timedelta | None) -> None:
        """Thin each version's points fitted within ``span`` (None: any time) before the hour before its newest
        point's ``fitted`` (of a refit: one stamp for all, read once)."""
        bounds: dict[str, tuple[str, str] | None] = {}
        for fitted in {fitted for _, fitted in newest}:
            try:
                before = datetime.fromisoformat(fitted) - HISTORY_WHOLE
            except ValueError:
                bounds[fitted] = None  # not a time stamp (a test's label): nothing to thin by
                continue
            bounds[fitted] = ("" if span is None else stamp(before - span), stamp(before))
        self._db.executemany(_THIN, [(league_id, version, *window) for version, fitted in newest
                                     if (window := bounds[fitted]) is not None])


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value

