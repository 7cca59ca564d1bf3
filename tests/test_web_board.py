"""Issue 38's board (item 17) and "one home for what the pages say" (item 21), on the answers sent: the board's
change over a day, its entered versions, its chart's leaders; its live part (last games, the last hour's games,
what plays now) showing nothing of groups in flight but to the admin; every address a page links to from
:mod:`referee.web.urls`, each the app's own route; the facts templates restate (the bot name's rule, the admin's
actions, the finals' bounds, an upload's final states) from the Python that owns them. The pages in Chromium:
tests/test_web_board_browser.py."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import unquote

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from referee.league.authors import AUTHOR_NAME, new_author
from referee.league.names import BOT_NAME
from referee.results.arena_store import UPLOAD_DONE, ArenaStore, BoardRow
from referee.results.league_store import GroupRow, VersionRow
from referee.results.requests import FinalsTop
from referee.results.web_queries import WebStore
from referee.web import live, urls
from referee.web.actions import ADMIN_ACTIONS
from referee.web.app import create_app
from referee.web.page_values import bounds, html_pattern
from referee.web.settings import WebSettings
from tests.webdb import OPEN_MARK, WebDb, game, stored
from tests.webkit import base, bearer, client_for, db, log_in

__all__ = ["base", "db"]  # the fixtures, used by name
#: The routes a form posts to (the rest are read).
POSTED = (urls.LOGOUT, urls.CHALLENGES, urls.ADMIN_FINALS, urls.ADMIN_ACTION, urls.TABLE_ANALYSIS, urls.GAME_ANALYSES)


@pytest.fixture
def client(db: WebDb) -> Iterator[TestClient[Litestar]]:
    with client_for(db) as client:
        yield client


def league_id(db: WebDb) -> int:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        return league.id


def as_viewer(db: WebDb, viewer: str) -> dict[str, str]:
    return {} if viewer == "anonymous" else bearer(db, viewer)


# -- the board: kept with the refit and the versions ---------------------------------------------------------------

def test_each_line_has_its_change_over_a_day_and_entered_versions_are_listed(db: WebDb,
                                                                             client: TestClient[Litestar]) -> None:
    """webdb's fits: 2026-01-01 (alpha 20, beta -20) and a day later (25, -25); a third fit half a day on compares
    with the first still (the last fit a day or more before it), a version added since is listed as entered."""
    with ArenaStore(db.path) as store:
        store.save_board(league_id(db), [BoardRow("beta@1", 1, 40.0, 10.0, 8, "2026-01-02T12:00:00"),
                                         BoardRow("alpha@1", 2, -40.0, 10.0, 8, "2026-01-02T12:00:00")])
        store.add_version(league_id(db), VersionRow(name="gamma@1", bot="gamma", number=1, author="bob",
                                                    command=["x"], env={}, dir="", sha256="g"))
    board = client.get("/api/board").json()
    changes = {line["version"]: line["change"] for line in board["lines"]}
    assert changes == {"beta@1": 40.0 - -20.0, "alpha@1": -40.0 - 20.0}
    assert [line["version"] for line in board["entered"]] == ["gamma@1"]
    assert board["entered"][0]["state"] == "active" and board["entered"][0]["author"] == "bob"
    assert board["leaders"] == ["beta@1"]  # alpha is quarantined: the chart draws the active versions
    assert {p["version"] for p in board["history"]} == {"beta@1"} and len(board["history"]) == 3
    page = client.get("/").text
    assert page.count("<polyline") == 1 and '<span class="swatch s0"></span>beta@1' in page
    assert re.search(r'<tr data-version="gamma@1"><td><a href="/bots/gamma">gamma@1</a>', page)
    assert '<td class="change">+60.0</td>' in page and '<td class="change">-60.0</td>' in page


def test_a_version_younger_than_a_day_has_no_change_but_new(db: WebDb, client: TestClient[Litestar]) -> None:
    with ArenaStore(db.path) as store:
        store.save_board(league_id(db), [BoardRow("beta@1", 1, 40.0, 10.0, 8, "2026-01-01T12:00:00")])
    board = client.get("/api/board").json()
    assert [line["change"] for line in board["lines"]] == [None]
    assert '<td class="change">new</td>' in client.get("/").text


def test_the_chart_draws_the_leaders_best_first_each_its_own_colour(db: WebDb,
                                                                     client: TestClient[Litestar]) -> None:
    with ArenaStore(db.path) as store:
        store.set_version(league_id(db), "alpha@1", quarantined=None)
        for name in ("gamma", "delta"):
            store.add_version(league_id(db), VersionRow(name=f"{name}@1", bot=name, number=1, author="bob",
                                                        command=["x"], env={}, dir="", sha256=name))
        store.save_board(league_id(db), [BoardRow(v, rank, 50.0 - 10 * rank, 5.0, 9, "2026-01-03T00:00:00")
                                         for rank, v in enumerate(("delta@1", "alpha@1", "gamma@1", "beta@1"), 1)])
    board = client.get("/api/board").json()
    assert board["leaders"] == ["delta@1", "alpha@1", "gamma@1", "beta@1"]
    page = client.get("/").text
    legend = re.findall(r'<span class="swatch s(\d)"></span>([^<]+)</li>', page)
    assert legend == [("0", "delta@1"), ("1", "alpha@1"), ("2", "gamma@1"), ("3", "beta@1")]
    assert [m for m in re.findall(r'<polyline class="s(\d)"', page)] == ["0", "1", "2", "3"]


# -- the live part: read afresh, nothing of a group in flight -------------------------------------------------------

def store_open_game(db: WebDb, number: int) -> None:
    """A group in flight of alpha against beta, one of its games stored (seen by nobody but the admin)."""
    with ArenaStore(db.path) as store:
        store.issue_group(league_id(db), GroupRow(number=number, deal_seed=number, seats=("beta@1", "alpha@1"),
                                                  anchor="beta@1"))
        store.save_slots(league_id(db), [[stored(game(["beta@1", "alpha@1"], number, f"g{number}",
                                                      [OPEN_MARK, OPEN_MARK]), number, 0)]])


def test_the_live_part_counts_the_last_hour_and_shows_nothing_of_groups_in_flight(
        db: WebDb, client: TestClient[Litestar]) -> None:
    """webdb stores four games now: 1 and 2 of a complete group, 3 of an open one, 4 of a void one. One more of a
    new group in flight (5) is the newest game of both bots: only the admin's answer names it or counts it."""
    store_open_game(db, 20)
    for viewer, last, hour in (("anonymous", 4, 3), ("alice", 4, 3), ("admin", 5, 5)):
        live = client.get(urls.BOARD_LIVE_API(), headers=as_viewer(db, viewer))
        assert live.status_code == 200 and live.headers["cache-control"] == "no-store"
        answer = live.json()
        assert answer["games_last_hour"] == hour, viewer
        assert answer["groups_playing"] == 2  # groups 1 and 20: that they are, not their games
        lines = {line["version"]: line for line in answer["lines"]}
        assert lines["alpha@1"]["last_game"] == lines["beta@1"]["last_game"] == last, viewer
        assert lines["alpha@1"]["last_url"] == f"/games/{last}" and lines["alpha@1"]["playing"] is True
        assert lines["alpha@1"]["games_last_hour"] == lines["beta@1"]["games_last_hour"] == hour, viewer
        assert OPEN_MARK not in live.text and "g20" not in live.text and "g1|" not in live.text


