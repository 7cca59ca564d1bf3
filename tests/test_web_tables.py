"""The card tables over HTTP (referee/web/tables.py) with the daemon's table runner playing real bot processes: a
person (the test, as the page would) plays a table to its end through the API; on the bytes sent over every table
route, nothing shows a card another seat holds unseen, nor the deck, before the game ends (a control shows the
check catches an all-seeing frame); another author, the admin and nobody cannot reach the table; the caps, the
CSRF token, the legal-only moves and the move rate limit hold. The seat's messages are checked as polled and as
streamed (server-sent events, read from a real uvicorn as they come), and a stream's reconnect resumes exactly."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from litestar.testing import TestClient

from protocol.messages import GameOver, GameStart, Request, referee_decoder
from referee.results.arena_store import ArenaStore
from referee.web.app import create_app
from referee.web.auth import CSRF_HEADER, SESSION_COOKIE, session_csrf, sign_session, verify_session
from referee.web.settings import WebSettings
from tests.liveserver import served
from tests.test_tables import league_with_bots
from tests.webdb import WebDb
from tests.webkit import bearer

Client = TestClient  # type: ignore[type-arg]


SETTINGS = WebSettings(rate_burst=10_000, tables_per_author=1, tables_total=2, moves_burst=10_000)


@pytest.fixture(scope="module")
def arena() -> Iterator[tuple[WebDb, Any]]:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-tables-"))
    try:
        db, runner = league_with_bots(folder)
        runner.start()
        try:
            with TestClient(create_app(db.path, SETTINGS)) as client:
                yield db, client
        finally:
            runner.stop()
    finally:  # the league and its bots' folders: nothing left behind
        shutil.rmtree(folder)


@pytest.fixture(scope="module")
def live(arena: tuple[WebDb, Any]) -> Iterator[str]:
    """The same database served by uvicorn on 127.0.0.1: the event stream read as it comes."""
    with served(create_app(arena[0].path, replace(SETTINGS, table_stream_look_seconds=0.02))) as url:
        yield url


def raw(answer: Any) -> bytes:
    return b"".join(f"{k}: {v}\n".encode() for k, v in answer.headers.multi_items()) + answer.content


def hidden_cards(frame: dict[str, Any], known: list[list[str]], me: int,
                 shown: AbstractSet[str] = frozenset()) -> set[str]:
    """The cards other seats hold that ``me`` may not know, in an all-seeing replay frame: neither known to be in
    that hand nor ever ``shown`` face up on the table (a card picked up in the last events, after the seat's last
    view, is known only from the table)."""
    return {card for s, hand in enumerate(frame["h"]) if s != me for card in hand.split()
            if card not in known[s] and card not in shown}


def shown_by(steps: dict[int, dict[str, Any]]) -> dict[int, set[str]]:
    """For each count of events of an all-seeing replay, the cards that had been face up on the table by then."""
    shown: set[str] = set()
    by_count: dict[int, set[str]] = {}
    for count in sorted(steps):
        shown |= {card for pair in steps[count].get("t", []) for card in pair if card}
        by_count[count] = set(shown)
    return by_count


def leaked(data: bytes, cards: set[str]) -> set[str]:
    return {card for card in cards if f'"{card}"'.encode() in data}


Sent = list[tuple[int, list[list[str]], bytes]]


def play_through_the_api(db: WebDb, client: Client, table_id: int) -> Sent:
    """Answer every request with its last legal action until the game is over; each answer's bytes over every
    table route, with the count of events the seat had been told by then and what it knew of each hand."""
    sent: Sent = []
    known: list[list[str]] = []
    since, told, deadline = 0, 0, time.monotonic() + 90
    headers = bearer(db, "alice")
    # An answer shows the table as it was when it was made, which may be past the events the seat had been told
    # before asking (the bots play on meanwhile; a table just over carries its last view): each is judged by what
    # the seat knew once it had read the messages asked for after it, never before (the hidden cards only shrink,
    # but for cards drawn from the stock, which no answer may show either).
    pending: list[bytes] = []
    while time.monotonic() < deadline:
        answer = client.get(f"/api/tables/{table_id}/messages?since={since}", headers=headers)
        assert answer.status_code == 200
        body = answer.json()
        routes = [raw(client.get(route, headers=headers))
                  for route in (f"/api/tables/{table_id}", "/api/tables", f"/tables/{table_id}", "/tables")]
        since = body["next"]
        for line in body["messages"]:
            message = referee_decoder.decode(line)
            told += len(getattr(message, "events", []))
            if isinstance(message, GameStart | Request):
                known = message.view.known
            sent.append((told, known, line.encode()))
            if isinstance(message, Request):
                move = client.post(f"/api/tables/{table_id}/moves", headers=headers,
                                   json={"request": message.id, "action": message.legal[-1]})
                assert move.status_code == 202, move.text
        sent += [(told, known, made) for made in [*pending, raw(answer)]]
        pending = routes
        if body["status"] == "over":  # the routes asked after the last messages showed the table over
            return sent + [(told, known, made) for made in pending]
        time.sleep(0.02)
    raise AssertionError("the table did not end")


class Event(msgspec.Struct):
    """One server-sent event as read: its fields and its bytes."""

    raw: bytes
    id: str | None = None
    type: str = ""  # "message" for data without an ``event:`` name; "" for no data (not dispatched by a browser)
    data: str = ""


def events_of(lines: Iterator[str]) -> Iterator[Event]:
    """The events of a text/event-stream's lines (a comment alone, the heartbeat, is an event with no data)."""
    fields: list[str] = []
    for line in lines:
        if line or not fields:
            fields += [line] if line else []
            continue
        event = Event(raw="\r\n".join(fields).encode())
        for field in fields:
            name, _, value = field.partition(": ")
            if name == "id":
                event.id = value
            elif name == "event":
                event.type = value
            elif name == "data":
                event.data = value
                event.type = event.type or "message"
        fields = []
        yield event


