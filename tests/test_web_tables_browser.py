"""A person at the card table in headless Chromium, end to end: ``durak serve``'s app under uvicorn on 127.0.0.1 and
the daemon's table runner playing real bot processes. Signed in, the person opens a table of each variant from
the /tables form, plays it by clicking highlighted cards and action buttons, reloads the page mid-game (the same
game goes on), finishes it and opens its replay; the page runs under the CSP with no console error."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from protocol.rules import VARIANTS
from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.browser import browser, console_errors, wait_for
from tests.liveserver import Recorded, served
from tests.test_tables import league_with_bots
from tests.test_web_browser import sign_in
from tests.webdb import WebDb

__all__ = ["browser"]  # the fixture, used by name

TURN_OR_OVER = ("const t = document.getElementById('table'); "
                "return t && (t.dataset.turn === '1' || t.dataset.over === '1')")


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebDb, str, Recorded]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-tables-browser-"))
    db, runner = league_with_bots(folder)
    runner.start()
    app = Recorded(create_app(db.path, WebSettings(rate_burst=10_000, moves_burst=10_000)))
    with served(app) as url:
        yield db, url, app
    runner.stop()
    shutil.rmtree(folder)


def open_table(driver: Any, url: str, variant: str, bots: list[str]) -> None:
    driver.get(f"{url}/tables")
    Select(driver.find_element(By.NAME, "variant")).select_by_value(variant)
    for select, bot in zip(driver.find_elements(By.NAME, "bots"), [*bots, *[""] * 5], strict=False):
        Select(select).select_by_value(bot)
    driver.find_element(By.CSS_SELECTOR, "#new-table button").click()
    wait_for(driver, "return location.pathname.startsWith('/tables/') && document.body.dataset.ready === '1'", 20)


#: One move as a person makes it, in one script (a poll cannot redraw the table between its clicks): a playable
#: card (on two turns of three, when there is one), then an action button that is offered after it.
CLICK = """
const turn = arguments[0];
const cards = [...document.querySelectorAll('.seats.bottom .card.playable')];
if (cards.length && turn % 3) cards[turn % cards.length].click();
const buttons = [...document.querySelectorAll('button.action')];
buttons[turn % buttons.length].click();
return buttons[turn % buttons.length].dataset.action;
"""


def play_one_move(driver: Any, turn: int) -> None:
    """Click a playable card (if any, then an action that uses it) or an action button, varying the choice."""
    assert driver.execute_script(CLICK, turn)


def play_to_the_end(driver: Any, reload_at: int | None, pace: float = 0.0) -> int:
    """Play the table's game to its end (reloading the page before move ``reload_at``), ``pace`` seconds between
    moves at least; the moves made."""
    turns = 0
    while True:
        wait_for(driver, TURN_OR_OVER, 60)
        if driver.execute_script("return document.getElementById('table').dataset.over === '1'"):
            return turns
        if turns == reload_at:
            hand = driver.execute_script("return [...document.querySelectorAll('.seats.bottom .card')]"
                                         ".map(c => c.dataset.card).join(' ')")
            driver.refresh()
            wait_for(driver, "return document.body.dataset.ready === '1'", 20)
            wait_for(driver, TURN_OR_OVER, 60)
            again = driver.execute_script("return [...document.querySelectorAll('.seats.bottom .card')]"
                                          ".map(c => c.dataset.card).join(' ')")
            assert again == hand  # the same game, at the same point
        play_one_move(driver, turns)
        turns += 1
        time.sleep(pace)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_finishes_a_game_of_each_variant_survives_a_reload_and_opens_the_replay(
        browser: Any, site: tuple[WebDb, str, Recorded], variant: str) -> None:
    db, url, app = site
    browser.delete_all_cookies()
    sign_in(browser, db, url, "alice")
    bots = ["rand@1", "rand2@1"] if variant == "chase" else ["rand@1"]
    app.paths.clear()
    open_table(browser, url, variant, bots)
    assert browser.execute_script("return document.getElementById('table').dataset.feed") == "stream"
    turns = play_to_the_end(browser, reload_at=2)
    assert turns > 0
    assert browser.execute_script("return document.querySelector('.result').dataset.end") != "forfeit"
    feeds = [path.rsplit("/", 1)[-1] for path in app.paths if path.startswith("/api/tables/")]
    assert feeds.count("events") >= 2 and "messages" not in feeds  # the stream, again after the reload; no poll
    link = wait_for(browser, "const a = document.querySelector('.result a.replay'); return a && a.href", 20)
    browser.get(link)
    wait_for(browser, "return document.body.dataset.ready === '1'")
    assert browser.execute_script("return document.getElementById('viewer').dataset.view") == "all"
    steps = int(browser.execute_script("return document.getElementById('viewer').dataset.steps"))
    assert steps > turns
    assert console_errors(browser) == []


def test_the_page_polls_when_the_stream_fails_again_and_again(browser: Any, site: tuple[WebDb, str, Recorded]) -> None:
    """A server whose every stream is refused (429: no stream allowed): after three failed connections the page
    polls the messages route, and the game plays to its end all the same."""
    db, _, _ = site
    app = Recorded(create_app(db.path, WebSettings(rate_burst=10_000, moves_burst=10_000,
                                                   table_streams_per_author=0)))
    with served(app) as url:
        browser.delete_all_cookies()
        sign_in(browser, db, url, "alice")
        open_table(browser, url, "podkidnoy", ["rand@1"])
        wait_for(browser, "return document.getElementById('table').dataset.feed === 'poll'", 20)
        assert play_to_the_end(browser, reload_at=None) > 0
    feeds = [path.rsplit("/", 1)[-1] for path in app.paths if path.startswith("/api/tables/")]
    assert feeds[:3] == ["events"] * 3 and "messages" in feeds