def test_the_last_hour_is_counted_from_the_games_times(db: WebDb, client: TestClient[Litestar]) -> None:
    """Games stored two hours ago drop out of the count (the bisection finds the first game of the hour, numbers
    with a gap included); a version with no game shown has none."""
    old = (datetime.now(UTC) - timedelta(hours=2)).isoformat(timespec="seconds")
    league = league_id(db)
    with closing(sqlite3.connect(db.path)) as connection, connection:
        connection.execute("UPDATE games SET finished = ? WHERE tournament_id = ? AND number <= 2", (old, league))
        connection.execute("UPDATE games SET number = 9 WHERE tournament_id = ? AND number = 4", (league,))
    with ArenaStore(db.path) as store:
        store.add_version(league_id(db), VersionRow(name="gamma@1", bot="gamma", number=1, author="bob",
                                                    command=["x"], env={}, dir="", sha256="g"))
    answer = client.get(urls.BOARD_LIVE_API()).json()
    assert answer["games_last_hour"] == 1  # game 9 (was 4; 3 is the open group's)
    lines = {line["version"]: line for line in answer["lines"]}
    assert lines["gamma@1"] == {"version": "gamma@1", "playing": False, "games_last_hour": 0, "last_game": None,
                                "last_played": None, "last_url": None}
    assert lines["alpha@1"]["games_last_hour"] == 1
    with WebStore(db.path) as store:
        for hours, first in ((3, 1), (1, 3)):
            since = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="seconds")
            found = store.first_game_since(league_id(db), since)
            assert found is not None and found[0] == first
        assert store.first_game_since(league_id(db), "2999-01-01T00:00:00+00:00") is None


# -- one home for each address and fact -----------------------------------------------------------------------------

def test_every_address_is_a_route_of_the_app_by_its_name_and_path(db: WebDb) -> None:
    """Each :mod:`referee.web.urls` route is served at its path and under its name (``route_reverse``'s), and each
    builder's address reaches that route with the values it was given."""
    app = create_app(db.path, WebSettings())
    served = {route.path for route in app.routes}
    named = {handler.name: handler for route in app.routes for handler in getattr(route, "route_handlers", ())
             if handler.name}
    samples: dict[str, str | int] = {"name": "a b+é", "number": 7, "challenge_id": 3, "action": "retire",
                                     "upload_id": 2, "table_id": 4}
    for route in urls.ROUTES:
        assert route.path in served, route
        if route is not urls.STATIC:  # /static is served by a handler of its own, unnamed
            assert route.path in named[route.name].paths, route
        values = {key: samples[key] for key in route.parameters}
        address = route(**values)
        method = "POST" if route in POSTED else "GET"
        _, handler, _, params, _ = app.asgi_router.handle_routing(unquote(address), method)  # as the server decodes
        assert route.path in handler.paths, (route, address)
        assert {key: params[key] for key in values} == values, (route, address)
    assert urls.games(bot="a&b", page=2, after=None) == "/games?bot=a%26b&page=2"
    assert urls.bot("a b+é") == "/bots/a%20b%2B%C3%A9"


