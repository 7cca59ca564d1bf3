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
from referee.report.game_data import game_data
from referee.results.arena_store import ArenaStore
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


def open_table(driver: Any, url: str, variant: str, at: dict[int, str], seat: int = 0) -> None:
    """Open a table from the form as a person does: the row labelled with each seat gets the bot ``at`` it (or
    "you", at ``seat``), every other row is left empty."""
    driver.get(f"{url}/tables")
    Select(driver.find_element(By.NAME, "variant")).select_by_value(variant)
    rows = {int(row.find_element(By.CSS_SELECTOR, ".seat-number").text.removeprefix("seat ")): row
            for row in driver.find_elements(By.CSS_SELECTOR, ".seat-row")}
    rows[seat].find_element(By.CSS_SELECTOR, "input[name='seat']").click()  # the person's row shows no bot
    for number, row in rows.items():
        if number != seat:
            Select(row.find_element(By.TAG_NAME, "select")).select_by_value(at.get(number, ""))
    driver.find_element(By.CSS_SELECTOR, "#new-table button").click()
    wait_for(driver, "return location.pathname.startsWith('/tables/') && document.body.dataset.ready === '1'", 20)


def in_seats(bots: list[str]) -> dict[int, str]:
    """The bots at seats 1, 2, ... (the person at seat 0)."""
    return {k + 1: bot for k, bot in enumerate(bots)}


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


DRAWN = """return {
  hands: Object.fromEntries([...document.querySelectorAll('.seat')].map(b => [b.dataset.seat,
    [...b.querySelectorAll('.card[data-card]')].map(c => c.dataset.card).sort().join(' ')])),
  sizes: Object.fromEntries([...document.querySelectorAll('.seat')]
    .map(b => [b.dataset.seat, Number(b.dataset.count)])),
  table: [...document.querySelectorAll('.tablecards .card, .chainpile .card')].map(c => c.dataset.card),
  discard: Number(document.querySelector('.discard').dataset.discard)};"""


def the_last_frame_is_drawn(driver: Any, db: WebDb) -> None:
    """The table as drawn at the end is the stored game's last frame as the person's seat saw it (the replay
    viewer's, from the engine): the final events applied, every card where the log says it went."""
    table_id = int(driver.execute_script("return location.pathname.split('/')[2]"))
    # The game over message may come in a batch read before the table was marked over; its state with the view
    # at the end follows at the stream's next look.
    wait_for(driver, "return document.getElementById('table').dataset.status === 'over'", 20)
    with ArenaStore(db.path) as store:
        table = store.table(table_id)
        assert table is not None and table.game_id is not None
        stored, = store.replays_by_id([table.game_id])
    frame = game_data(stored.replay, seat=table.seat)["steps"][-1]["f"]
    shown = driver.execute_script(DRAWN)
    assert shown["hands"] == {str(s): " ".join(sorted(hand.split())) for s, hand in enumerate(frame["h"])}
    assert shown["sizes"] == {str(s): n for s, n in enumerate(frame["n"])}
    assert shown["table"] == [c for pair in frame.get("t", []) for c in pair if c] + frame.get("p", [])
    assert shown["discard"] == frame["x"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_finishes_a_game_of_each_variant_survives_a_reload_and_opens_the_replay(
        browser: Any, site: tuple[WebDb, str, Recorded], variant: str) -> None:
    db, url, app = site
    browser.delete_all_cookies()
    sign_in(browser, db, url, "alice")
    bots = ["rand@1", "rand2@1"] if variant == "chase" else ["rand@1"]
    app.paths.clear()
    open_table(browser, url, variant, in_seats(bots))
    assert browser.execute_script("return document.getElementById('table').dataset.feed") == "stream"
    turns = play_to_the_end(browser, reload_at=2)
    assert turns > 0
    the_last_frame_is_drawn(browser, db)
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
        open_table(browser, url, "podkidnoy", in_seats(["rand@1"]))
        wait_for(browser, "return document.getElementById('table').dataset.feed === 'poll'", 20)
        assert play_to_the_end(browser, reload_at=None) > 0
    feeds = [path.rsplit("/", 1)[-1] for path in app.paths if path.startswith("/api/tables/")]
    assert feeds[:3] == ["events"] * 3 and "messages" in feeds


def test_each_bot_sits_at_the_seat_its_row_names(browser: Any, site: tuple[WebDb, str, Recorded]) -> None:
    """The form's rows are the seats: the person at seat 1, a bot chosen in the row "seat 0" sits at seat 0 and
    one in "seat 2" at seat 2, as the table page and the API show them."""
    db, url, _ = site
    browser.delete_all_cookies()
    sign_in(browser, db, url, "alice")
    open_table(browser, url, "podkidnoy", {0: "rand2@1", 2: "rand@1"}, seat=1)
    wait_for(browser, TURN_OR_OVER, 60)
    names = browser.execute_script("return Object.fromEntries([...document.querySelectorAll('.seat')]"
                                   ".map(b => [b.dataset.seat, b.querySelector('.name bdi').textContent]))")
    assert names == {"0": "rand2@1", "1": "alice", "2": "rand@1"}
    assert browser.execute_script("return document.getElementById('table').dataset.seat") == "1"
    resign_confirmed(browser)
    browser.get(f"{url}/tables")
    gap = browser.find_elements(By.CSS_SELECTOR, ".seat-row select")
    Select(gap[1]).select_by_value("")  # the person at seat 0, seat 1 empty, a bot at seat 2
    Select(gap[2]).select_by_value("rand@1")
    browser.execute_script("document.documentElement.dataset.before = '1'")
    browser.find_element(By.CSS_SELECTOR, "#new-table button").click()
    # The form's answer, not the page it was sent from (whose readyState is 'complete' until the answer replaces it)
    wait_for(browser, "return !document.documentElement.dataset.before && document.readyState === 'complete'", 30)
    assert "seat 1 is empty" in browser.find_element(By.CSS_SELECTOR, "p.error").text
    assert Select(browser.find_elements(By.CSS_SELECTOR, ".seat-row select")[2]).first_selected_option.text == \
        "rand@1"  # the form keeps what was chosen


def resign_confirmed(driver: Any) -> None:
    """Resign the table's game as a person does: the button asks first; "No" plays on; "Yes" resigns."""
    status = "return document.getElementById('table').dataset.status"
    driver.find_element(By.ID, "resign").click()
    assert driver.find_element(By.ID, "resign-confirm").is_displayed()
    assert not driver.find_element(By.ID, "resign").is_displayed()
    time.sleep(0.5)  # a resignation would have reached the daemon and ended the table by now
    assert driver.execute_script(status) == "playing"
    driver.find_element(By.ID, "resign-no").click()
    assert not driver.find_element(By.ID, "resign-confirm").is_displayed()
    assert driver.execute_script(status) == "playing"
    driver.find_element(By.ID, "resign").click()
    driver.find_element(By.ID, "resign-yes").click()
    wait_for(driver, "return document.getElementById('table').dataset.over === '1'", 30)
    assert driver.execute_script("return document.querySelector('.result').dataset.end") == "forfeit"
    # the game over message can come before the daemon has marked the table over: the stream's next look says so
    wait_for(driver, f"{status} === 'over'", 30)
