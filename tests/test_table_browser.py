"""The card table (referee/web/static/table.js) in headless Chromium, fed a real game's protocol messages for one
seat: a scripted person clicks its cards and buttons to the end of a game of each variant; only the request's
legal strings are offered, and what it sends is one of them; the clock counts down from the request's time."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.cards import SUIT_SYMBOLS
from protocol.events import AnyEvent, event_for_seat
from protocol.messages import GameOver, GameStart, Message, Request, encoder
from protocol.rules import VARIANTS, Rules
from protocol.views import PlayerView
from referee.engine import Game, SeededRng, new_game
from referee.hand_order import hand_order_key, sorted_hand
from referee.results.narrate import PHRASES, describe_event
from tests.browser import browser, console_errors, open_page, wait_for

__all__ = ["browser"]  # the fixture, used by name

HARNESS = """<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="style.css">
<link rel="stylesheet" href="web.css"></head><body><main><div id="table"></div></main>
<script src="cards.js"></script><script src="table.js"></script><script src="harness.js"></script></body></html>"""
SCRIPT = """window.sent = [];
window.table = new DurakTable.Table(document.getElementById("table"), {
  send: (text, id) => { window.sent.push([id, text]); return Promise.resolve(); }, replay: "/replay",
  handOrder: HAND_ORDER, phrases: PHRASES});
document.body.dataset.ready = "1";"""


@pytest.fixture(scope="module")
def page() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-table-"))
    for package, name in (("referee.report", "assets/cards.js"), ("referee.report", "assets/style.css"),
                          ("referee.web", "static/table.js"), ("referee.web", "static/web.css")):
        (folder / name.split("/")[1]).write_bytes(resources.files(package).joinpath(name).read_bytes())
    (folder / "harness.js").write_text(SCRIPT.replace("HAND_ORDER", json.dumps(hand_order_key()))  # as the page's
                                       .replace("PHRASES", json.dumps(PHRASES)))
    (folder / "table.html").write_text(HARNESS)
    yield folder / "table.html"
    shutil.rmtree(folder)


def _feed(driver: Any, messages: list[Message], clock_ms: int | None = None, final: PlayerView | None = None) -> None:
    """Hand the table messages as the page does, with the server's view at the end (``final``) once over."""
    lines = [encoder.encode(m).decode() for m in messages]
    view = None if final is None else encoder.encode(final).decode()
    driver.execute_script("window.table.feed(arguments[0].map((l) => JSON.parse(l)), arguments[1], "
                          "arguments[2] && JSON.parse(arguments[2]))", lines, clock_ms, view)


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


Look = Callable[[Any, Game, int], None]


def play_at_table(driver: Any, page: Path, variant: str, players: int, seed: int,
                  look: Look | None = None) -> tuple[GameOver, PlayerView]:
    """Play a game at the table to its end; ``look`` sees the page at each of the person's turns, once drawn.
    The game over message and the seat's view at the end."""
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
            _feed(driver, [over], final=game.view(me))  # the server's view at the end
            return over, game.view(me)
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
        if look is not None:
            look(driver, game, me)
        choice = legal[request_id % len(legal)]
        _click(driver, choice, list(game.view(me).hand))
        sent = driver.execute_script("return window.sent")
        assert sent[answered:] == [[request_id, choice]]
        answered += 1
        game.apply_str(choice)


DRAWN = """return {
  hand: [...document.querySelectorAll('.seats.bottom .card')].map(c => c.dataset.card),
  table: [...document.querySelectorAll('.tablecards .card, .chainpile .card')].map(c => c.dataset.card),
  sizes: [...document.querySelectorAll('.seat')].map(b => [Number(b.dataset.seat), Number(b.dataset.count)]),
  known: [...document.querySelectorAll('.seat.opponent')].map(b => [Number(b.dataset.seat),
    [...b.querySelectorAll('.card[data-card]')].map(c => c.dataset.card)]),
  discard: Number(document.querySelector('.discard').dataset.discard)};"""


