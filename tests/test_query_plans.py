"""Every query the web's routes run reads through an index: none scans a games-sized table or sorts one in a temp
B-tree, so that a page costs the same at a thousand games as at a million (issue 36).

The routes are enumerated from the app itself (a new route without a request here fails the test), each called
with a TestClient by the admin, an author and the anonymous (the games lists with every filter and page kind), while
every SQL statement the web's connections run is captured (sqlite3's trace callback, its parameters bound); then
each one's EXPLAIN QUERY PLAN is read. The planner has no statistics here (nothing runs ANALYZE), so the plans
are those of a league of a million games too."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from referee.results import web_queries
from referee.results.arena_store import ArenaStore
from referee.results.league_store import VersionRow
from referee.web import auth
from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.webdb import WebDb, built

#: Tables that grow with the games stored (or with time: rating points, a table's messages and moves): a query
#: may read them only by an index's seek or range.
GAMES_SIZED = frozenset({"games", "superseded_games", "league_seats", "league_games", "league_verdicts",
                         "league_meetings", "league_bot_meetings", "league_groups", "league_rating_history",
                         "human_messages", "human_moves"})
VIEWERS = ("admin", "alice", "anonymous")
#: The games lists' query strings: every filter alone and together, pages by number and by their links' keysets.
GAMES_QUERIES = ("", "?bot=alpha", "?verdict=crash", "?verdict=any", "?players=2", "?bot=alpha&verdict=any&players=2",
                 "?bot=alpha&verdict=crash", "?verdict=crash&players=2", "?verdict=any&players=2", "?page=2",
                 "?page=2&before=2", "?page=1&after=1", "?bot=alpha&page=2&before=2", "?bot=alpha&page=1&after=1",
                 "?verdict=crash&page=2&before=9", "?verdict=any&page=2&before=9", "?players=2&page=2&before=9",
                 "?bot=nobody")
NOT_STATEMENTS = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SAVEPOINT", "RELEASE", "--")
_KEYWORDS = {"WHERE", "JOIN", "LEFT", "INNER", "CROSS", "ON", "ORDER", "GROUP", "LIMIT", "USING", "UNION", "SET",
             "VALUES", "NATURAL", "AND", "OR", "AS"}


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[WebDb, Litestar, list[str]]]:
    """The web tests' league (with a second version of alpha: a bot of two versions) and its app, every statement
    of the web's connections captured."""
    for db in built("durak-test-plans-", extra_bots={"gamma": "bob"}):  # removed after the module's tests
        yield from _traced(db)


def _traced(db: WebDb) -> Iterator[tuple[WebDb, Litestar, list[str]]]:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.add_version(league.id, VersionRow(name="alpha@2", bot="alpha", number=2, author="alice", command=["x"],
                                                env={}, dir=str(db.path.parent), sha256="alpha2"))
    statements: list[str] = []
    opened = web_queries.open_shared

    def tracing(path: Path) -> sqlite3.Connection:
        connection = opened(path)
        connection.set_trace_callback(statements.append)
        return connection

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(web_queries, "open_shared", tracing)
        app = create_app(db.path, WebSettings(rate_burst=100_000, table_stream_seconds=0.2, games_per_page=2))
        yield db, app, statements


def path_of(template: str, db: WebDb) -> str:
    """A route's path with real objects of the league in its parameters."""
    values = {"name": "alice" if "/authors/" in template else "web.css" if "/static/" in template else "alpha",
              "number": 1 if "/challenges/" in template else db.games["complete0"],
              "upload_id": db.uploads["alice"], "challenge_id": db.challenges["alice"], "table_id": db.table,
              "action": "retire", "path": "nothing"}
    return re.sub(r"\{(\w+):\w+\}", lambda m: str(values[m.group(1)]), template)


