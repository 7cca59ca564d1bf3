"""The replay viewer's table in headless Chromium (tests/browser.py), as issue 38 brought the card table: the
sideways trump card's rank upright, the seats round the felt in play order with their numbers (boxes that stay
put as hands change), and cards named in the events and the step's line as they are drawn ("10♣", never "TC"),
in the narration's words (referee/results/narrate.py PHRASES). Pages are the offline viewer's
(:func:`referee.report.page.viewer_page`) over random games of 2 to 6 players, all-seeing and seen from a seat."""

from __future__ import annotations

import itertools
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_report import random_game

from protocol.cards import SUIT_SYMBOLS
from protocol.events import AnyEvent
from referee.report.game_data import game_data
from referee.report.page import viewer_page, write_private
from referee.results.narrate import describe_event
from referee.results.replay import replay_lines
from tests.browser import browser, console_errors, open_page

__all__ = ["browser"]  # the fixture, used by name
pytestmark = pytest.mark.browser

SUITS = dict(zip(SUIT_SYMBOLS, "\u2663\u2666\u2665\u2660", strict=True))
PROTOCOL_CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")
#: Two seats share a name, as two copies of one bot do in the arena.
NAMES = ["alice", "rand@1", "rand2@1", "rand@1", "bob", "carol"]

#: The viewer's own keys, pressed from a script (each one draws its step before it returns).
KEY = """const viewer = document.getElementById('viewer');
const key = (k) => viewer.dispatchEvent(new KeyboardEvent('keydown', {key: k, bubbles: true, cancelable: true}));
"""
#: Every step from the first, drawn one after another, each step's boxes, in one call.
WALK = KEY + """
const boxes = () => Object.fromEntries([...viewer.querySelectorAll('.seat')].map(b => {
  const r = b.getBoundingClientRect();
  return [b.dataset.seat, {x: r.x, y: r.y, w: r.width, h: r.height, count: Number(b.dataset.count),
                           place: b.dataset.place, order: b.dataset.order,
                           no: b.querySelector('.seatno') ? b.querySelector('.seatno').textContent : ''}];
}));
key('Home');
const seen = [boxes()];
for (let i = 1; i < Number(viewer.dataset.steps); i++) { key('ArrowRight'); seen.push(boxes()); }
return seen;"""


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="durak-test-viewer-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def game_page(folder: Path, variant: str, players: int, seed: int, seat: int | None = None) -> tuple[Path, bytes]:
    """The viewer's page over a random game whose seats are named from NAMES, and the game's replay."""
    record = msgspec.structs.replace(random_game(variant, players, seed), names=NAMES[:players])
    data = replay_lines(record)
    page = folder / f"{variant}-{players}-{seed}-{seat}.html"
    write_private(page, viewer_page([game_data(data, seat=seat)]))
    page.chmod(0o644)
    return page, data


