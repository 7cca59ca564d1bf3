"""Post-game analyses in headless Chromium: an author clicks the replay's form for their bot's seat, a person the
button their finished card table shows after game over; the daemon's step (in this process, 8 worlds per decision)
makes each; the seat's view in the replay viewer then draws each judged decision at its step and the marks in the
log, as ``durak analyze --html`` does (one home: referee/report/analysis_marks.py); no console error under the CSP."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from selenium.webdriver.common.by import By

from referee.results.arena_store import ArenaStore
from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.browser import browser, console_errors, wait_for
from tests.liveserver import served
from tests.test_web_analyses import daemon, finish_table
from tests.test_web_browser import sign_in, visit
from tests.webdb import WebDb, build
from tests.webkit import bearer

__all__ = ["browser"]  # the fixture, used by name
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site() -> Iterator[tuple[WebDb, str]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-analyses-browser-"))
    db = build(folder)
    app = create_app(db.path, WebSettings(rate_burst=10_000, analysis_playouts=8, marks_seconds=0))
    with served(app) as url:
        yield db, url
    shutil.rmtree(folder)


def marks_drawn(driver: Any, steps: list[dict[str, Any]]) -> None:
    """The viewer (at its seat's view) draws each judged step's judgement at that step, and each mark in the log."""
    judged = [i for i, step in enumerate(steps) if "j" in step]
    assert judged, "the seat's view carries no judged step"
    for index in judged[:4]:
        driver.execute_script(f"location.hash = location.hash.replace(/step=\\d+/, 'step={index}')")
        wait_for(driver, f"return document.getElementById('viewer').dataset.step === '{index}'")
        shown = driver.execute_script(
            "const j = document.querySelector('#viewer .now .judged'); return j === null ? null : j.dataset.mark")
        assert shown == (steps[index]["j"]["m"] or ""), index
    last = len(steps) - 1  # the log lists the steps up to the one shown
    driver.execute_script(f"location.hash = location.hash.replace(/step=\\d+/, 'step={last}')")
    wait_for(driver, f"return document.getElementById('viewer').dataset.step === '{last}'")
    badges = driver.execute_script(
        "return [...document.querySelectorAll('#viewer .log li')].filter(li => li.querySelector('.mark'))"
        ".map(li => [Number(li.dataset.step), li.querySelector('.mark').dataset.mark])")
    assert dict(badges) == {i: steps[i]["j"]["m"] for i in judged if steps[i]["j"]["m"]}


def seat_steps(db: WebDb, path: str) -> list[dict[str, Any]]:
    """The steps of the seat's view with its marks, as the page embeds them (alice's: the second view)."""
    with TestClient(create_app(db.path, WebSettings(rate_burst=10_000))) as client:
        views = client.get(path, headers=bearer(db, "alice")).json()["views"]
    assert len(views) == 2 and views[1]["seat"] == 0
    steps: list[dict[str, Any]] = views[1]["steps"]
    return steps


def test_an_author_asks_on_the_replay_and_sees_their_bots_marks(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    number = db.games["complete0"]
    sign_in(browser, db, url, "alice")
    visit(browser, f"{url}/games/{number}", scripted=True)
    assert browser.find_elements(By.CSS_SELECTOR, "li.analysis") == []
    browser.find_element(By.CSS_SELECTOR, "form.analysis-form button").click()
    wait_for(browser, "return document.querySelector('li.analysis') !== null")  # the replay again, asked
    status = browser.find_element(By.CSS_SELECTOR, "li.analysis").get_attribute("data-status")
    assert status == "pending" and browser.find_elements(By.CSS_SELECTOR, "form.analysis-form") == []
    assert daemon(db) == 1
    browser.get("about:blank")  # a hash alone would not load the page again
    visit(browser, f"{url}/games/{number}#game=2&step=0", scripted=True)
    assert browser.find_element(By.CSS_SELECTOR, "li.analysis").get_attribute("data-status") == "done"
    marks_drawn(browser, seat_steps(db, f"/api/games/{number}"))
    assert console_errors(browser) == []


def test_a_person_asks_after_game_over_and_sees_their_own_mistakes(browser: Any, site: tuple[WebDb, str]) -> None:
    db, url = site
    with ArenaStore(db.path) as store:  # the table's one stored line is no protocol message: a page of none
        store._db.execute("DELETE FROM human_messages WHERE table_id = ?", (db.table,))
    finish_table(db)
    sign_in(browser, db, url, "alice")
    visit(browser, f"{url}/tables/{db.table}", scripted=True)
    wait_for(browser, "return !document.getElementById('analysis-box').hidden")
    browser.find_element(By.ID, "analyze").click()
    wait_for(browser, f"return location.pathname === '/tables/{db.table}/replay' && "
                      "document.querySelector('li.analysis') !== null")
    assert browser.find_element(By.CSS_SELECTOR, "li.analysis").get_attribute("data-status") == "pending"
    assert daemon(db) == 1
    browser.get("about:blank")
    visit(browser, f"{url}/tables/{db.table}/replay#game=2&step=0", scripted=True)
    marks_drawn(browser, seat_steps(db, f"/api/tables/{db.table}/replay"))
    assert console_errors(browser) == []