def play_through_the_stream(db: WebDb, url: str, table_id: int) -> tuple[Sent, list[Event]]:
    """As :func:`play_through_the_api`, the seat's messages read from the table's event stream as they come (a
    move posted as soon as its request arrives); every event's bytes, and the events."""
    sent: Sent = []
    known: list[list[str]] = []
    told, seen = 0, list[Event]()
    with httpx.Client(base_url=url, headers=bearer(db, "alice"), timeout=30) as http, \
            http.stream("GET", f"/api/tables/{table_id}/events") as answer:
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/event-stream")
        for event in events_of(answer.iter_lines()):
            seen.append(event)
            if event.type == "message":
                message = referee_decoder.decode(event.data)
                told += len(getattr(message, "events", []))
                if isinstance(message, GameStart | Request):
                    known = message.view.known
                if isinstance(message, Request):
                    move = http.post(f"/api/tables/{table_id}/moves",
                                     json={"request": message.id, "action": message.legal[-1]})
                    assert move.status_code == 202, move.text
            sent.append((told, known, event.raw))
    assert seen[-1].type == "state" and msgspec.json.decode(seen[-1].data)["status"] == "over"  # then it ended
    return sent, seen


def open_alices_table(db: WebDb, client: Client) -> int:
    """A table of three, alice at seat 2; its replay 404 until the game is over."""
    opened = client.post("/api/tables", headers=bearer(db, "alice"),
                         json={"variant": "podkidnoy", "bots": ["rand@1", "rand2@1"], "seat": 2})
    assert opened.status_code == 201, opened.text
    table_id: int = opened.json()["id"]
    replay_before = client.get(f"/api/tables/{table_id}/replay", headers=bearer(db, "alice"))
    assert replay_before.status_code == 404  # every hand only once the game is over
    return table_id