def test_the_trump_card_lies_sideways_with_its_rank_upright(browser: Any, folder: Path) -> None:
    page, data = game_page(folder, "podkidnoy", 4, 3)
    open_page(browser, page)
    turned = browser.execute_script("""
        const card = document.querySelector('#viewer .stock .card.trump'), rank = card.querySelector('.rank');
        const m = (n) => new DOMMatrix(getComputedStyle(n).transform);
        const r = card.getBoundingClientRect();
        return {net: [...m(card).multiply(m(rank)).toFloat64Array()], sideways: r.width > r.height,
                card: card.dataset.card};""")
    assert turned["sideways"] and turned["card"] == game_data(data)["trump"]
    identity = [1.0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
    assert turned["net"] == pytest.approx(identity, abs=1e-6)  # the card turned, its rank turned back


@pytest.mark.parametrize(("variant", "players", "seat"), [
    ("podkidnoy", 2, None), ("podkidnoy", 3, None), ("podkidnoy", 4, None), ("podkidnoy", 4, 2),
    ("perevodnoy", 5, None), ("perevodnoy", 6, 3), ("fools_fool", 4, None)])
def test_the_seats_sit_round_the_table_in_play_order_and_stay_put(browser: Any, folder: Path, variant: str,
                                                                  players: int, seat: int | None) -> None:
    """The viewed seat (seat 0 when every hand is shown) at the bottom; with three or more others, the next seat
    on the left, the last on the right, the rest across the top, left to right; each box names its seat, and no
    box moves or changes size as the hands grow and shrink (nor as Fool's Fool's ladder deal turns to play)."""
    page, _ = game_page(folder, variant, players, 5, seat)
    open_page(browser, page)
    seen = browser.execute_script(WALK)
    me = 0 if seat is None else seat
    order = [(me + k) % players for k in range(players)]
    others = order[1:]
    first = seen[0]
    want = ["top"] * len(others) if len(others) < 3 else ["left", *["top"] * (len(others) - 2), "right"]
    assert [first[str(s)]["place"] for s in others] == want
    assert first[str(me)]["place"] == "bottom"
    assert [first[str(s)]["order"] for s in order] == [str(k) for k in range(players)]
    assert all(first[str(s)]["no"].startswith(f"seat {s}") for s in order)
    top = [first[str(s)] for s in others if first[str(s)]["place"] == "top"]
    assert all(a["x"] + a["w"] <= b["x"] for a, b in itertools.pairwise(top))  # left to right in play order
    bottom = first[str(me)]
    assert all(box["y"] + box["h"] <= bottom["y"] for box in top)
    if len(others) >= 3:  # clockwise: the left box, the top row, the right box, their middles left to right
        left, right = first[str(others[0])], first[str(others[-1])]
        middles = [box["x"] + box["w"] / 2 for box in (left, *top, right)]
        assert middles == sorted(middles) and left["x"] + left["w"] <= right["x"]
        assert all(box["y"] + box["h"] <= side["y"] for box in top for side in (left, right))
        assert left["y"] + left["h"] <= bottom["y"] and right["y"] + right["h"] <= bottom["y"]
    for boxes in seen:
        for s in others:
            assert {k: boxes[str(s)][k] for k in "xywh"} == {k: first[str(s)][k] for k in "xywh"}, (s, boxes[str(s)])
    assert len({boxes[str(s)]["count"] for boxes in seen for s in others}) > 2  # the hands did change
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#viewer .seating bdi')].map(b => [b.dataset.seat, b.textContent])")
    assert [int(s) for s, _ in shown] == order
    assert [name for _, name in shown] == ["you" if seat is not None and s == seat else NAMES[s] for s in order]
    assert console_errors(browser) == []


def shown_names(names: list[str]) -> list[str]:
    """A name two seats share with its seat number, as the viewer shows it."""
    return [f"{n} (seat {s})" if names.count(n) > 1 else n for s, n in enumerate(names)]


READ_LOG = """return [...document.querySelectorAll('#viewer .log li')].map(li => {
  const names = [...li.querySelectorAll('.cardname')].map(c => [c.dataset.card, c.textContent,
    getComputedStyle(c).color]);
  const copy = li.cloneNode(true);
  copy.querySelectorAll('.move-time, .mark').forEach(n => n.remove());
  copy.querySelectorAll('.cardname').forEach(c => { c.textContent = c.dataset.card; });
  return {text: li.textContent, coded: copy.textContent.trim(), names, step: Number(li.dataset.step)};
});"""


@pytest.mark.parametrize(("variant", "seat"), [("perevodnoy", None), ("fools_fool", None), ("podkidnoy", 1)])
def test_the_events_name_cards_as_drawn_in_the_narrations_words(browser: Any, folder: Path, variant: str,
                                                               seat: int | None) -> None:
    """Each event line is the narration's (``durak replay``'s words, a shared name with its seat number) with
    its cards drawn as on the table: "10♣", red suits red; no protocol card ("TC") is left in the text."""
    page, data = game_page(folder, variant, 4, 7, seat)
    open_page(browser, page)
    browser.execute_script(KEY + "key('End');")
    lines = browser.execute_script(READ_LOG)
    game = game_data(data, seat=seat)
    names = shown_names(NAMES[:4])
    told = [(i, line.strip()) for i, step in enumerate(game["steps"]) for e in step["ev"]
            if (line := describe_event(msgspec.convert(e, AnyEvent), names)) is not None]
    assert [(line["step"], line["coded"]) for line in lines] == [(i, t.removeprefix("-- ")) for i, t in told]
    drawn = [name for line in lines for name in line["names"]]
    assert drawn, "the game must name some card, or this test could not fail"
    for code, text, colour in drawn:
        assert text == ("10" if code[0] == "T" else code[0]) + SUITS[code[1]]
        assert (colour == "rgb(200, 16, 46)") == (code[1] in "DH"), (code, colour)  # style.css --red
    assert not [line["text"] for line in lines if PROTOCOL_CARD.search(line["text"])]
    assert console_errors(browser) == []


def test_the_steps_line_names_the_seat_and_draws_the_chosen_cards(browser: Any, folder: Path) -> None:
    """The line under the table ("rand@1 (seat 3) chose attack J♣; to move: ...") and the result tell two seats
    of one name apart; the line names the chosen action's cards as drawn."""
    page, data = game_page(folder, "podkidnoy", 4, 7)
    open_page(browser, page)
    game = game_data(data)
    names = shown_names(NAMES[:4])
    lines = browser.execute_script(KEY + """
        const now = viewer.querySelector('.now'), seen = [];
        key('Home');
        for (let i = 0; i < Number(viewer.dataset.steps); i++) {
          seen.push([now.textContent, [...now.querySelectorAll('.cardname')].map(c => c.dataset.card)]);
          key('ArrowRight');
        }
        return seen;""")
    chose = [(i, step) for i, step in enumerate(game["steps"]) if "w" in step]
    assert {game["names"][step["w"]] for _, step in chose} >= {"rand@1"}
    for i, step in chose:
        text, cards = lines[i]
        assert text.startswith(names[step["w"]] + " chose "), text
        assert cards == step["a"].split(" ")[1:]
        assert not PROTOCOL_CARD.search(text), text
        if step["f"]["m"] is not None:
            assert text.endswith("to move: " + names[step["f"]["m"]])
    told = browser.execute_script("return document.querySelector('#viewer .result .told').textContent")
    assert game["result"]["fools"] == [3] and told == "fool: rand@1 (seat 3)"  # not seat 1's rand@1
    assert console_errors(browser) == []


def test_a_judged_steps_best_move_names_its_cards_as_drawn(browser: Any, folder: Path) -> None:
    """durak analyze --html's judgement (referee/report/analysis_marks.py with_marks: ``j`` on the seat's step)
    names the best move's cards as drawn, as the chosen move beside it; the protocol string stays in data-action."""
    record = msgspec.structs.replace(random_game("podkidnoy", 2, 3), names=NAMES[:2])
    data = game_data(replay_lines(record), seat=0)
    index = next(i for i, step in enumerate(data["steps"]) if step.get("w") == 0)
    data["steps"][index]["j"] = {"m": "mistake", "l": 0.2, "e": 0.05, "b": "beat TC AC", "k": "sampled"}
    page = folder / "judged.html"
    write_private(page, viewer_page([data]))
    page.chmod(0o644)
    open_page(browser, page, f"#step={index}")
    best = browser.execute_script("const b = document.querySelector('#viewer .now .judged .best');"
                                  "return [b.dataset.action, b.textContent, b.querySelectorAll('.cardname').length]")
    assert best == ["beat TC AC", "beat 10\u2663 with A\u2663", 2]
    assert console_errors(browser) == []


def test_a_cards_tooltip_names_it_as_drawn(browser: Any, folder: Path) -> None:
    """Pointing at a card shows its name as drawn ("10♣"), not the protocol's "TC": in the hands, on the table
    and under the stock."""
    page, _ = game_page(folder, "podkidnoy", 4, 3)
    open_page(browser, page, "#step=8")
    titles = browser.execute_script("return [...document.querySelectorAll('#viewer .card[data-card]')].map(c => "
                                    "[c.dataset.card, c.title, c.classList.contains('trump')])")
    assert len(titles) > 20 and sum(trump for _, _, trump in titles) == 1
    for code, title, trump in titles:
        assert title == ("trump: " if trump else "") + ("10" if code[0] == "T" else code[0]) + SUITS[code[1]], title
    assert console_errors(browser) == []


def test_at_six_players_in_a_narrow_window_every_seat_stays_on_the_felt(browser: Any, folder: Path) -> None:
    """At 1024 px the top row of three boxes is wider than the felt: it wraps rather than hang off its sides."""
    page, _ = game_page(folder, "perevodnoy", 6, 5)
    browser.set_window_size(1024, 800)
    try:
        open_page(browser, page, "#step=20")
        edges = browser.execute_script(
            "const f = document.querySelector('#viewer .felt').getBoundingClientRect();"
            "return [f.left, f.right, [...document.querySelectorAll('#viewer .seat')].map(s => {"
            "  const r = s.getBoundingClientRect(); return [r.left, r.right]; })]")
    finally:
        browser.set_window_size(1280, 900)
    left, right, boxes = edges
    assert len(boxes) == 6 and all(left <= a and b <= right for a, b in boxes), edges
