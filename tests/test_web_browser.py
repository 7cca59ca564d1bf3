"""The web pages in headless Chromium (tests/browser.py), served by uvicorn on 127.0.0.1 over a league whose bot is
named with markup and writes script to stderr: no page runs it, every page shows it as text, the CSP is sent and
the pages' own scripts (board poll, replay viewer) run under it. A control shows the payload is live markup."""

from __future__ import annotations

import shutil
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.engine import VERDICTS
from referee.results.arena_store import ArenaStore, BoardRow
from referee.web.app import create_app
from referee.web.auth import SESSION_COOKIE, sign_session
from referee.web.settings import WebSettings
from tests.browser import browser, console_errors, wait_for
from tests.liveserver import served
from tests.webdb import A_SIDE_STDERR, A_STDERR, B_SIDE_STDERR, EXTRA_STDERR, WebDb, build

__all__ = ["browser"]  # the fixture, used by name

NAME = "<img src=x onerror=\"window.pwned='name'\">"  # a bot name the upload would refuse, stored directly
PWNED = "return window.pwned === undefined"  # what every payload would set


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebDb, str]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-browser-"))
    db = build(folder, extra_bots={NAME: "alice"})
    app = create_app(db.path, WebSettings(board_seconds=1, rate_burst=10_000))
    with served(app) as url:
        yield db, url
    shutil.rmtree(folder)


def sign_in(driver: Any, db: WebDb, url: str, name: str) -> None:
    driver.get(f"{url}/static/web.css")  # a cookie is set on a page of its site
    with ArenaStore(db.path) as store:
        author = store.author(name)
        assert author is not None
        driver.add_cookie({"name": SESSION_COOKIE, "value": sign_session(store, store.web_key(), author), "path": "/"})


def visit(driver: Any, url: str, *, scripted: bool) -> str:
    """Load a page (waiting for its script's ready mark if it has one); its text as shown."""
    driver.get(url)
    wait_for(driver, "return document.readyState === 'complete'")
    if scripted:
        wait_for(driver, "return document.body.dataset.ready === '1'")
    time.sleep(0.2)  # an image's onerror would have fired by now
    text: str = driver.execute_script("return document.body.innerText")
    return text


def test_a_payload_is_live_markup_when_written_raw(browser: Any) -> None:
    browser.get("data:text/html,<body></body>")
    browser.execute_script("document.body.innerHTML = arguments[0]", NAME)
    assert wait_for(browser, "return window.pwned === 'name'")  # so the checks below can fail


