"""The card table (referee/web/static/table.js) in headless Chromium, fed a real game's protocol messages for one
seat: a scripted person clicks its cards and buttons to the end of a game of each variant; only the request's
legal strings are offered, and what it sends is one of them; the clock counts down from the request's time."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from protocol.events import event_for_seat
from protocol.messages import GameOver, GameStart, Message, Request, encoder
from protocol.rules import VARIANTS, Rules
from referee.engine import Game, SeededRng, new_game
from tests.browser import browser, console_errors, open_page, wait_for

__all__ = ["browser"]  # the fixture, used by name

HARNESS = """<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="style.css">
<link rel="stylesheet" href="web.css"></head><body><main><div id="table"></div></main>
<script src="cards.js"></script><script src="table.js"></script><script src="harness.js"></script></body></html>"""
SCRIPT = """window.sent = [];
window.table = new DurakTable.Table(document.getElementById("table"), {
  send: (text, id) => { window.sent.push([id, text]); return Promise.resolve(); }, replay: "/replay"});
document.body.dataset.ready = "1";"""


@pytest.fixture(scope="module")
def page() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-table-"))
    for package, name in (("referee.report", "assets/cards.js"), ("referee.report", "assets/style.css"),
                          ("referee.web", "static/table.js"), ("referee.web", "static/web.css")):
        (folder / name.split("/")[1]).write_bytes(resources.files(package).joinpath(name).read_bytes())
    (folder / "harness.js").write_text(SCRIPT)
    (folder / "table.html").write_text(HARNESS)
    yield folder / "table.html"
    shutil.rmtree(folder)


def _feed(driver: Any, messages: list[Message], clock_ms: int | None = None) -> None:
    lines = [encoder.encode(m).decode() for m in messages]
    driver.execute_script("window.table.feed(arguments[0].map((l) => JSON.parse(l)), arguments[1])", lines, clock_ms)


def _others(game: Game, me: int) -> None:
    """The other seats play their first legal action until it is ``me``'s turn or the game ends."""
    while game.result is None and game.to_move != me:
        game.apply_unchecked(game.legal_actions()[0])


def _click(driver: Any, action: str, hand: list[str]) -> None:
    """Click the action's cards that are in hand, then its button (the person's way)."""
    for code in action.split(" ")[1:]:
        if code in hand:
            driver.execute_script("document.querySelector(`.seats.bottom [data-card='${arguments[0]}']`).click()",
                                  code)
    shown = driver.execute_script("return [...document.querySelectorAll('button.action')].map(b => b.dataset.action)")
    assert action in shown
    driver.execute_script("document.querySelector(`button.action[data-action='${arguments[0]}']`).click()", action)


def play_at_table(driver: Any, page: Path, variant: str, players: int, seed: int) -> GameOver:
    open_page(driver, page)
    game = new_game(Rules(variant=variant), players, SeededRng(seed))  # type: ignore[arg-type]
    me, delivered, answered = 0, 0, 0
    names = [f"bot{s}" for s in range(players)]
    names[me] = "me"
    _feed(driver, [GameStart(game="t1", seat=me, players=players, names=names, rules=game.rules,
                             dealer=game.dealer, view=game.view(me), seed=0)])
    request_id = 0
    while True:
        _others(game, me)
        events = [event_for_seat(e, me) for e in game.events[delivered:]]
        delivered = len(game.events)
        if game.result is not None:
            over = GameOver(game="t1", result=game.result, events=events)
            _feed(driver, [over])
            return over
        request_id += 1
        legal = [str(a) for a in game.legal_actions()]
        _feed(driver, [Request(id=request_id, game="t1", view=game.view(me), legal=legal, time_ms=30_000,
                               events=events)])
        wait_for(driver, "return document.getElementById('table').dataset.turn === '1'")
        offered = driver.execute_script("return [...document.querySelectorAll('button.action')]"
                                        ".map(b => b.dataset.action)")
        assert set(offered) <= set(legal)
        playable = driver.execute_script("return [...document.querySelectorAll('.seats.bottom .card.playable')]"
                                         ".map(c => c.dataset.card)")
        assert set(playable) == {c for a in legal for c in a.split(" ")[1:]} & set(game.view(me).hand)
        choice = legal[request_id % len(legal)]
        _click(driver, choice, list(game.view(me).hand))
        sent = driver.execute_script("return window.sent")
        assert sent[answered:] == [[request_id, choice]]
        answered += 1
        game.apply_str(choice)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_finishes_a_game_of_each_variant(browser: Any, page: Path, variant: str) -> None:
    over = play_at_table(browser, page, variant, 2 if variant != "chase" else 3, seed=7)
    wait_for(browser, "return document.getElementById('table').dataset.over === '1'")
    shown = browser.execute_script("return document.querySelector('.result').dataset.end")
    assert shown == over.result.end
    assert browser.execute_script("return document.querySelectorAll('button.action').length") == 0
    assert browser.execute_script("return document.querySelector('.result a.replay').getAttribute('href')") == "/replay"
    assert console_errors(browser) == []


def test_the_clock_counts_down_and_no_action_is_offered_after_sending(browser: Any, page: Path) -> None:
    open_page(browser, page)
    game = new_game(Rules(), 2, SeededRng(3))
    me = game.to_move
    assert me is not None
    _feed(browser, [GameStart(game="t1", seat=me, players=2, names=["a", "b"], rules=game.rules, dealer=game.dealer,
                              view=game.view(me), seed=0),
                    Request(id=1, game="t1", view=game.view(me), legal=[str(a) for a in game.legal_actions()],
                            time_ms=60_000, events=[])], clock_ms=12_000)
    first = int(wait_for(browser, "return document.querySelector('.clock').dataset.ms"))
    assert 10_000 < first <= 12_000  # the server's count, not the request's time_ms
    wait_for(browser, f"return Number(document.querySelector('.clock').dataset.ms) < {first - 400}", 5)
    text = str(game.legal_actions()[0])
    browser.execute_script("document.querySelector(`button.action[data-action='${arguments[0]}']`).click()", text)
    assert browser.execute_script("return window.sent") == [[1, text]]
    assert browser.execute_script("return document.querySelectorAll('button.action, .card.playable').length") == 0
    browser.execute_script("document.querySelector('.seats.bottom .card').click()")  # nothing to choose now
    assert browser.execute_script("return window.sent.length") == 1


def test_markup_in_names_is_text(browser: Any, page: Path) -> None:
    open_page(browser, page)
    game = new_game(Rules(), 2, SeededRng(3))
    evil = "<img src=x onerror=\"window.pwned=1\">"
    _feed(browser, [GameStart(game="t1", seat=0, players=2, names=["me", evil], rules=game.rules, dealer=game.dealer,
                              view=game.view(0), seed=0)])
    assert browser.execute_script("return window.pwned === undefined")
    assert evil in browser.execute_script("return document.querySelector('.seats.top .name').textContent")

