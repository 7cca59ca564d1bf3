"""Post-game analyses from the web: an author asks for their own bot's seat (the API, Bearer; the replay's form,
session and CSRF) and a person for their finished card table's seat; every refusal one line with its status (a seat
of another author's bot 403, no such seat 422, asked already 409, an open group's game 404 as a missing one, the
hourly caps 429 with Retry-After); the daemon's step makes it; the marks are sent to the asker alone until the game
is public (its group complete), then to anyone, checked on the bytes sent, with controls (a public game's marks are
sent, so the check can see them; the rule turned off sends a private one's)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from referee.league.analyses import analyze_next
from referee.results.arena_store import ArenaStore
from referee.results.replay import replay_lines
from referee.results.rows import StoredGame
from referee.web import answers
from referee.web.visibility import AnalysisSubject, Sight
from tests.test_analysis_requests import quota
from tests.webdb import WebDb, built, game
from tests.webkit import bearer, client_for, db, log_in

__all__ = ["db"]  # the fixture, used by name

Client = TestClient  # type: ignore[type-arg]
PLAYOUTS = 8
#: In the bytes sent: a judged step of the viewer's data, and a done analysis's summary.
MARKS = (b'"j":{', b'"mean_loss":0', b'"mean_loss":1')


@pytest.fixture(scope="module")
def base() -> Iterator[WebDb]:
    yield from built("durak-test-web-analyses-")


def client(db: WebDb, **settings: Any) -> Client:
    return client_for(db, analysis_playouts=PLAYOUTS, marks_seconds=0, **settings)


def daemon(db: WebDb) -> int:
    """The daemon's analyses, carried out in this process (its step: referee.league.analyses); how many."""
    done = 0
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        while analyze_next(store, league.id, quota(300.0)):
            done += 1
    return done


def ask(c: Client, db: WebDb, who: str, game_key: str, seat: int) -> Any:
    return c.post(f"/api/games/{db.games[game_key]}/analyses", json={"seat": seat}, headers=bearer(db, who))


def has_marks(body: bytes) -> bool:
    return b'"j":{' in body and (b'"mean_loss":0' in body or b'"mean_loss":1' in body)


def no_analysis(body: bytes) -> bool:
    return not any(mark in body for mark in MARKS) and b'class="analysis"' not in body


def finish_table(db: WebDb) -> None:
    """alice's card table (seat 0 against beta@1) played to its end, as the daemon stores it."""
    record = game(["alice", "beta@1"], 41, f"table:{db.table}", ["", ""])
    with ArenaStore(db.path) as store:
        store.start_table(db.table)
        store.end_table(db.table, StoredGame(slot_key=f"table:{db.table}", game_index=0, deal_seed=41, rotation=0,
                                             record=record.to_result_record(), replay=replay_lines(record),
                                             stderr=record.stderr))


def test_an_author_asks_for_their_bots_seat_and_each_refusal_is_one_line(db: WebDb) -> None:
    with client(db) as c:
        answer = ask(c, db, "alice", "complete0", 0)
        assert answer.status_code == 202, answer.text
        number = db.games["complete0"]
        assert answer.json() == {"analysis": answer.json()["analysis"], "status": "pending",
                                 "url": f"/api/games/{number}"}
        refused = {
            "bob's bot's seat": (ask(c, db, "alice", "complete0", 1), 403, "seat 1 is beta@1, not a bot of yours"),
            "no such seat": (ask(c, db, "alice", "complete0", 2), 422, "seat 2 is not at this game's table of 2"),
            "asked already": (ask(c, db, "alice", "complete0", 0), 409, "seat 0 of that game is analyzed already"),
            "an open group's": (ask(c, db, "alice", "open", 0), 404, "Not Found"),
        }
        for why, (got, status, says) in refused.items():
            assert got.status_code == status and got.json()["detail"].startswith(says), (why, got.text)
            assert "\n" not in got.json()["detail"]
        missing = c.post("/api/games/9999/analyses", json={"seat": 0}, headers=bearer(db, "alice"))
        assert missing.content == refused["an open group's"][0].content
        assert c.post(f"/api/games/{number}/analyses", json={"seat": 0}).status_code == 401
        mine = c.get(f"/api/games/{number}", headers=bearer(db, "alice")).json()
        assert [(a["seat"], a["status"], a["playouts"]) for a in mine["analyses"]] == [(0, "pending", PLAYOUTS)]
        assert mine["can_analyze"] == []
        assert c.get(f"/api/games/{number}", headers=bearer(db, "bob")).json()["can_analyze"] == [1]
        assert ask(c, db, "bob", "complete0", 1).status_code == 202  # control: bob's own seat


def test_the_hourly_caps_answer_429_with_retry_after(db: WebDb) -> None:
    with client(db, analyses_per_hour=2) as c:
        assert ask(c, db, "alice", "complete0", 0).status_code == 202
        assert ask(c, db, "alice", "complete1", 1).status_code == 202
        third = ask(c, db, "alice", "void", 0)
        assert third.status_code == 429 and third.json()["detail"].startswith("analysis quota: 2 requests per hour")
        assert 3500 <= int(third.headers["retry-after"]) <= 3600
    assert daemon(db) == 2  # alice has spent CPU seconds now
    with client(db, analysis_cpu_seconds_per_hour=1e-9) as c:
        over = ask(c, db, "alice", "void", 0)
        assert over.status_code == 429 and "CPU seconds per hour" in over.json()["detail"], over.text
        assert 3500 <= int(over.headers["retry-after"]) <= 3600
        assert ask(c, db, "bob", "complete0", 1).status_code == 202  # control: bob has spent nothing


