"""What a crowd reads, made once (referee/web/published.py, schema 10's read marks): every write that changes what a
page shows raises its mark, in the writer's own transaction; an anonymous visitor gets the kept bytes with their
validators (a 304 for an ETag they hold); and a kept page is, byte for byte, the page built afresh from the same
data, route by route, while a writer writes (with a control: the same comparison catches pages kept past a change
when the marks are not looked at)."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore, BoardRow
from referee.results.league_store import GroupRow, VersionRow
from referee.results.web_queries import WebStore
from referee.web import auth
from referee.web.answers import Answers
from referee.web.app import create_app
from referee.web.published import Lag, Published
from referee.web.settings import WebSettings
from tests.webdb import WebDb, game, stored
from tests.webkit import base, db

__all__ = ["base", "db"]  # the fixtures, used by name

#: Every route a crowd reads, as a visitor asks for it (``{game}``: a game of a complete group).
#: Tries a route gets to find no mark moving between its two answers before the writer is held for it.
QUIET_TRIES = 10
ROUTES = ("/", "/api/board", "/api/bots/alpha", "/bots/alpha", "/api/bots/beta", "/games", "/api/games",
          "/games?verdict=crash", "/api/games?verdict=any&players=2", "/games?bot=alpha", "/api/games?page=2",
          "/games/{game}", "/api/games/{game}", "/authors/alice", "/api/authors/bob")
#: The marks read at every request (``marks_seconds=0``): these tests compare pages with the database as it is at
#: that moment; a worker's reading trusted for a while is tested on its own (test_a_reading_of_the_marks_...).
SETTINGS = WebSettings(rate_burst=10**9, rate_per_second=10**6, marks_seconds=0)


def marks(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as connection:
        return dict(connection.execute("SELECT name, value FROM read_marks").fetchall())


def play_group(store: ArenaStore, league_id: int, number: int, seats: tuple[str, str]) -> None:
    """A deal group of ``seats`` issued, both its games stored, and completed."""
    store.issue_group(league_id, GroupRow(number=number, deal_seed=number, seats=seats, anchor=seats[0]))
    for rotation in range(2):
        names = list(seats[rotation:] + seats[:rotation])
        store.save_slots(league_id, [[stored(game(names, 100 + number, f"g{number}", ["", ""]), number, rotation)]])
    store.close_group(league_id, number, "complete")


def test_each_write_raises_the_marks_of_what_it_changes(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.add_version(league.id, VersionRow(name="gamma@1", bot="gamma", number=1, author="bob", command=["x"],
                                                env={}, dir="", sha256="g"))
        steps: list[tuple[str, Any]] = [
            ("versions", lambda: store.set_version(league.id, "beta@1", retired=True)),
            ("board", lambda: store.save_board(league.id, [BoardRow("alpha@1", 1, 1.0, 2.0, 3, "2026-02-01")])),
            ("authors", lambda: store.add_author("carol", "0" * 64)),
            ("league", lambda: store.update_config(league.id, "name = \"web test league\"\nplayers = [2]\n")),
        ]
        for mark, write in steps:
            before = marks(db.path)
            write()
            after = marks(db.path)
            assert {name for name in after if after[name] != before.get(name)} == {mark}, mark
        before = marks(db.path)
        play_group(store, league.id, 50, ("gamma@1", "beta@1"))  # a group completing: its bots' pages and lists
        after = marks(db.path)
        assert {name for name in after if after[name] != before.get(name)} == {"games", "bot:gamma", "bot:beta"}
        before = marks(db.path)
        store.issue_group(league.id, GroupRow(number=51, deal_seed=51, seats=("gamma@1", "beta@1"),
                                              anchor="gamma@1"))
        store.save_slots(league.id, [[stored(game(["gamma@1", "beta@1"], 151, "g51", ["", ""]), 51, 0)]])
        assert marks(db.path) == before  # an open group's games: no visitor sees them, no page changes


def test_a_visitor_gets_the_kept_bytes_and_a_304_for_the_etag_they_hold(db: WebDb) -> None:
    with TestClient(create_app(db.path, SETTINGS)) as client:
        first = client.get("/api/games")
        assert first.status_code == 200 and first.headers["cache-control"] == "public, max-age=5"
        etag = first.headers["etag"]
        assert first.headers["last-modified"].endswith(" GMT") and "Cookie" in first.headers["vary"]
        again = client.get("/api/games", headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        assert db.games["open"] not in [g["number"] for g in first.json()["games"]]
        with ArenaStore(db.path) as store:
            league = store.league()
            assert league is not None
            store.close_group(league.id, 1, "complete")  # the open group's game may now be seen
        changed = client.get("/api/games", headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        assert db.games["open"] in [g["number"] for g in changed.json()["games"]]
        signed_in = client.get("/api/games", headers={"Authorization": f"Bearer {db.tokens['alice']}",
                                                      "If-None-Match": changed.headers["etag"]})
        assert signed_in.status_code == 200 and "etag" not in signed_in.headers  # never from what is kept


def test_every_route_says_its_media_type_once(db: WebDb) -> None:
    """Each route a crowd reads names its media type and charset once, kept or built for a signed-in viewer, as do
    the login page and an error page (Litestar adds the charset of a text type itself: naming it too made every
    page's ``text/html; charset=utf-8; charset=utf-8``)."""
    number = db.games["complete0"]
    anonymous = {"Accept": "text/html"}
    signed_in = {**anonymous, "Authorization": f"Bearer {db.tokens['alice']}"}
    with TestClient(create_app(db.path, SETTINGS)) as client:
        for route in (*ROUTES, "/login", "/games/999999"):
            url = route.format(game=number)
            wanted = "application/json" if url.startswith("/api/") else "text/html; charset=utf-8"
            for headers in (anonymous, signed_in):
                answer = client.get(url, headers=headers)
                assert answer.headers["content-type"] == wanted, (url, headers)


class Writer(threading.Thread):
    """The daemon's writes, on and on: groups completing (and some left open), refits, a version now and then."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.stop, self.writes = path, threading.Event(), 0
        self.turn = threading.Lock()  # held for each write: a reader that holds it sees no mark move

    def run(self) -> None:
        with ArenaStore(self.path) as store:
            league = store.league()
            assert league is not None
            bots = ["alpha@1", "beta@1"]
            for number in itertools.count(100):
                if self.stop.is_set():
                    return
                with self.turn:
                    self._write(store, league.id, number, bots)
                self.writes += 1
                time.sleep(0.01)

    def _write(self, store: ArenaStore, league_id: int, number: int, bots: list[str]) -> None:
        """One write of the daemon's kinds, chosen by ``number``."""
        if number % 7 == 0:
            name = f"w{number}@1"
            store.add_version(league_id, VersionRow(name=name, bot=f"w{number}", number=1, author="bob",
                                                    command=["x"], env={}, dir="", sha256=name))
            bots.append(name)
        seats = (bots[number % len(bots)], bots[(number + 1) % len(bots)])
        if number % 5 == 0:  # left open: its game is stored, seen by nobody but the admin
            store.issue_group(league_id, GroupRow(number=number, deal_seed=number, seats=seats,
                                                  anchor=seats[0]))
            store.save_slots(league_id, [[stored(game(list(seats), number, f"g{number}", ["", ""]),
                                                 number, 0)]])
        else:
            play_group(store, league_id, number, seats)
        if number % 3 == 0:
            store.save_board(league_id, [BoardRow(name, rank, float(number - 10 * rank), 9.0, number,
                                                  f"2026-03-01T00:{number // 60 % 60:02d}:{number % 60:02d}")
                                         for rank, name in enumerate(bots, 1)])


@pytest.fixture
def writer(db: WebDb) -> Iterator[Writer]:
    running = Writer(db.path)
    running.start()
    yield running
    running.stop.set()
    running.join()


def compare_while_written(db: WebDb, writer: Writer, seconds: float) -> tuple[set[str], list[str]]:
    """Each route as kept (one app) and built afresh (an app that keeps nothing), asked in turn while the writer
    writes; compared whenever no mark moved between the two: the routes compared, and those that differed. A route
    that found no such moment in :data:`QUIET_TRIES` tries (a loaded machine's slow answers) is asked once with
    the writer held between two writes, its kept page built under marks that have moved since."""
    compared: set[str] = set()
    differed: list[str] = []
    tries = dict.fromkeys(ROUTES, 0)
    kept, fresh = create_app(db.path, SETTINGS), create_app(db.path, WebSettings(**{
        **{f: getattr(SETTINGS, f) for f in ("rate_burst", "rate_per_second")}, "kept_bytes": 0}))
    with TestClient(kept) as one, TestClient(fresh) as other:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline or compared != set(ROUTES):
            for route in ROUTES:
                url = route.format(game=db.games["complete0"])
                tries[route] += 1
                held = route not in compared and tries[route] > QUIET_TRIES
                with writer.turn if held else contextlib.nullcontext():
                    before = marks(db.path)
                    a, b = one.get(url), other.get(url)
                    if marks(db.path) != before:
                        continue
                assert a.status_code == b.status_code == 200, (url, a.status_code, b.status_code)
                compared.add(route)
                if a.content != b.content:
                    differed.append(url)
    return compared, differed


def test_a_kept_page_is_the_fresh_page_while_the_daemon_writes(db: WebDb, writer: Writer) -> None:
    compared, differed = compare_while_written(db, writer, 4.0)
    assert writer.writes > 50 and compared == set(ROUTES), (writer.writes, compared)
    assert differed == []


def test_control_pages_kept_past_their_marks_are_caught(db: WebDb, writer: Writer,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison catches what it must: with the marks not looked at, kept pages go stale and differ."""
    def blind(self: Published, key: str, names: tuple[str, ...], pool: str = "pages") -> Any:
        with self._lock:
            found = self._pools[pool].pages.get(key)
        return None if found is None else found.page
    monkeypatch.setattr(Published, "kept", blind)
    _, differed = compare_while_written(db, writer, 3.0)
    assert differed


def test_a_reading_of_the_marks_serves_kept_pages_without_a_query_until_it_is_older_than_its_seconds(
        db: WebDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker reads the marks once per ``marks_seconds`` (here 10, on a clock the test moves): a kept page is
    served with no query in between, stays as built when a refit moves its mark within those seconds (the staleness
    ``marks_seconds`` allows, inside ``public_seconds``), and is built again once the reading is older. The control:
    at ``marks_seconds = 0`` the same refit is seen at the next request."""
    reads: list[str] = []
    for method in ("marks", "all_marks"):
        real = getattr(WebStore, method)
        monkeypatch.setattr(WebStore, method, lambda self, *args, _real=real, _name=method: (
            reads.append(_name), _real(self, *args))[1])

    def board_mark(store: WebStore, facts: Any) -> tuple[bytes, str]:
        return str(store.marks(("board",)).values[0]).encode(), "text/plain"

    def refit() -> None:
        with ArenaStore(db.path) as store:
            league = store.league()
            assert league is not None
            store.save_board(league.id, [BoardRow("alpha@1", 1, 1.0, 1.0, 2, "2026-02-01T00:00:00")])

    now = [100.0]
    for seconds in (10.0, 0.0):
        published = Published(db.path, 1 << 20, seconds, clock=lambda: now[0])
        depends = ("versions", "league", "board")
        built = published.make("board", depends, board_mark)
        assert published.kept("board", depends) == built
        reads.clear()
        for _ in range(50):
            assert published.kept("board", depends) == built
        assert reads == ([] if seconds else ["marks"] * 50)  # a reading trusted for 10 s: no query at all
        refit()
        if seconds:
            now[0] += seconds - 0.001
            assert published.kept("board", depends) == built  # within the reading's seconds: as built
            now[0] += 0.001
        assert published.kept("board", depends) is None  # the reading is read again: the board moved
        again = published.make("board", depends, board_mark)
        assert int(again.body) == int(built.body) + 1 and published.kept("board", depends) == again


def test_the_marks_that_move_with_every_group_are_read_once_per_games_seconds(db: WebDb) -> None:
    """A bot's mark (and the games lists') moves at every deal group the league completes: a worker reads them at
    most once per ``games_seconds`` (10 here), the rest once per ``marks_seconds`` (1). So a bot page stays as built
    for up to 10 s of groups, and a refit (its ``board`` mark) is seen within 1 s as before. The control: with no
    lagging marks, the same group is seen within 1 s."""
    def raise_mark(name: str) -> None:
        with sqlite3.connect(db.path) as connection:
            connection.execute("INSERT INTO read_marks (name, value, changed) VALUES (?, 1, 0) ON CONFLICT(name) "
                               "DO UPDATE SET value = value + 1", (name,))

    def page(store: WebStore, facts: Any) -> tuple[bytes, str]:
        return repr(store.marks(("board", "bot:alpha")).values).encode(), "text/plain"

    depends = ("versions", "league", "board", "bot:alpha")
    for lagging in (("games", "bot:"), ()):
        now = [100.0]
        published = Published(db.path, 1 << 20, 1.0, clock=lambda: now[0], lag=Lag(lagging, 10.0))  # noqa: B023
        built = published.make("bot alpha", depends, page)
        assert published.kept("bot alpha", depends) == built  # the marks read at 100 s
        raise_mark("bot:alpha")  # a group of alpha's completes
        now[0] += 1.0
        if not lagging:  # the control: seen at the next reading of the marks
            assert published.kept("bot alpha", depends) is None
            continue
        assert published.kept("bot alpha", depends) == built  # read at 101 s, but the bot's mark as of 100 s
        now[0] += 8.0
        assert published.kept("bot alpha", depends) == built
        now[0] += 1.0  # the lagging reading is 10 s old: the group is seen
        assert published.kept("bot alpha", depends) is None
        again = published.make("bot alpha", depends, page)
        assert again.body != built.body and published.kept("bot alpha", depends) == again
        raise_mark("board")  # a refit: seen at the next reading, 1 s on
        now[0] += 1.0
        assert published.kept("bot alpha", depends) is None


def test_replays_are_kept_in_a_pool_of_their_own(db: WebDb) -> None:
    """A crowd's replays are nearly all different games: however many are kept, they push out only replays, never
    the pages a crowd asks for again (the control: in one pool, the bot page is pushed out)."""
    def page(size: int) -> Any:
        return lambda store, facts: (b"x" * size, "text/plain")

    depends = ("versions", "league")
    for pool in ("replays", "pages"):
        published = Published(db.path, 400_000)  # pages 300,000 bytes, replays 100,000
        bot = published.make("bot alpha", depends, page(50_000))
        for number in range(40):
            published.make(f"game {number}", depends, page(30_000), pool)
        assert published.kept("game 39", depends, pool) is not None
        assert (published.kept("bot alpha", depends) == bot) is (pool == "replays"), pool


def test_a_page_of_games_that_no_longer_change_is_kept_through_groups_and_is_the_fresh_page(
        db: WebDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """A page of the games older than a number below every group in flight (``settled_below``) counts nothing and
    shows games whose groups are over for good: kept while groups complete (not built again), and still the page
    built afresh. A page that reaches into a group in flight is not kept past it: when that group completes, its
    game shows. The control: with every such page taken as settled, that game stays hidden on the kept page."""
    builds: list[int] = []
    real_games = Answers.games
    monkeypatch.setattr(Answers, "games", lambda self, wanted, per_page: (builds.append(1),
                                                                          real_games(self, wanted, per_page))[1])
    opened = db.games["open"]
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        for number in range(60, 63):
            play_group(store, league.id, number, ("alpha@1", "beta@1"))
        with WebStore(db.path) as web_store:
            assert web_store.settled_below(league.id) == opened  # the group in flight's game
    settled, reaching = f"/api/games?page=3&before={opened}", f"/api/games?page=2&before={opened + 1}"
    settings = {**{f: getattr(SETTINGS, f) for f in ("rate_burst", "rate_per_second", "marks_seconds")},
                "games_per_page": 1}
    with TestClient(create_app(db.path, WebSettings(**settings))) as kept, \
            TestClient(create_app(db.path, WebSettings(**settings, kept_bytes=0))) as fresh:
        first = kept.get(settled)
        assert first.json()["total"] is None and first.json()["games"]
        assert opened not in [g["number"] for g in kept.get(reaching).json()["games"]]
        builds.clear()
        with ArenaStore(db.path) as store:
            play_group(store, league.id, 63, ("beta@1", "alpha@1"))  # the games mark moves
            again = kept.get(settled)
            assert builds == [] and again.content == first.content == fresh.get(settled).content  # kept, as fresh
            store.close_group(league.id, 1, "complete")  # the group in flight is over: its game may be seen
        shown = [g["number"] for g in kept.get(reaching).json()["games"]]
        assert shown == [opened] and kept.get(reaching).content == fresh.get(reaching).content

    monkeypatch.setattr(Published, "settled_below", lambda self: 10**9)  # the control: every keyset page settled
    with ArenaStore(db.path) as store:
        store.issue_group(league.id, GroupRow(number=70, deal_seed=70, seats=("alpha@1", "beta@1"),
                                              anchor="alpha@1"))
        store.save_slots(league.id, [[stored(game(["alpha@1", "beta@1"], 170, "g70", ["", ""]), 70, 0)]])
        newest = store.count_games(league.id)
        with TestClient(create_app(db.path, WebSettings(**settings))) as kept:
            page = f"/api/games?page=1&before={newest + 1}"
            assert newest not in [g["number"] for g in kept.get(page).json()["games"]]
            store.close_group(league.id, 70, "void")
            assert newest not in [g["number"] for g in kept.get(page).json()["games"]]  # kept past its change
    with TestClient(create_app(db.path, WebSettings(**settings, kept_bytes=0))) as fresh:
        assert newest in [g["number"] for g in fresh.get(page).json()["games"]]  # where it shows


def test_a_refit_takes_the_lagging_marks_up_to_date_so_a_bot_page_is_built_once_per_refit(db: WebDb) -> None:
    """A bot page shows the board (a refit every 10 s here) and the bot's groups (one a second, read once per
    ``games_seconds``, 10). Caught up at each refit, the page is built once per refit, and never shows groups more
    than 10 s old. The control: a lagging reading of its own, taken at other moments, has the page built about
    twice per refit."""
    def raise_mark(name: str) -> None:
        with sqlite3.connect(db.path) as connection:
            connection.execute("INSERT INTO read_marks (name, value, changed) VALUES (?, 1, 0) ON CONFLICT(name) "
                               "DO UPDATE SET value = value + 1", (name,))

    def mark(name: str) -> int:
        with sqlite3.connect(db.path) as connection:
            row = connection.execute("SELECT value FROM read_marks WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    depends = ("versions", "league", "board", "bot:alpha")
    for catch_up in (("board",), ()):
        now, builds, groups = [100.0], [0], {}  # groups: the bot's mark as it stood at each second

        def page(store: WebStore, facts: Any) -> tuple[bytes, str]:
            builds[0] += 1  # noqa: B023
            return repr(store.marks(("bot:alpha",)).values[0]).encode(), "text/plain"

        published = Published(db.path, 1 << 20, 1.0, clock=lambda: now[0],  # noqa: B023
                              lag=Lag(("bot:",), 10.0, catch_up))
        for tick in range(1200):  # 60 s, a request every 0.05 s
            now[0] = 100.0 + tick * 0.05
            if tick % 20 == 7:
                raise_mark("bot:alpha")  # a group completes
                groups[tick // 20] = mark("bot:alpha")
            if tick % 200 == 150:
                raise_mark("board")  # a refit, at 107.5 s, 117.5 s...
            shown = published.kept("bot alpha", depends) or published.make("bot alpha", depends, page)
            if tick >= 220:  # the page shows every group stored 10 s (and the reading's second) before
                assert int(shown.body) >= groups[tick // 20 - 11], (catch_up, now[0])
        if catch_up:
            assert builds[0] <= 8, builds  # the first, and one per refit (6)
        else:
            assert builds[0] >= 11, builds  # the control: a refit's and a lagging reading's


def test_a_bot_page_is_drawn_from_its_kept_json_answer_and_is_the_page_drawn_from_the_answer_built(
        db: WebDb, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's HTML page and its JSON answer cost one set of queries: whichever is asked for first keeps the
    answer's bytes, and the other is drawn from them (while its marks stand). The page drawn from the decoded bytes
    is, byte for byte, the page drawn from the answer as built. The control: with nothing kept, each asks again."""
    built: list[str] = []
    real = Answers.bot
    monkeypatch.setattr(Answers, "bot", lambda self, name: (built.append(name), real(self, name))[1])
    quick = {f: getattr(SETTINGS, f) for f in ("rate_burst", "rate_per_second", "marks_seconds")}
    urls = ("/api/bots/alpha", "/bots/alpha", "/bots/beta", "/api/bots/beta")
    for kept_bytes in (SETTINGS.kept_bytes, 0):
        built.clear()
        with TestClient(create_app(db.path, WebSettings(**quick, kept_bytes=kept_bytes))) as client:
            pages = {url: client.get(url) for url in urls}
            assert client.get("/bots/nobody").status_code == client.get("/api/bots/nobody").status_code == 404
        assert all(page.status_code == 200 for page in pages.values())
        assert built == (["alpha", "beta", "nobody", "nobody"] if kept_bytes else
                         ["alpha", "alpha", "beta", "beta", "nobody", "nobody"])
    built.clear()  # a failed session cookie's page is built for it (no read transaction): no twin kept from it
    with TestClient(create_app(db.path, WebSettings(**quick))) as client:
        client.cookies.set(auth.SESSION_COOKIE, "forged")
        assert client.get("/bots/alpha").status_code == 200
        client.cookies.clear()
        assert client.get("/api/bots/alpha").content == pages["/api/bots/alpha"].content
    assert built == ["alpha", "alpha"]
    with monkeypatch.context() as direct:  # each page drawn from the answer as built, no twin
        direct.setattr("referee.web.pages.twin", lambda ctx, key, marks, make, kind: make(ctx))
        with TestClient(create_app(db.path, WebSettings(**quick, kept_bytes=0))) as client:
            for url in ("/bots/alpha", "/bots/beta"):
                assert client.get(url).content == pages[url].content, url
