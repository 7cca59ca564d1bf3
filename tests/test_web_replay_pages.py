"""The arena's replay, bot and author pages in headless Chromium (tests/browser.py) over the web test league
(tests/webdb.py): the replay's whole text sits inside the page's layout, its keys work from the first moment, its
titles say who played with the game's number; the bot page's tables have headers and give 95% intervals, as the
command-line leaderboard does; an author with no bot that plays is told to upload one, not shown an empty form."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from referee.league.authors import new_author
from referee.rating.bradley_terry import Z95
from referee.results.arena_store import ArenaStore
from referee.results.web_queries import WebStore
from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.browser import browser, console_errors, wait_for
from tests.liveserver import served
from tests.test_web_browser import sign_in
from tests.webdb import WebDb, build

__all__ = ["browser"]  # the fixture, used by name

READY = "return document.body.dataset.ready === '1'"


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebDb, str]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-replay-"))
    db = build(folder)
    with ArenaStore(db.path) as store:
        new_author(store, "carol")  # an author with no bot yet
    with served(create_app(db.path, WebSettings(rate_burst=10_000))) as url:
        yield db, url
    shutil.rmtree(folder)


def players(db: WebDb, number: int) -> list[str]:
    with WebStore(db.path) as store:
        found = store.league_game_line(store.the_league().id, number)
    assert found is not None
    return list(found.record.players)


def replay(driver: Any, url: str) -> None:
    driver.get(url)
    wait_for(driver, READY)


def test_the_replay_pages_text_is_inside_its_layout(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    replay(browser, f"{url}/games/{db.games['complete0']}")
    inside = browser.execute_script(
        "const m = document.querySelector('main'); return [...document.body.children].filter(e => "
        "!['NAV', 'MAIN', 'SCRIPT'].includes(e.tagName)).map(e => e.outerHTML)")
    assert inside == []  # nothing drawn outside the nav and the main
    group = browser.execute_script(
        "const p = [...document.querySelectorAll('p')].find(p => p.textContent.startsWith('Group: '));"
        "const m = document.querySelector('h1').getBoundingClientRect();"
        "return p && [p.closest('main') !== null, p.getBoundingClientRect().left, m.left]")
    assert group is not None and group[0] and group[1] == pytest.approx(group[2], abs=1) and group[1] >= 10


def test_replay_keys_work_as_soon_as_the_page_loads(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    replay(browser, f"{url}/games/{db.games['complete0']}")
    steps = int(browser.find_element("id", "viewer").get_attribute("data-steps"))
    assert steps > 4
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT * 3).perform()  # to the focused element, nothing clicked
    wait_for(browser, "return document.getElementById('viewer').dataset.step === '3'")
    ActionChains(browser).send_keys(Keys.ARROW_LEFT).perform()
    wait_for(browser, "return document.getElementById('viewer').dataset.step === '2'")
    # a click anywhere else on the page (the heading, the text below) leaves the focus on the body: keys still step
    browser.find_element("id", "page-title").click()
    assert browser.execute_script("return document.activeElement === document.body")
    ActionChains(browser).send_keys(Keys.ARROW_RIGHT * 2).perform()
    wait_for(browser, "return document.getElementById('viewer').dataset.step === '4'")
    # after a button is clicked (the focus on it), keys still step
    browser.find_element("css selector", "#viewer .controls button").click()  # « start
    ActionChains(browser).send_keys(Keys.END).perform()
    wait_for(browser, f"return document.getElementById('viewer').dataset.step === '{steps - 1}'")
    assert console_errors(browser) == []


def test_replay_titles_say_who_played_with_the_games_number(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    number = db.games["complete1"]
    expected = f"Game {number}: " + " vs ".join(players(db, number))
    replay(browser, f"{url}/games/{number}")
    assert browser.find_element("id", "page-title").text == expected
    assert browser.title == expected
    assert browser.find_element("css selector", "#viewer .vtitle").text == expected
    sign_in(browser, db, url, "alice")  # her own seat's view too: the picker lists each view by its title
    replay(browser, f"{url}/games/{number}")
    options = [o.text for o in browser.find_elements("css selector", "#game-select option")]
    assert len(options) == 2 and all(expected in text for text in options)
    assert "|" not in browser.execute_script("return document.body.innerText.split('\\n')[1]")
    browser.delete_all_cookies()


def test_the_bot_pages_tables_have_headers_and_95_percent_intervals(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    browser.get(f"{url}/bots/alpha")
    wait_for(browser, "return document.readyState === 'complete'")
    heads = browser.execute_script(
        "return [...document.querySelectorAll('main table')].map(t => [...t.querySelectorAll('thead th')]"
        ".map(th => th.textContent))")
    assert all(heads) and len(heads) == 4  # versions, rating history, head to head, latest games
    assert heads[0] == ["version", "added", "state"]
    assert heads[1] == ["version", "fitted", "Elo", "±95%", "games"]
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        history = store.rating_history(league.id, ["alpha@1"])
    rows = browser.execute_script(
        "return [...document.querySelectorAll('main table')[1].querySelectorAll('tbody tr')]"
        ".map(r => [...r.cells].map(c => c.textContent))")
    assert rows == [[p.version, p.fitted, f"{p.elo:.1f}", f"{Z95 * p.sd:.1f}", str(p.games)] for p in history]


def test_an_author_with_no_bot_is_told_to_upload_one(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    sign_in(browser, db, url, "carol")
    browser.get(f"{url}/authors/carol")
    wait_for(browser, "return document.readyState === 'complete'")
    assert browser.find_elements("id", "challenge-form") == []
    note = browser.find_element("id", "challenge-none")
    assert "upload a bot" in note.text.lower()
    link = note.find_element("css selector", "a")
    link.click()
    wait_for(browser, "return location.pathname === '/upload'")
    # alice's only bot is quarantined: the same, naming it and why it cannot play
    sign_in(browser, db, url, "alice")
    browser.get(f"{url}/authors/alice")
    wait_for(browser, "return document.readyState === 'complete'")
    assert browser.find_elements("id", "challenge-form") == []
    assert "alpha" in browser.find_element("id", "challenge-none").text
    browser.delete_all_cookies()