def test_a_private_analysis_is_sent_to_its_asker_alone_and_a_public_one_to_all(db: WebDb, monkeypatch: Any) -> None:
    """The void group's game is shown to all, but is not public for analyses: its analysis is alice's alone. The
    complete group's is public: the same check sees its marks in everyone's bytes (the control)."""
    with client(db) as c:
        void, done = db.games["void"], db.games["complete0"]
        before = c.get(f"/api/games/{done}").content  # kept for anonymous visitors: built anew once the marks move
        assert ask(c, db, "alice", "void", 0).status_code == 202
        assert ask(c, db, "alice", "complete0", 0).status_code == 202
        assert daemon(db) == 2
        mine = c.get(f"/api/games/{void}", headers=bearer(db, "alice"))
        assert has_marks(mine.content)
        seat_view = [v for v in mine.json()["views"] if v["seat"] == 0]
        assert len(seat_view) == 1 and any("j" in step for step in seat_view[0]["steps"])
        for who, headers in (("bob", bearer(db, "bob")), ("anonymous", {})):
            for path in (f"/api/games/{void}", f"/games/{void}"):
                sent = c.get(path, headers={**headers, "accept": "text/html"})
                assert sent.status_code == 200 and no_analysis(sent.content), (who, path)
            assert has_marks(c.get(f"/api/games/{done}", headers=headers).content), who  # control: public
            page = c.get(f"/games/{done}", headers={**headers, "accept": "text/html"}).text
            assert re.search(r'class="analysis"[^>]*data-status="done"', page), who
        assert no_analysis(before)
        public = c.get(f"/api/games/{done}").json()  # anonymous: alice's seat, without its stderr
        marked = [v for v in public["views"] if v["seat"] == 0]
        assert marked and not any(marked[0]["stderr"]), marked[0].get("stderr")
        # the rule turned off (an analysis seen as public whatever its game): the void game's marks reach bob
        rule = answers.sight
        monkeypatch.setattr(answers, "sight", lambda viewer, subject: Sight.PUBLIC if isinstance(
            subject, AnalysisSubject) else rule(viewer, subject))
        assert has_marks(c.get(f"/api/games/{void}", headers=bearer(db, "bob")).content)


def test_the_replays_form_asks_with_the_session_and_its_csrf_token(db: WebDb) -> None:
    with client(db) as c:
        csrf = log_in(c, db, "alice")
        number = db.games["complete1"]
        page = c.get(f"/games/{number}").text
        assert 'action="/games/2/analyses"' in page and 'name="seat" value="1"' in page
        assert 'name="seat" value="0"' not in page  # beta's seat: bob's
        no_token = c.post(f"/games/{number}/analyses", data={"seat": "1"}, follow_redirects=False)
        assert no_token.status_code == 403
        sent = c.post(f"/games/{number}/analyses", data={"seat": "1", "csrf": csrf}, follow_redirects=False)
        assert sent.status_code == 303 and sent.headers["location"] == f"/games/{number}#analyses"
        refused = c.post(f"/games/{number}/analyses", data={"seat": "0", "csrf": csrf}, follow_redirects=False)
        assert refused.status_code == 403 and "not a bot of yours" in refused.text
        assert 'data-status="pending"' in c.get(f"/games/{number}").text


def test_a_person_asks_for_their_tables_game_and_sees_their_own_mistakes_alone(db: WebDb) -> None:
    table = db.table
    with client(db) as c:
        early = c.post(f"/api/tables/{table}/analysis", headers=bearer(db, "alice"))
        assert early.status_code == 409 and early.json()["detail"].endswith("ask once its game is over")
        finish_table(db)
        for who in ("bob", "admin"):  # another's table answers as a missing one, the admin's view included
            assert c.post(f"/api/tables/{table}/analysis", headers=bearer(db, who)).status_code == 404
        answer = c.post(f"/api/tables/{table}/analysis", headers=bearer(db, "alice"))
        assert answer.status_code == 202 and answer.json()["url"] == f"/api/tables/{table}/replay"
        assert c.post(f"/api/tables/{table}/analysis", headers=bearer(db, "alice")).status_code == 409
        assert daemon(db) == 1
        replay = c.get(f"/api/tables/{table}/replay", headers=bearer(db, "alice"))
        assert has_marks(replay.content)
        views = replay.json()["views"]
        assert [v["seat"] for v in views] == [None, 0] and any("j" in step for step in views[1]["steps"])
        for who in ("bob", "admin"):
            assert c.get(f"/api/tables/{table}/replay", headers=bearer(db, who)).status_code == 404
        assert c.get(f"/api/tables/{table}/replay").status_code == 401


def test_an_analysis_row_written_by_hand_draws_nothing_and_breaks_nothing(db: WebDb) -> None:
    """The web server's user may write the queue: another seat's analysis, or another game's, under a request is
    listed but drawn nowhere (no seat's view added, no marks on the wrong steps), and the replay still answers."""
    with client(db) as c:
        assert ask(c, db, "alice", "complete0", 0).status_code == 202
        assert ask(c, db, "bob", "complete1", 0).status_code == 202
        assert daemon(db) == 2
        with ArenaStore(db.path) as store:  # bob's analysis of complete1 under alice's request for complete0
            rows = store._db.execute("SELECT id, analysis FROM analysis_requests ORDER BY id").fetchall()
            store._db.execute("UPDATE analysis_requests SET analysis = ? WHERE id = ?", (rows[1][1], rows[0][0]))
        for who in ("alice", "bob"):
            sent = c.get(f"/api/games/{db.games['complete0']}", headers=bearer(db, who))
            assert sent.status_code == 200 and b'"j":{' not in sent.content, who
            assert [a["status"] for a in sent.json()["analyses"]] == ["done"]
        assert has_marks(c.get(f"/api/games/{db.games['complete1']}", headers=bearer(db, "bob")).content)  # control
