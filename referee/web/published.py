"""What a crowd reads, made once: the pages and answers an anonymous visitor gets, kept as bytes under the read
marks they were built from (schema 10's ``read_marks``, raised by triggers in the transaction that changes what a
page shows), and served as those bytes, with their ``ETag``, until one of those marks moves.

The daemon keeps the read side up as it writes (the marks, the stored counts, head to head, verdict and size
tables: :mod:`referee.results.schema`); a worker process of the web keeps the bytes. A visitor's request costs no
query: each worker reads every mark at most once per ``marks_seconds`` (one small table; the request that finds the
reading older reads it again, the others meanwhile use the one they have), and a page is served while none of its
marks has moved past what it was built under. So a page may be ``marks_seconds`` older than the database, well
inside the ``public_seconds`` a browser or a proxy may keep it anyway; the marks that move at every deal group a
league completes (*lagging* marks: a games list's, a bot's) are taken from a reading at most ``games_seconds``
old, so that a crowd does not have those pages built again at nearly every request. The first request after a
change builds the page once (one build per page at a time: a crowd at a board just refitted waits for one build,
not fifty), inside one read transaction, so that the marks it is kept under and the rows it shows agree; in the event
loop itself (a few indexed reads and a template; a replay the engine must replay, in a thread). Pages are kept
least recently used first out, within a byte budget of a pool per kind.

Signed-in viewers get their pages built fresh, but over the same cached league facts (:class:`LeagueFacts`: the
versions, read again only when a version changes), through queries whose cost does not grow with the games stored
(tests/test_query_plans.py).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

import xxhash

from referee.results.league_store import VersionRow
from referee.results.rows import TournamentRow
from referee.results.web_queries import WebStore

#: The marks every page depends on: the league's versions (names, bots, authors, states) and its row.
LEAGUE: tuple[str, ...] = ("versions", "league")
#: A kept page's ``Vary``: it is what a request without credentials gets (:mod:`referee.web.shown`).
VARY = "Cookie, Authorization"
#: Build locks, by a page key's hash: a page is built by one thread at a time (others wait for its bytes).
_STRIPES = 64


class NotQuick(Exception):
    """Raised by a build asked to be quick (:meth:`Published.make_now`) that would not be: the engine would replay a
    game, or a viewer's own parts be built."""


@dataclass(frozen=True)
class LeagueFacts:
    """What nearly every answer needs of the league: its row and its versions by name, in the order added, and by
    bot (a bot's page and games list look up its few versions among the league's 1,000: three scans of them took
    110 us of a bot page's build)."""

    league: TournamentRow
    versions: dict[str, VersionRow]
    by_bot: dict[str, list[VersionRow]] = field(init=False)

    def __post_init__(self) -> None:
        by_bot: dict[str, list[VersionRow]] = {}
        for version in self.versions.values():
            by_bot.setdefault(version.bot, []).append(version)
        object.__setattr__(self, "by_bot", by_bot)


@dataclass(frozen=True)
class Page:
    """A page's bytes as sent, with its validators; and its own headers as an answer sends them (made once, not per
    request: :mod:`referee.web.front`)."""

    body: bytes
    media_type: str
    etag: str  # a strong validator: the body's hash, quoted
    modified: str  # an HTTP date: when the latest mark the page depends on moved
    validators: tuple[tuple[bytes, bytes], ...] = field(init=False, repr=False)  # ETag, Last-Modified, Vary
    entity: tuple[tuple[bytes, bytes], ...] = field(init=False, repr=False)  # Content-Type, Content-Length

    def __post_init__(self) -> None:
        # The charset Litestar adds to a text type's Content-Type; the Vary of every kept page (it is anonymous).
        kind = f"{self.media_type}; charset=utf-8" if self.media_type.startswith("text/") else self.media_type
        object.__setattr__(self, "validators", ((b"etag", self.etag.encode()),
                                                (b"last-modified", self.modified.encode()), (b"vary", VARY.encode())))
        object.__setattr__(self, "entity", ((b"content-type", kind.encode()),
                                            (b"content-length", str(len(self.body)).encode())))


@dataclass(frozen=True)
class _Kept:
    stamp: tuple[int, ...]  # the values of the page's marks when it was built
    page: Page


#: A page's build: its body and media type, from a store inside one read transaction and the league's facts.
Build = Callable[[WebStore, "LeagueFacts"], tuple[bytes, str]]


def _current(stamp: tuple[int, ...], read: tuple[int, ...]) -> bool:
    """Whether a page built under the marks ``stamp`` shows what the marks ``read`` say: none of them has moved past
    it (marks only rise; a page built after the reading was taken is newer than the reading, and current)."""
    return all(seen <= built for built, seen in zip(stamp, read, strict=True))


