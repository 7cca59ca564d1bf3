"""The board in headless Chromium (issue 38, item 17): the top versions' chart, each line's change over a day, the
versions entered before their first refit, and the live cells (last game, playing now, the last hour's games)
filled by board.js from the live JSON; a refit and a new game reach an open page without a reload, the rows drawn
by the server alone (board.js puts the page's fresh #board in place). The upload form's name rule, as the browser
enforces it."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.rating.bradley_terry import Z95
from referee.rating.leaderboard import legend_entries
from referee.results.arena_store import ArenaStore, BoardRow
from referee.results.league_store import GroupRow, VersionRow
from referee.web.app import create_app
from referee.web.auth import SESSION_COOKIE, sign_session
from referee.web.settings import WebSettings
from tests.browser import browser, console_errors, wait_for
from tests.liveserver import served
from tests.webdb import WebDb, build, game, stored

__all__ = ["browser"]  # the fixture, used by name

#: The versions of the board's league, best first at its last refit, and their ratings at each refit.
RATED = ("delta@1", "alpha@1", "gamma@1", "beta@1")
FITS = ("2026-01-01T00:00:00", "2026-01-01T12:00:00", "2026-01-02T00:00:00", "2026-01-02T12:00:00")


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebDb, str]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-board-"))
    db = build(folder, extra_bots={"gamma": "bob", "delta": "alice"})
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.set_version(league.id, "alpha@1", quarantined=None)
        for n, fitted in enumerate(FITS):
            store.save_board(league.id, [BoardRow(v, rank, 60.0 - 30 * rank + (n * (3 - rank)) * 4, 12.0 - n,
                                                  10 * (n + 1), fitted) for rank, v in enumerate(RATED, 1)])
        store.add_version(league.id, VersionRow(name="epsilon@1", bot="epsilon", number=1, author="bob",
                                                command=["x"], env={}, dir="", sha256="e"))
        store.issue_group(league.id, GroupRow(number=40, deal_seed=40, seats=("epsilon@1", "delta@1"),
                                              anchor="epsilon@1"))
    app = create_app(db.path, WebSettings(board_seconds=1, rate_burst=10_000))
    with served(app) as url:
        yield db, url
    shutil.rmtree(folder)


def rows(driver: Any, table: str) -> list[list[str]]:
    found: list[list[str]] = driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' tbody tr')].map(r => [...r.cells].map(c => "
        "c.textContent.trim()))", table)
    return found


def test_the_board_shows_the_chart_the_days_change_entered_versions_and_the_live_cells(
        browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    browser.get(url + "/")
    wait_for(browser, "return document.body.dataset.ready === '1' && Number(document.body.dataset.lived) > 0")
    board = rows(browser, "table.board:not(#board-entered)")
    assert [row[1] for row in board] == list(RATED)
    # the interval as durak leaderboard gives it (+- 1.96 sd at the last fit, 9 each), never the sd itself; times
    # to the second, in UTC, never a stamp's microseconds
    headers = browser.execute_script("return [...document.querySelectorAll('table.board:not(#board-entered) "
                                     "thead th')].map(th => [th.textContent, th.title])")
    assert headers[4] == ["±95%", dict(legend_entries())["+-95%"]]
    assert {row[4] for row in board} == {f"{Z95 * 9.0:.1f}"}
    assert browser.find_element("id", "board-fitted").text == "2026-01-02 12:00:00 UTC"
    # delta: 30 at the last fit, 30 at the fit a day before it (rank 1: +8 a fit): +16; beta: rank 4, -4 a fit
    assert [row[6] for row in board] == ["+16.0", "+8.0", "+0.0", "-8.0"]
    legend = browser.execute_script("return [...document.querySelectorAll('.chart-legend li')].map(li => li.innerText)")
    assert legend == list(RATED)
    lines = browser.execute_script("return [...document.querySelectorAll('#board-chart polyline')].map(p => "
                                   "[getComputedStyle(p).stroke, p.points.numberOfItems])")
    assert len({stroke for stroke, _ in lines}) == 4 and all(points == len(FITS) for _, points in lines)
    entered = rows(browser, "#board-entered")
    assert [row[:2] for row in entered] == [["epsilon@1", "bob"]] and entered[0][5] == "playing"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", entered[0][2])
    # the live cells: webdb's groups (0 complete, 1 open, 2 void; then gamma's and delta's against alpha)
    live = {row[1]: (row[8], row[9]) for row in board}
    assert {row[1]: row[10] for row in board} == {"delta@1": "1", "alpha@1": "5", "gamma@1": "1", "beta@1": "3"}
    assert live["alpha@1"][0].startswith(f"#{db.games['delta']} ") and live["alpha@1"][1] == "playing"  # group 1
    assert live["beta@1"][0].startswith(f"#{db.games['void']} ")  # its newest, the open group's, is not shown
    assert live["delta@1"][0].startswith(f"#{db.games['delta']} ") and live["delta@1"][1] == "playing"
    assert live["gamma@1"][1] == "" and live["gamma@1"][0].startswith(f"#{db.games['gamma']} ")
    link = browser.execute_script("return document.querySelector('#board-body tr .last-game a').getAttribute('href')")
    assert link == f"/games/{db.games['delta']}"
    assert browser.find_element("id", "live-hour").text == str(len(db.games) - 1)  # all but the open group's
    assert browser.find_element("id", "live-groups").text == "2"
    assert console_errors(browser) == []


def test_a_refit_and_a_finished_group_reach_the_open_board(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    browser.get(url + "/")
    wait_for(browser, "return document.body.dataset.ready === '1'")
    browser.execute_script("document.body.dataset.marker = 'same page'")
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.save_slots(league.id, [[stored(game(["epsilon@1", "delta@1"], 41, "g40", ["", ""]), 40, 0)]])
        store.close_group(league.id, 40, "complete")
        store.save_board(league.id, [BoardRow("epsilon@1", 1, 99.0, 9.0, 1, "2026-01-03T00:00:00"),
                                     *[BoardRow(v, rank, 0.0, 9.0, 50, "2026-01-03T00:00:00")
                                       for rank, v in enumerate(RATED, 2)]])
        number = store.count_games(league.id)
    wait_for(browser, "return document.querySelector('#board-body tr').dataset.version === 'epsilon@1' && "
                      "document.querySelector('#board-body tr .last-game').textContent.startsWith("
                      f"'#{number} ')", 15)
    assert browser.execute_script("return document.body.dataset.marker") == "same page"
    assert browser.execute_script("return document.getElementById('board-entered')") is None
    assert rows(browser, "table.board")[0][9] == ""  # its group is over: not playing now
    assert console_errors(browser) == []


def test_the_upload_form_refuses_a_name_the_league_refuses(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    browser.get(f"{url}/static/web.css")
    with ArenaStore(db.path) as store:
        author = store.author("alice")
        assert author is not None
        browser.add_cookie({"name": SESSION_COOKIE, "value": sign_session(store, store.web_key(), author),
                            "path": "/"})
    browser.get(url + "/upload")
    field = browser.find_element("name", "bot")
    valid = {}
    for name in ("alpha", "a.b+c-d_e", ".hidden", "a b", "x" * 65, "a@1"):
        browser.execute_script("arguments[0].value = arguments[1]", field, name)
        valid[name] = browser.execute_script("return arguments[0].checkValidity()", field)
    assert valid == {"alpha": True, "a.b+c-d_e": True, ".hidden": False, "a b": False, "x" * 65: False,
                     "a@1": False}
    assert console_errors(browser) == []  # the pattern compiles (a bad one is a console error, and is ignored)
    browser.delete_all_cookies()