def drawn_is(driver: Any, view: PlayerView) -> None:
    """The table as drawn is ``view``: the hand in the hand order, the table's cards, every hand's size, what
    is known of the others' hands and the discard."""
    shown = driver.execute_script(DRAWN)
    assert shown["hand"] == sorted_hand(view.hand, view.trump_suit)
    assert shown["table"] == [c for pair in view.table for c in pair if c] + list(view.pile)
    assert dict(shown["sizes"]) == dict(enumerate(view.hand_sizes))
    assert {s: set(cards) for s, cards in shown["known"]} == {s: set(view.known[s]) for s, _ in shown["known"]}
    assert shown["discard"] == len(view.discard)


def hand_in_hand_order(driver: Any, game: Game, me: int) -> None:
    drawn_is(driver, game.view(me))


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_person_finishes_a_game_of_each_variant(browser: Any, page: Path, variant: str) -> None:
    """At each turn the table is the seat's view, the hand in the terminal's order (referee/hand_order.py); at
    the end, the view after the last events (the server's), not the last request's."""
    over, final = play_at_table(browser, page, variant, 2 if variant != "chase" else 3, seed=7,
                                look=hand_in_hand_order)
    wait_for(browser, "return document.getElementById('table').dataset.over === '1'")
    drawn_is(browser, final)
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



BOXES = """return Object.fromEntries([...document.querySelectorAll('.seat')].map(b => {
  const r = b.getBoundingClientRect();
  return [b.dataset.seat, {x: r.x, y: r.y, w: r.width, h: r.height, count: Number(b.dataset.count),
                           place: b.dataset.place || 'bottom', order: b.dataset.order || '0'}];
}));"""


def test_at_four_players_the_seats_sit_round_the_table_in_play_order_and_stay_put(browser: Any, page: Path) -> None:
    """The next seat (the one the person attacks) on the left, the one after across the top, the last on the
    right; none of the opponents' boxes moves or changes size as their hands grow and shrink."""
    seen: list[dict[str, dict[str, Any]]] = []
    play_at_table(browser, page, "podkidnoy", 4, seed=11, look=lambda d, g, me: seen.append(d.execute_script(BOXES)))
    assert len(seen) > 5
    first = seen[0]
    others = [s for s in first if first[s]["place"] != "bottom"]
    assert [first[str(s)]["place"] for s in (1, 2, 3)] == ["left", "top", "right"]  # the person is seat 0
    assert [first[str(s)]["order"] for s in (1, 2, 3)] == ["1", "2", "3"]
    left, top, right, me = (first[s] for s in ("1", "2", "3", "0"))
    assert left["x"] + left["w"] <= top["x"] and top["x"] + top["w"] <= right["x"]  # left to right, clockwise
    assert top["y"] + top["h"] <= left["y"] and left["y"] + left["h"] <= me["y"]
    for boxes in seen:
        for s in others:
            assert {k: boxes[s][k] for k in "xywh"} == {k: first[s][k] for k in "xywh"}, (s, boxes[s], first[s])
    assert len({boxes[s]["count"] for boxes in seen for s in others}) > 2  # the hands did change
    order = browser.execute_script("return [...document.querySelectorAll('.seating bdi')].map(b => b.dataset.seat)")
    assert order == ["0", "1", "2", "3"]


def test_an_opponents_roles_are_shown_whole_in_its_box_of_fixed_size(browser: Any, page: Path) -> None:
    """The longest roles a box can carry ("12 cards · dealer · defender, taking") fit its two lines: none is cut
    off with an ellipsis, and the box keeps its size."""
    open_page(browser, page)
    game = new_game(Rules(variant="podkidnoy"), 4, SeededRng(3))  # type: ignore[arg-type]
    view = msgspec.structs.replace(game.view(0), attacker=0, defender=1, taking=True, hand_sizes=[6, 12, 6, 6])
    _feed(browser, [GameStart(game="t1", seat=0, players=4, names=["me", "b1", "b2", "b3"], rules=game.rules,
                              dealer=1, view=view, seed=0),
                    Request(id=1, game="t1", view=view, legal=["pass"], time_ms=30_000, events=[])])
    wait_for(browser, "return document.getElementById('table').dataset.turn === '1'")
    box = browser.execute_script("""const b = document.querySelector('.seat[data-seat="1"]');
      const m = b.querySelector('.meta'), r = b.getBoundingClientRect();
      return {text: m.textContent, cut: m.scrollHeight > m.clientHeight + 1 || m.scrollWidth > m.clientWidth + 1,
              w: r.width, h: r.height};""")
    assert box["text"] == "12 cards \u00b7 dealer \u00b7 defender, taking" and not box["cut"], box
    others = browser.execute_script("return [...document.querySelectorAll('.seat.opponent')].map(b => "
                                    "[b.getBoundingClientRect().width, b.getBoundingClientRect().height])")
    assert {tuple(size) for size in others} == {(box["w"], box["h"])}  # every box the same, fixed size