def credentials(db: WebDb, client: TestClient[Any], viewer: str, api: bool) -> dict[str, str]:
    """The viewer's Bearer token (API) or a fresh session cookie (pages); the headers, and the form's CSRF token as
    ``csrf``."""
    client.cookies.clear()
    if viewer == "anonymous":
        return {}
    if api:
        return {"Authorization": f"Bearer {db.tokens[viewer]}"}
    with ArenaStore(db.path) as store:
        author = store.author(viewer)
        assert author is not None
        cookie = auth.sign_session(store, store.web_key(), author)
        session = auth.verify_session(store, store.web_key(), cookie, 3600)
        assert session is not None
        client.cookies.set(auth.SESSION_COOKIE, cookie)
        return {"csrf": auth.session_csrf(store.web_key(), session)}


def post(db: WebDb, client: TestClient[Any], viewer: str, path: str) -> int:
    """A write of the route at ``path`` as it is made (JSON for the API, a form with its CSRF token for a page)."""
    api = path.startswith("/api/")
    given = credentials(db, client, viewer, api)
    csrf = given.pop("csrf", "")
    if path == "/api/uploads":
        return client.post("/api/uploads?bot=alpha", content=b"\x1f\x8barchive",
                           headers={**given, "Content-Type": "application/gzip"}).status_code
    if path == "/upload":
        return client.post(path, data={"csrf": csrf, "bot": "alpha"}, files={"archive": ("a.tgz", b"\x1f\x8bx")},
                           follow_redirects=False).status_code
    if path == "/login":
        page = client.get("/login").text
        token = re.search(r'name="csrf" value="([^"]+)"', page)
        assert token is not None
        return client.post(path, data={"csrf": token.group(1), "token": db.tokens.get(viewer, "durak_1_x")},
                           follow_redirects=False).status_code
    bodies: dict[str, dict[str, Any]] = {
        "/api/challenges": {"bot": "alpha", "opponents": ["beta"], "games": 2}, "/api/admin/finals": {"top": 2},
        "/api/admin/retire": {"bot": "gamma"}, "/api/tables": {"variant": "podkidnoy", "bots": ["beta@1"]},
        f"/api/tables/{db.table}/moves": {"request": 0, "action": "pass"}, f"/api/tables/{db.table}/resign": {},
        "/challenges": {"bot": "alpha", "opponents": "beta", "games": "2"}, "/admin/finals": {"top": "2"},
        "/admin/retire": {"bot": "gamma"}, "/tables": {"variant": "podkidnoy", "bots": "beta@1"}, "/logout": {},
        f"/api/games/{db.games['complete0']}/analyses": {"seat": 0}, f"/games/{db.games['complete0']}/analyses":
        {"seat": "0"}, f"/api/tables/{db.table}/analysis": {}, f"/tables/{db.table}/analysis": {}}
    body = bodies[path]  # a route without a body here: add one
    if api:
        return client.post(path, json=body, headers=given).status_code
    return client.post(path, data={"csrf": csrf, **body}, follow_redirects=False).status_code


def call_every_route(db: WebDb, app: Litestar) -> set[tuple[str, str]]:
    """Every route of the app, by each viewer; returns the (method, route) pairs called. :raises AssertionError:
    a route answered 500."""
    called = set()
    with TestClient(app) as client:
        for route in app.routes:
            for method in sorted(set(getattr(route, "methods", ())) & {"GET", "POST"}):
                path = path_of(route.path, db)
                for viewer in VIEWERS:
                    if method == "POST":
                        status = post(db, client, viewer, path)
                        assert status < 500, (method, path, viewer, status)
                        continue
                    for query in GAMES_QUERIES if path in ("/games", "/api/games") else ("",):
                        headers = credentials(db, client, viewer, path.startswith("/api/"))
                        headers.pop("csrf", None)
                        status = client.get(path + query, headers=headers, follow_redirects=False).status_code
                        assert status < 500, (method, path + query, viewer, status)
                called.add((method, route.path))
    return called


def tables_of(sql: str) -> dict[str, str]:
    """Each name a statement reads a table by (its alias, or the table's own name) -> the table."""
    names = {}
    for table, alias in re.findall(r"\b(?:FROM|JOIN|UPDATE)\s+(\w+)(?:\s+(?:AS\s+)?(\w+))?", sql, re.IGNORECASE):
        names[table] = table
        if alias and alias.upper() not in _KEYWORDS:
            names[alias] = table
    return names