@pytest.fixture(scope="module")
def polled(arena: tuple[WebDb, Any]) -> tuple[int, Sent]:
    """A table alice played to its end through the messages route (each test worker's own): its id and the bytes
    every table route sent meanwhile."""
    db, client = arena
    table_id = open_alices_table(db, client)
    return table_id, play_through_the_api(db, client, table_id)


@pytest.mark.parametrize("feed", ["poll", "stream"])
def test_a_person_plays_a_table_to_its_end_and_sees_nothing_of_the_other_seats(
        arena: tuple[WebDb, Any], live: str, polled: tuple[int, Sent], feed: str) -> None:
    db, client = arena
    if feed == "poll":
        table_id, sent = polled
    else:
        table_id = open_alices_table(db, client)
        sent, events = play_through_the_stream(db, live, table_id)
    lines = client.get(f"/api/tables/{table_id}/messages", headers=bearer(db, "alice")).json()["messages"]
    if feed == "stream":  # each stored line, exactly, as one event numbered as stored
        assert [(e.id, e.data) for e in events if e.type == "message"] == [(str(n), line) for n, line in
                                                                           enumerate(lines)]
    messages = [referee_decoder.decode(line) for line in lines]
    assert isinstance(messages[0], GameStart) and isinstance(messages[-1], GameOver)
    replay = client.get(f"/api/tables/{table_id}/replay", headers=bearer(db, "alice"))
    assert replay.status_code == 200
    data = replay.json()["views"][0]
    assert data["names"][2] == "alice" and data["stderr"] == [[], [], []]
    steps = {step["e"]: step["f"] for step in data["steps"]}  # the frame after each count of events
    shown = shown_by(steps)
    checked = 0
    for told, known, body in sent:
        if told not in steps or b'"game_over"' in body:
            continue
        hidden = hidden_cards(steps[told], known, 2, shown[told])
        assert not leaked(body, hidden), (told, leaked(body, hidden))
        assert b'"deck"' not in body
        checked += 1
    assert checked > 10
    first = steps[min(steps)]
    assert isinstance(messages[0], GameStart)
    # The control: the first message as sent (a line polled, an event streamed), with seat 0's hand in place of the
    # person's, is caught.
    start = next(body for _, _, body in sent if b'"type":"game"' in body)
    hand = msgspec.json.encode(messages[0].view.hand)
    assert hand in start
    swapped = start.replace(hand, msgspec.json.encode(first["h"][0].split()))
    assert leaked(swapped, hidden_cards(first, messages[0].view.known, 2))
    assert not leaked(start, hidden_cards(first, messages[0].view.known, 2))


def test_the_end_carries_the_seats_view_after_the_last_events(arena: tuple[WebDb, Any], live: str,
                                                             polled: tuple[int, Sent]) -> None:
    """The game over message has the last events but no view: the messages route and the stream's last state
    carry the seat's view after them, the replay's last frame as that seat saw it (and no view before the end)."""
    db, client = arena
    table_id, sent = polled
    answer = client.get(f"/api/tables/{table_id}/messages", headers=bearer(db, "alice")).json()
    replay = client.get(f"/api/tables/{table_id}/replay", headers=bearer(db, "alice")).json()["views"][0]
    last = replay["steps"][-1]["f"]
    view = answer["view"]
    assert answer["status"] == "over" and view["seat"] == 2 and view["phase"] == "over"
    assert [" ".join(view["hand"] if s == 2 else view["known"][s]) for s in range(3)] == last["h"]
    assert (view["hand_sizes"], view["stock"], len(view["discard"]), view["table"]) == \
        (last["n"], last["s"], last["x"], last.get("t", []))
    before = [msgspec.json.decode(body) for _, _, body in sent if body.startswith(b"{") and b'"status"' in body]
    assert all(b["view"] is None for b in before if b["status"] != "over")
    with httpx.Client(base_url=live, headers=bearer(db, "alice"), timeout=30) as http:
        events = list(events_of(http.get(f"/api/tables/{table_id}/events").iter_lines()))
    state = [msgspec.json.decode(e.data) for e in events if e.type == "state"][-1]
    assert state["view"] == view