def page_of(body: bytes, media_type: str, changed: float) -> Page:
    # The ETag is the body's XXH3 hash, 128 bits: a validator, not a secret (two bodies of one URL that collided would
    # only let a client keep its copy one revalidation too long), so a hash made for speed. A replay's 96 KB take
    # 1.5 us, where SHA-1 (in hardware) took 50: 2.5% of the server's CPU under the bench's crowd.
    return Page(body, media_type, f'"{xxhash.xxh3_128_hexdigest(body)}"', formatdate(changed, usegmt=True))


@dataclass(frozen=True)
class _Reading:
    at: float  # when, on the clock
    marks: dict[str, int]  # every mark's value
    settled_below: int  # WebStore.settled_below


class _Pool:
    """Kept pages of one kind, least recently used out first within ``budget`` bytes (the caller holds the lock)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.pages: OrderedDict[str, _Kept] = OrderedDict()
        self.bytes = 0

    def keep(self, key: str, kept: _Kept) -> None:
        old = self.pages.pop(key, None)
        if old is not None:
            self.bytes -= len(old.page.body)
        self.pages[key] = kept
        self.bytes += len(kept.page.body)
        while self.bytes > self.budget and self.pages:
            _, dropped = self.pages.popitem(last=False)
            self.bytes -= len(dropped.page.body)


#: The pools of kept pages and each one's share of the budget. Replays have a pool of their own: a crowd's replays
#: are nearly all different games (each made ahead by the daemon and cheap to send again), and in one pool with the
#: rest they would push out the bot pages and games lists that a crowd does ask for again.
POOLS = {"pages": 0.875, "replays": 0.125}


@dataclass(frozen=True)
class Lag:
    """The marks that move at every deal group a league completes (by prefix: the games lists', the bot pages'),
    whose reading a worker trusts for ``seconds`` (if longer than its ``marks_seconds``): a crowd then gets such a
    page built at most once in that time, not at nearly every request while a league stores games by the second. A
    move of a mark of ``catch_up_on`` (a refit) brings them up to date too: the pages that show both (a bot's) are
    built anew then anyway, and a lagging reading of its own, taken at other moments, would have them built a second
    time in each interval."""

    marks: tuple[str, ...] = ()
    seconds: float = 0.0
    catch_up_on: tuple[str, ...] = ()


class Published:
    """One worker process's kept pages and league facts over the database at ``db_path``, within ``budget_bytes``
    of pages (0: nothing is kept, every page and fact is read afresh). Its reading of the marks is trusted for
    ``marks_seconds`` of ``clock`` (0: the marks a page shows are read at every request), that of the lagging marks
    as ``lag`` says."""

    def __init__(self, db_path: Path, budget_bytes: int, marks_seconds: float = 0.0,
                 clock: Callable[[], float] = time.monotonic, lag: Lag = Lag()) -> None:
        self._db_path = db_path
        self._budget = budget_bytes
        self._marks_seconds = marks_seconds
        self._lagging, self._lagging_seconds = lag.marks, max(lag.seconds, marks_seconds)
        self._catch_up_on = lag.catch_up_on
        self._clock = clock
        self._local = threading.local()  # each thread's own connection (SQLite's rule), kept: :meth:`_store`
        self._lock = threading.Lock()  # the pools
        self._pools = {name: _Pool(int(budget_bytes * share)) for name, share in POOLS.items()}
        self._stripes = [threading.Lock() for _ in range(_STRIPES)]
        self._facts: tuple[tuple[int, ...], LeagueFacts] | None = None
        self._reading: _Reading | None = None  # the marks as last read
        self._lagging_reading: _Reading | None = None  # the reading the lagging marks come from
        self._reading_lock = threading.Lock()  # one request reads them again; the others use the reading they have

    def kept(self, key: str, marks: tuple[str, ...], pool: str = "pages") -> Page | None:
        """The page kept under ``key`` if none of ``marks`` has moved past what it was built under, else None."""
        kept_in = self._pools[pool]
        with self._lock:
            kept = kept_in.pages.get(key)
        if kept is None or not _current(kept.stamp, self._marks(marks)):
            return None
        with self._lock:
            if key in kept_in.pages:
                kept_in.pages.move_to_end(key)
        return kept.page

    def _marks(self, names: tuple[str, ...]) -> tuple[int, ...]:
        """The values of the marks ``names``: as read at most ``marks_seconds`` ago, or read now."""
        if self._marks_seconds <= 0:
            return self._store().marks(names).values
        reading = self._read()
        lagging = self._lagging_reading or reading
        return tuple((lagging if name.startswith(self._lagging) else reading).marks.get(name, 0) for name in names)

    def settled_below(self) -> int:
        """A game number below which no game will change whether it is shown, as of the reading of the marks
        (:meth:`WebStore.settled_below`: it only rises, so an older reading's is lower, and as true)."""
        if self._marks_seconds <= 0:
            store = self._store()
            return store.settled_below(self.facts(store).league.id)
        return self._read().settled_below

    def _read(self) -> _Reading:
        """The reading of the marks, read again if it is ``marks_seconds`` old (by one request: the others use the
        one they have meanwhile)."""
        reading, now = self._reading, self._clock()
        if self._stale(reading, now) and self._reading_lock.acquire(blocking=reading is None):
            try:
                reading = self._reading
                if self._stale(reading, now):  # not read again by the request this one waited for
                    store = self._store()
                    with store.snapshot():
                        reading = self._reading = _Reading(now, store.all_marks(),
                                                           store.settled_below(self.facts(store).league.id))
                    lagging = self._lagging_reading
                    if (lagging is None or now - lagging.at >= self._lagging_seconds
                            or any(reading.marks.get(name) != lagging.marks.get(name) for name in self._catch_up_on)):
                        self._lagging_reading = reading
            finally:
                self._reading_lock.release()
        assert reading is not None
        return reading

    def _stale(self, reading: _Reading | None, now: float) -> bool:
        return reading is None or now - reading.at >= self._marks_seconds

    def make(self, key: str, marks: tuple[str, ...], build: Build, pool: str = "pages") -> Page:
        """The page of ``key``: kept, or built by ``build`` (its body and media type) from one snapshot and kept.
        An exception of ``build`` (a missing bot's 404) keeps nothing."""
        with self._stripes[hash(key) % _STRIPES]:
            return self._build(key, marks, build, pool)

    def make_now(self, key: str, marks: tuple[str, ...], build: Build, pool: str = "pages") -> Page | None:
        """:meth:`make` in the caller's thread (the event loop's), for a build of a few indexed reads and a template:
        a thread's hop and the GIL's handoffs would cost more than the build. None when it would wait (a page of the
        same build lock is being built in a thread: the event loop never waits on a lock) or when ``build`` finds it
        is not quick after all (:class:`NotQuick`): then :meth:`make` it in a thread."""
        stripe = self._stripes[hash(key) % _STRIPES]
        if not stripe.acquire(blocking=False):
            return None
        try:
            return self._build(key, marks, build, pool)
        except NotQuick:
            return None
        finally:
            stripe.release()

    def _build(self, key: str, marks: tuple[str, ...], build: Build, pool: str) -> Page:
        store = self._store()
        with store.snapshot():
            return self.alongside(store, key, marks, build, pool)

    def alongside(self, store: WebStore, key: str, marks: tuple[str, ...], build: Build, pool: str = "pages") -> Page:
        """The page of ``key`` as of the read transaction ``store`` is in (a build's): kept under exactly the marks
        it reads there (built by the thread this one waited for, or as a twin), or built by ``build`` and kept. A page
        built from its twin's answer (a bot's, from its JSON) takes it this way: both are built from one set of
        queries per change of their marks."""
        now = store.marks(marks)
        with self._lock:
            kept = self._pools[pool].pages.get(key)
        if kept is not None and kept.stamp == now.values:
            return kept.page
        league = now.values[:len(LEAGUE)] if marks[:len(LEAGUE)] == LEAGUE else None
        body, media_type = build(store, self.facts(store, league))
        page = page_of(body, media_type, now.changed)
        with self._lock:
            self._pools[pool].keep(key, _Kept(now.values, page))
        return page

    def facts(self, store: WebStore, stamp: tuple[int, ...] | None = None) -> LeagueFacts:
        """The league's row and versions, read again only when the versions or the league's row changed (1,000
        versions take 4 ms to read: a request should not pay that to show one bot). ``stamp``: the :data:`LEAGUE`
        marks as the caller read them in ``store``'s read transaction (not read again)."""
        if stamp is None:
            stamp = store.marks(LEAGUE).values  # before the rows: rows newer than their stamp only cost a reread
        cached = self._facts
        if cached is not None and cached[0] == stamp:
            return cached[1]
        league = store.the_league()
        facts = LeagueFacts(league, {version.name: version for version in store.versions(league.id)})
        if self._budget > 0:
            self._facts = (stamp, facts)
        return facts

    def _store(self) -> WebStore:
        """This thread's connection, kept open (SQLite's rule: one thread per connection): a new connection parses
        the whole schema at its first query, 1 ms of CPU, which a page kept for a crowd should not pay per build."""
        store: WebStore | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = WebStore(self._db_path)
        return store