def test_no_page_runs_a_bots_markup_and_each_shows_it_as_text(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    sign_in(browser, db, url, "alice")
    console_errors(browser)
    bot = urllib.parse.quote(NAME, safe="")
    pages = {"/": True, f"/bots/{bot}": False, f"/games?bot={bot}": False, f"/games/{db.games[NAME]}": True,
             "/authors/alice": False}
    for path, scripted in pages.items():
        text = visit(browser, url + path, scripted=scripted)
        assert browser.execute_script(PWNED), path
        assert NAME in text, path
        assert console_errors(browser) == [], path  # no CSP violation, no script error
    # The replay viewer: alice's own seat's view (the second) shows that seat's stderr as text, and no other's.
    visit(browser, f"{url}/games/{db.games[NAME]}#game=2&step=0", scripted=True)
    wait_for(browser, f"return document.body.innerText.includes({EXTRA_STDERR[:20]!r})")
    text = browser.execute_script("return document.body.innerText")
    assert EXTRA_STDERR in text and A_STDERR not in text and browser.execute_script(PWNED)
    assert console_errors(browser) == []


def test_every_page_is_sent_with_the_csp(site: tuple[WebDb, str]) -> None:
    _, url = site
    with urllib.request.urlopen(f"{url}/games", timeout=5) as answer:
        assert answer.headers["Content-Security-Policy"].startswith("default-src 'none'; script-src 'self'")


def test_the_games_filter_offers_every_verdict_kind_and_filters_by_it(browser: Any, site: tuple[WebDb, str]) -> None:
    """The filter's kinds come from the engine's one list (a person's ``resigned`` included); choosing one lists
    only the games with that verdict."""
    _, url = site
    visit(browser, url + "/games", scripted=False)
    offered = browser.execute_script("return [...document.querySelectorAll('select[name=verdict] option')]"
                                     ".map(o => o.value)")
    assert offered == ["", "any", *VERDICTS]
    every = browser.execute_script("return document.querySelectorAll('table tbody tr').length")
    browser.execute_script("document.querySelector('select[name=verdict]').value = 'crash';"
                           "document.querySelector('form.filters button').click()")
    wait_for(browser, "return new URLSearchParams(location.search).get('verdict') === 'crash'")
    rows = browser.execute_script("return [...document.querySelectorAll('table tbody tr')].map(r => r.innerText)")
    assert 0 < len(rows) < every and all("crash" in row for row in rows)


def test_the_board_refreshes_without_a_reload(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    visit(browser, url + "/", scripted=True)
    browser.execute_script("document.body.dataset.marker = 'same page'")
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.save_board(league.id, [BoardRow("beta@1", 1, 77.5, 5.0, 9, "2026-02-01T00:00:00"),
                                     BoardRow("alpha@1", 2, -77.5, 5.0, 9, "2026-02-01T00:00:00")])
    wait_for(browser, "return document.getElementById('board-body').rows[0].cells[3].textContent === '77.5'", 10)
    assert browser.execute_script("return document.body.dataset.marker") == "same page"
    assert browser.execute_script("return document.getElementById('board-fitted').textContent") == \
        "2026-02-01 00:00:00 UTC"  # a stamp as pages show it, to the second


def test_an_author_asks_for_a_challenge_and_replays_its_games_from_their_seat(browser: Any,
                                                                             site: tuple[WebDb, str]) -> None:
    db, url = site
    sign_in(browser, db, url, "alice")
    console_errors(browser)
    visit(browser, f"{url}/authors/alice", scripted=False)
    assert browser.execute_script(PWNED)  # her bot's name, with markup, is an option as text
    form = browser.find_element("id", "challenge-form")
    options = [o.text for o in form.find_elements("css selector", "select[name=bot] option")]
    assert options == [NAME]  # alpha, quarantined, cannot challenge: it is named beside the list
    assert "alpha@1 is quarantined" in form.text
    browser.execute_script("document.querySelector('select[name=bot]').value = arguments[0]", NAME)
    for option in form.find_elements("css selector", "select[name=opponents] option"):
        if option.text == "beta":
            option.click()
    games = form.find_element("css selector", "input[name=games]")
    games.clear()
    games.send_keys("2")
    form.find_element("css selector", "button").click()
    wait_for(browser, "return location.pathname.startsWith('/challenges/')")
    wait_for(browser, "return document.readyState === 'complete'")
    status = browser.find_element("id", "challenge-status").text
    assert status == "pending"
    assert f"{NAME}@1, beta@1" in browser.execute_script("return document.body.innerText")
    assert browser.execute_script(PWNED) and console_errors(browser) == []
    with ArenaStore(db.path) as store:
        asked = store.sides(store.league().id, author="alice")[-1]  # type: ignore[union-attr]
        assert asked.seats == (f"{NAME}@1", "beta@1") and asked.games == 2 and asked.status == "pending"
    # her earlier challenge's game: every hand, and her seat's view with her bot's stderr, none of bob's bot's
    number = db.challenges["alice"]
    visit(browser, f"{url}/challenges/{number}", scripted=False)
    browser.find_element("css selector", "#challenge-games a").click()
    wait_for(browser, "return document.body.dataset.ready === '1'")
    browser.get(f"{url}/challenges/{number}/games/1#game=2&step=0")
    wait_for(browser, "return document.body.dataset.ready === '1'")
    wait_for(browser, f"return document.body.innerText.includes({A_SIDE_STDERR!r})")
    text = browser.execute_script("return document.body.innerText")
    assert B_SIDE_STDERR not in text and console_errors(browser) == []