def test_a_reconnect_gets_exactly_the_messages_after_its_last_event(arena: tuple[WebDb, Any],
                                                                    polled: tuple[int, Sent]) -> None:
    """Last-Event-ID (an EventSource's reconnect) resumes after that message; ``?since=K`` starts at K; the header
    wins over the URL's ``since`` (a reconnect keeps its first URL); a malformed one is ignored."""
    db, client = arena
    table_id = polled[0]
    lines = client.get(f"/api/tables/{table_id}/messages", headers=bearer(db, "alice")).json()["messages"]
    assert len(lines) > 5

    def stream(query: str = "", last: str | None = None) -> list[Event]:
        headers = bearer(db, "alice") | ({"Last-Event-ID": last} if last is not None else {})
        answer = client.get(f"/api/tables/{table_id}/events{query}", headers=headers)  # over: it ends
        assert answer.status_code == 200
        return list(events_of(iter(answer.text.split("\r\n"))))

    def numbered(events: list[Event]) -> list[tuple[int, str]]:
        assert events[-1].type == "state" and msgspec.json.decode(events[-1].data)["next"] == len(lines)
        return [(int(e.id or -1), e.data) for e in events if e.type == "message"]

    every = list(enumerate(lines))
    assert numbered(stream()) == every
    assert numbered(stream(last="3")) == every[4:]
    assert numbered(stream("?since=2")) == every[2:]
    assert numbered(stream("?since=0", last="4")) == every[5:]
    assert numbered(stream(last=str(len(lines) - 1))) == []
    assert numbered(stream("?since=1", last="x")) == every[1:]


def test_nobody_else_reaches_a_table(arena: tuple[WebDb, Any]) -> None:
    db, client = arena
    with ArenaStore(db.path) as store:
        tables = store.tables(store.league().id, author="alice")  # type: ignore[union-attr]
    table_id = tables[-1].id
    paths = [f"/api/tables/{table_id}", f"/api/tables/{table_id}/messages", f"/api/tables/{table_id}/replay",
             f"/api/tables/{table_id}/events"]
    for who in ("bob", "admin"):
        for path in paths:
            assert client.get(path, headers=bearer(db, who)).status_code == 404
        move = client.post(f"/api/tables/{table_id}/moves", headers=bearer(db, who), json={"request": 1,
                                                                                           "action": "take"})
        assert move.status_code == 404
    client.cookies.clear()
    for path in paths:
        assert client.get(path).status_code == 401
    assert client.get(f"/tables/{table_id}", follow_redirects=False).status_code == 303
    mine = client.get(paths[0], headers=bearer(db, "alice"))
    assert mine.status_code == 200  # the control: its author does
    assert client.get(f"/api/tables/{table_id + 1000}", headers=bearer(db, "alice")).status_code == 404