def plan_steps(connection: sqlite3.Connection, sql: str) -> list[str]:
    return [row[3] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}")]


def problems(connection: sqlite3.Connection, sql: str) -> list[str]:
    """What is wrong with a statement's plan: a scan of a games-sized table; a search of one bounded by nothing but
    its league (every game of the league: the index of a partial index's rows aside) in a statement with no LIMIT;
    or a temp B-tree in a statement that reads one."""
    plan = plan_steps(connection, sql)
    names = tables_of(sql)
    leagues = {row[0] for row in connection.execute("SELECT id FROM tournaments WHERE kind = 'league'")}
    partial = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND "
                                                    "sql LIKE '% WHERE %'")}
    of_a_league = bool(leagues & {int(n) for n in re.findall(r"tournament_id = (\d+)", sql)})
    found = []
    sized = False
    for detail in plan:
        step = re.match(r"(SCAN|SEARCH) (\w+)(?: USING (?:COVERING )?INDEX (\w+))?", detail)
        if step and names.get(step.group(2), step.group(2)) in GAMES_SIZED:
            sized = True
            whole_league = detail.endswith("(tournament_id=?)") and of_a_league and " LIMIT " not in sql
            if step.group(1) == "SCAN" or (whole_league and step.group(3) not in partial):
                found.append(detail)
    if sized:
        found += [detail for detail in plan if "USE TEMP B-TREE" in detail]
    return found


def test_every_route_is_called_and_none_scans_or_sorts_a_games_sized_table(
        traced: tuple[WebDb, Litestar, list[str]]) -> None:
    db, app, statements = traced
    called = call_every_route(db, app)
    routes = {(method, route.path) for route in app.routes
              for method in set(getattr(route, "methods", ())) & {"GET", "POST"}}
    assert called == routes
    queries = {sql for sql in statements if not sql.lstrip().upper().startswith(NOT_STATEMENTS)}
    assert any("league_bot_meetings" in sql for sql in queries)  # the capture saw the pages' reads
    with sqlite3.connect(db.path) as connection:
        bad = {sql: found for sql in sorted(queries) if (found := problems(connection, sql))}
    assert not bad, "\n\n".join(f"{sql}\n  -> {found}" for sql, found in bad.items())


def test_the_check_catches_a_scan_and_a_sort(traced: tuple[WebDb, Litestar, list[str]]) -> None:
    """The checker itself: the head to head as it was counted before schema 9 (a self-join of the seats grouped in a
    temp B-tree), the games list's old table-size filter (a JSON function over every record) and its old count, and
    a count of the open groups' games that reads the league's every game fail it."""
    db = traced[0]
    with sqlite3.connect(db.path) as connection:
        assert problems(connection, "SELECT o.version, COUNT(*) FROM league_seats s JOIN league_seats o ON "
                                    "o.game_id = s.game_id AND o.version NOT IN ('alpha@1') WHERE s.tournament_id = 1 "
                                    "AND s.version IN ('alpha@1') GROUP BY o.version")
        assert problems(connection, "SELECT COUNT(*) FROM games g WHERE json_array_length(g.record, '$.players') = 2")
        # The games list's count before schema 9: every game of the league, through its index by number
        assert problems(connection, "SELECT COUNT(*) FROM games g LEFT JOIN league_groups lg ON lg.tournament_id = "
                                    "g.tournament_id AND lg.deal_key = g.deal_key WHERE g.tournament_id = 1 AND "
                                    "COALESCE(lg.status, 'complete') != 'open'")
        # The games of open groups found from the league's every game (the planner's own order without a CROSS JOIN)
        assert problems(connection, "SELECT COUNT(*) FROM league_games x JOIN league_groups lg ON lg.tournament_id = "
                                    "x.tournament_id AND lg.deal_key = x.deal_key WHERE x.tournament_id = 1 AND "
                                    "lg.status = 'open'")