#: A card in the protocol's notation (what the page must not show a person).
SUITS = dict(zip(SUIT_SYMBOLS, "\u2663\u2666\u2665\u2660", strict=True))
PROTOCOL_CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")


def test_buttons_and_the_log_name_cards_as_they_are_drawn(browser: Any, page: Path) -> None:
    """Every button and log line names its cards as the cards are drawn ("10♣"), never "TC"; a button still
    sends its protocol string unchanged (checked as the game is played)."""
    def look(driver: Any, game: Game, me: int) -> None:
        shown = driver.execute_script(
            "const drawn = (c) => [...document.querySelectorAll(`.card[data-card='${c}']`)].map(n => n.textContent);"
            "return [...document.querySelectorAll('button.action, .log li')].map(n => [n.dataset.action || '', "
            "n.textContent, [...n.querySelectorAll('.cardname')].map(c => [c.dataset.card, c.textContent])])")
        for action, text, names in shown:
            assert not PROTOCOL_CARD.search(text), text
            assert [code for code, _ in names] == action.split(" ")[1:] or not action
            for code, name in names:
                assert name == ("10" if code[0] == "T" else code[0]) + SUITS[code[1]]
    play_at_table(browser, page, "perevodnoy", 3, seed=5, look=look)
    assert console_errors(browser) == []


def test_the_trump_card_lies_sideways_with_its_rank_upright(browser: Any, page: Path) -> None:
    open_page(browser, page)
    game = new_game(Rules(), 2, SeededRng(3))
    _feed(browser, [GameStart(game="t1", seat=0, players=2, names=["me", "bot"], rules=game.rules,
                              dealer=game.dealer, view=game.view(0), seed=0)])
    turned = browser.execute_script("""
        const card = document.querySelector('.stock .card.trump'), rank = card.querySelector('.rank');
        const m = (n) => new DOMMatrix(getComputedStyle(n).transform);
        const r = card.getBoundingClientRect();
        return {net: [...m(card).multiply(m(rank)).toFloat64Array()], sideways: r.width > r.height,
                card: card.dataset.card, text: card.textContent};""")
    assert turned["sideways"] and turned["card"] == game.view(0).trump
    identity = [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    assert turned["net"] == pytest.approx(identity, abs=1e-6)  # the card turned, its rank turned back


@pytest.mark.parametrize("variant", ["perevodnoy", "fools_fool"])
def test_the_log_tells_each_event_in_the_replays_words(browser: Any, page: Path, variant: str) -> None:
    """The log's lines are the replay's narration (referee/results/narrate.py) of the seat's events, its cards
    as drawn: one set of words (the table said "beat off" where the replay says "discarded")."""
    over, _ = play_at_table(browser, page, variant, 3, seed=7)
    names = ["me", "bot1", "bot2"]  # as play_at_table names the seats
    shown = browser.execute_script("return [...document.querySelectorAll('.log li')].map(li => li.textContent)")
    events = msgspec.convert(browser.execute_script("return window.table.events"), list[AnyEvent])
    expected = [line.strip().removeprefix("-- ") for e in events if (line := describe_event(e, names))]
    assert len(expected) > 20
    assert shown == [PROTOCOL_CARD.sub(lambda m: drawn_name(m.group()), line) for line in expected]
    assert any(("discarded: " if variant == "perevodnoy" else "pile discarded: ") in line for line in shown)
    assert over.result is not None and console_errors(browser) == []


def drawn_name(code: str) -> str:
    return ("10" if code[0] == "T" else code[0]) + SUITS[code[1]]