def test_caps_csrf_and_legal_moves_hold(arena: tuple[WebDb, Any]) -> None:
    db, client = arena
    bad = client.post("/api/tables", headers=bearer(db, "bob"), json={"variant": "nope", "bots": ["rand@1"]})
    assert bad.status_code == 422 and "unknown variant" in bad.text
    unknown = client.post("/api/tables", headers=bearer(db, "bob"), json={"variant": "chase", "bots": ["alpha@1"]})
    assert unknown.status_code == 422  # alpha is quarantined: not a bot anyone may seat
    first = client.post("/api/tables", headers=bearer(db, "bob"), json={"variant": "chase", "bots": ["rand@1"]})
    assert first.status_code == 201
    second = client.post("/api/tables", headers=bearer(db, "bob"), json={"variant": "chase", "bots": ["rand@1"]})
    assert second.status_code == 429 and "open tables" in second.text  # per author: 1
    admin = client.post("/api/tables", headers=bearer(db, "admin"), json={"variant": "chase", "bots": ["rand@1"]})
    assert admin.status_code == 201
    alice = client.post("/api/tables", headers=bearer(db, "alice"), json={"variant": "chase", "bots": ["rand@1"]})
    assert alice.status_code == 429 and "the arena has 2" in alice.text  # in all: 2
    table_id = first.json()["id"]
    request = wait_request(db, client, table_id)
    wrong = client.post(f"/api/tables/{table_id}/moves", headers=bearer(db, "bob"),
                        json={"request": request.id, "action": "attack 2C"})
    assert wrong.status_code == 409 and "legal" in wrong.text
    stale = client.post(f"/api/tables/{table_id}/moves", headers=bearer(db, "bob"),
                        json={"request": request.id + 1, "action": request.legal[0]})
    assert stale.status_code == 409
    with ArenaStore(db.path) as store:
        author = store.author("bob")
        assert author is not None
        cookie = sign_session(store, store.web_key(), author)
        csrf = session_csrf(store.web_key(), verify_session(store, store.web_key(), cookie, 3600))  # type: ignore[arg-type]
    client.cookies.set(SESSION_COOKIE, cookie)
    try:
        move = {"request": request.id, "action": request.legal[0]}
        assert client.post(f"/api/tables/{table_id}/moves", json=move).status_code == 403  # no CSRF token
        assert client.post(f"/api/tables/{table_id}/moves", json=move, headers={CSRF_HEADER: csrf}).status_code == 202
        again = client.post(f"/api/tables/{table_id}/moves", json=move, headers={CSRF_HEADER: csrf})
        assert again.status_code == 409  # answered already
    finally:
        client.cookies.clear()


def wait_request(db: WebDb, client: Client, table_id: int, who: str = "bob") -> Request:
    """The table's first request to the person (the bots may move first)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        lines = client.get(f"/api/tables/{table_id}/messages", headers=bearer(db, who)).json()["messages"]
        requests = [m for m in map(referee_decoder.decode, lines) if isinstance(m, Request)]
        if requests:
            return requests[0]
        time.sleep(0.05)
    raise AssertionError("no request came")


def test_moves_past_the_authors_move_budget_get_429(arena: tuple[WebDb, Any]) -> None:
    db, _ = arena
    app = create_app(db.path, WebSettings(rate_burst=10_000, moves_burst=2, moves_per_second=0.01))
    with TestClient(app) as client:
        with ArenaStore(db.path) as store:
            table_id = store.tables(store.league().id, author="alice")[-1].id  # type: ignore[union-attr]
        codes = [client.post(f"/api/tables/{table_id}/moves", headers=bearer(db, "alice"),
                             json={"request": 999, "action": "take"}).status_code for _ in range(3)]
    assert codes == [409, 409, 429]  # the budget's first two are looked at (and refused: no such request)


def test_a_person_resigns_and_the_seat_forfeits(tmp_path: Path) -> None:
    db, runner = league_with_bots(tmp_path)
    runner.start()
    try:
        with TestClient(create_app(db.path, WebSettings(rate_burst=10_000))) as client:
            opened = client.post("/api/tables", headers=bearer(db, "alice"),
                                 json={"variant": "podkidnoy", "bots": ["rand@1"], "seat": 1}).json()
            wait_request(db, client, opened["id"], "alice")
            assert client.post(f"/api/tables/{opened['id']}/resign", headers=bearer(db, "bob")).status_code == 404
            assert client.post(f"/api/tables/{opened['id']}/resign", headers=bearer(db, "alice")).status_code == 202
            deadline = time.monotonic() + 10
            while (body := client.get(f"/api/tables/{opened['id']}/messages",
                                      headers=bearer(db, "alice")).json())["status"] != "over":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            last = referee_decoder.decode(body["messages"][-1])
            again = client.post(f"/api/tables/{opened['id']}/resign", headers=bearer(db, "alice"))
    finally:
        runner.stop()
    assert isinstance(last, GameOver)
    assert (last.result.forfeit_seat, last.result.verdict) == (1, "resigned")
    assert again.status_code == 409  # the table is over