def test_the_upload_form_takes_the_bot_names_rule_and_an_author_name_is_one(db: WebDb) -> None:
    """The upload form's pattern is BOT_NAME's (it allowed a leading dot, which names a hidden folder); an author's
    name follows the same rule (``..`` made /authors/.. an address that is not the author's page)."""
    assert html_pattern(BOT_NAME) == r"[A-Za-z0-9_+\-][A-Za-z0-9_.+\-]{0,63}"
    assert AUTHOR_NAME.pattern == BOT_NAME.pattern
    with ArenaStore(db.path) as store:
        for name in ("..", ".hidden"):
            with pytest.raises(ValueError, match="bad author name"):
                new_author(store, name)
        new_author(store, "carol.b")


def test_the_admin_page_offers_the_actions_and_bounds_python_has(db: WebDb, client: TestClient[Litestar]) -> None:
    log_in(client, db, "admin")
    page = client.get("/admin").text
    offered = re.findall(r'<form method="post" action="/admin/(\w+)">', page)
    assert offered and set(offered) == set(ADMIN_ACTIONS) and offered[:len(ADMIN_ACTIONS)] == list(ADMIN_ACTIONS)
    low, high = bounds(FinalsTop)
    assert f'name="top" type="number" min="{low}" max="{high}"' in page
    assert 'action="/admin/finals"' in page


def test_an_author_page_reloads_only_while_an_upload_is_not_final(db: WebDb, client: TestClient[Litestar]) -> None:
    log_in(client, db, "alice")
    assert "http-equiv" not in client.get("/authors/alice").text  # her upload is refused: final
    with ArenaStore(db.path) as store:
        store.add_upload(league_id(db), "alice", "alpha", b"\x1f\x8barchive", "00")
    assert 'http-equiv="refresh" content="2; url=/authors/alice"' in client.get("/authors/alice").text
    assert UPLOAD_DONE == ("accepted", "refused")


def test_no_template_or_script_spells_an_address() -> None:
    """Every link, form and script address of the pages comes from :mod:`referee.web.urls` (scripts: from the
    data their page or its JSON gives them)."""
    root = Path(__file__).resolve().parents[1] / "referee" / "web"
    for template in sorted((root / "templates").glob("*.html")):
        spelled = re.findall(r'(?:href|action|src)="/[^"]*"', template.read_text())
        assert spelled == [], template.name
    for script in ("board.js", "table_page.js"):
        text = (root / "static" / script).read_text()
        assert not re.search(r"""["'`]/(?:api|games|bots|authors|tables)\b""", text), script


def test_a_challenge_page_reloads_only_until_its_request_is_over(db: WebDb, client: TestClient[Litestar]) -> None:
    """Its final states come from the answer (``over``), not a list of the others written into the template."""
    log_in(client, db, "alice")
    done = client.get(urls.challenge(db.challenges["alice"]))
    assert done.status_code == 200 and "http-equiv" not in done.text
    with ArenaStore(db.path) as store:
        pending = store.add_side(league_id(db), "challenge", "alice", ("alpha@1", "beta@1"), 2)
    asked = client.get(urls.challenge(pending.id))
    assert '<meta http-equiv="refresh" content="3">' in asked.text
    answer = client.get(urls.CHALLENGE_API(challenge_id=pending.id), headers=as_viewer(db, "alice")).json()
    assert answer["over"] is False and answer["status"] == "pending"


def test_a_crowds_polls_share_one_answer_a_second(db: WebDb, client: TestClient[Litestar],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Anonymous polls within ``KEPT_SECONDS`` get the bytes made for the first; a signed-in viewer's is their own."""
    now = [100.0]
    monkeypatch.setattr(live, "_clock", lambda: now[0])
    first = client.get(urls.BOARD_LIVE_API()).content
    store_open_game(db, 20)
    with ArenaStore(db.path) as store:
        store.close_group(league_id(db), 20, "complete")
    now[0] += live.KEPT_SECONDS / 2
    assert client.get(urls.BOARD_LIVE_API()).content == first
    assert client.get(urls.BOARD_LIVE_API(), headers=as_viewer(db, "bob")).json()["games_last_hour"] == 4
    now[0] += live.KEPT_SECONDS
    assert client.get(urls.BOARD_LIVE_API()).json()["games_last_hour"] == 4  # game 5's group is complete now