def test_the_games_with_a_verdict_and_a_size_are_found_by_their_size(
        traced: tuple[WebDb, Litestar, list[str]]) -> None:
    """The list filtered by any verdict and a table size counts and pages through the index of the games with
    verdicts by size (schema 14), not a row of each game with a verdict (8.5 ms at a million games; its index alone,
    0.07). The control: the same count with the size kept off the index is planned through the league alone."""
    db, app, statements = traced
    with TestClient(app) as client:
        assert client.get("/api/games?verdict=any&players=2").status_code == 200
    filtered = {sql for sql in statements if "x.verdicts > 0" in sql and "x.players = " in sql}
    assert filtered
    with sqlite3.connect(db.path) as connection:
        for sql in filtered:
            assert any("league_games_with_verdicts_by_size (tournament_id=? AND players=?)" in step
                       for step in plan_steps(connection, sql)), sql
        control = plan_steps(connection, "SELECT COUNT(*) FROM league_games x WHERE x.tournament_id = 1 AND "
                                         "x.verdicts > 0 AND +x.players = 2")
        assert control == ["SEARCH x USING INDEX league_games_with_verdicts (tournament_id=?)"]


def test_a_bots_verdict_kinds_read_only_its_seats_with_a_verdict(traced: tuple[WebDb, Litestar, list[str]]) -> None:
    """A bot page's verdict kinds read the seats of its versions that have a verdict, through their own index
    (schema 15): a range of the primary key by version passes the check above, but reads every seat of the bot for
    the few with a verdict (1.2 ms of a bot page's 3 at a million games; 0.14 at 100k). The control: the same
    statement with the verdict's term kept off the index is planned down the primary key, every seat of the bot."""
    db, app, statements = traced
    statements.clear()
    with TestClient(app) as client:  # signed in: built for the viewer, whatever is kept from the tests before
        assert client.get("/api/bots/alpha", headers=credentials(db, client, "alice", True)).status_code == 200
    kinds = {sql for sql in statements if sql.startswith("SELECT s.verdict AS kind")}
    assert kinds
    with sqlite3.connect(db.path) as connection:
        for sql in kinds:
            steps = plan_steps(connection, sql)
            assert ("SEARCH s USING COVERING INDEX league_seats_with_verdicts (tournament_id=? AND version=? AND "
                    "verdict>?)") in steps, (sql, steps)
            control = plan_steps(connection, sql.replace("s.verdict IS NOT NULL", "+s.verdict IS NOT NULL"))
            assert "SEARCH s USING PRIMARY KEY (tournament_id=? AND version=?)" in control, control



def test_a_bots_games_are_counted_from_its_versions_counts(traced: tuple[WebDb, Litestar, list[str]]) -> None:
    """A bot's unfiltered games list counts its versions' rows of ``league_version_seats`` (schema 15, kept as seats
    are stored), not its seats: a range by version passes the check above, but grows with the games (0.2 ms a
    version at a million games, 26 us at 100k). The control: counting the seats is planned down their primary key."""
    db, app, statements = traced
    statements.clear()
    with TestClient(app) as client:  # signed in: built for the viewer, whatever is kept from the tests before
        assert client.get("/api/games?bot=alpha", headers=credentials(db, client, "alice", True)).status_code == 200
    counts = [sql for sql in statements if sql.startswith("SELECT COALESCE(SUM(seats), 0)")]
    assert counts and not any(sql.startswith("SELECT COUNT(*) AS games FROM league_seats") for sql in statements)
    with sqlite3.connect(db.path) as connection:
        for sql in counts:
            assert plan_steps(connection, sql) == [
                "SEARCH league_version_seats USING PRIMARY KEY (tournament_id=? AND version=?)"], sql
        control = plan_steps(connection, "SELECT COUNT(*) FROM league_seats s WHERE s.tournament_id = 1 AND "
                                         "s.version IN ('alpha@1', 'alpha@2')")
        assert control == ["SEARCH s USING PRIMARY KEY (tournament_id=? AND version=?)"]
