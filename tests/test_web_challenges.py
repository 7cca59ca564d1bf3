"""Asking for a challenge from the web: the API (Bearer) and the author page's form (session + CSRF), the refusals
(unknown bots, another's bot, inactive versions, bad sizes, bad counts: one line each), the hourly quotas (games,
and CPU seconds of the measured moves: 429), and another author's challenge answered as a missing one (404); and the
admin's finals asked for from the web (the API and the admin page's form)."""

from __future__ import annotations

import re
import sqlite3
import zlib
from collections.abc import Iterator

import msgspec
import pytest
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.results.replay import replay_lines
from referee.results.rows import StoredGame
from tests.webdb import WebDb, built, game
from tests.webkit import bearer, client_for, db, log_in

__all__ = ["db"]  # the fixtures, used by name

Client = TestClient  # type: ignore[type-arg]
#: gamma is alice's second bot (active); beta is bob's (active); alpha, alice's first, is quarantined.
GOOD = {"bot": "gamma", "opponents": ["beta"], "games": 4}


@pytest.fixture(scope="module")
def base() -> Iterator[WebDb]:
    """The web tests' league with gamma and delta, rated on the board (a version entered since the last fit is
    listed unrated, and plays no finals)."""
    for league in built("durak-test-web-challenges-", extra_bots={"gamma": "alice", "delta": "bob"}):
        con = sqlite3.connect(league.path)
        with con:
            con.execute("UPDATE league_board SET games = 2, sd = 50.0 WHERE games = 0")
        con.close()  # the last connection: its write-ahead log checkpointed, so a copy of the file holds it
        yield league


def sides(db: WebDb) -> list[tuple[str, str, int]]:
    with sqlite3.connect(db.path) as con:
        return con.execute("SELECT author, seats, games FROM side_requests ORDER BY id").fetchall()


def test_an_author_asks_by_the_api_and_sees_it_while_others_get_404(db: WebDb) -> None:
    with client_for(db) as client:
        answer = client.post("/api/challenges", json=GOOD, headers=bearer(db, "alice"))
        assert answer.status_code == 202, answer.text
        number = answer.json()["challenge"]
        assert answer.json() == {"challenge": number, "status": "pending", "url": f"/api/challenges/{number}"}
        assert sides(db)[-1] == ("alice", '["gamma@1","beta@1"]', 4)
        mine = client.get(f"/api/challenges/{number}", headers=bearer(db, "alice")).json()
        assert mine["seats"] == ["gamma@1", "beta@1"] and mine["status"] == "pending" and mine["played"] == []
        assert client.get(f"/api/challenges/{number}", headers=bearer(db, "admin")).status_code == 200
        # bob, whose bot is the opponent, gets what an id that does not exist gets: the same bytes
        theirs = client.get(f"/api/challenges/{number}", headers=bearer(db, "bob"))
        missing = client.get("/api/challenges/99999", headers=bearer(db, "bob"))
        assert theirs.status_code == missing.status_code == 404 and theirs.content == missing.content
        assert client.get(f"/api/challenges/{number}").status_code == 401
        assert client.post("/api/challenges", json=GOOD).status_code == 401
        listed = client.get("/api/authors/alice", headers=bearer(db, "alice")).json()["challenges"]
        assert number in [c["id"] for c in listed]
        assert client.get("/api/authors/alice", headers=bearer(db, "bob")).json()["challenges"] is None


@pytest.mark.parametrize(("asked", "status", "says"), [
    ({"bot": "nobody"}, 404, "no bot 'nobody' in the league"),
    ({"opponents": ["nobody"]}, 404, "no bot 'nobody' in the league"),
    ({"bot": "../x"}, 404, "no bot '../x' in the league"),
    ({"bot": "beta", "opponents": ["gamma"]}, 403, "the bot 'beta' is another author's"),
    ({"bot": "alpha"}, 409, "alpha@1, the latest version of 'alpha', is quarantined"),
    ({"opponents": ["alpha"]}, 409, "alpha@1, the latest version of 'alpha', is quarantined"),
    ({"opponents": ["beta", "beta"]}, 400, "name each opponent once"),
    ({"opponents": ["gamma"]}, 400, "name each opponent once"),
    ({"opponents": []}, 400, "a table of 1 (your bot and 0 opponent(s)) is not one the league plays (2, 3)"),
    ({"opponents": ["beta", "delta"]}, 202, ""),  # control: a table of 3
    ({"games": 0}, 400, "games: ask for 1 to 100"),
    ({"games": 101}, 400, "games: ask for 1 to 100"),
])
def test_a_bad_challenge_is_refused_in_one_line(db: WebDb, asked: dict[str, object], status: int, says: str) -> None:
    with client_for(db, table_sizes=(2, 3)) as client:
        answer = client.post("/api/challenges", json={**GOOD, **asked}, headers=bearer(db, "alice"))
        assert answer.status_code == status, answer.text
        if status != 202:
            detail = answer.json()["detail"]
            assert detail.startswith(says) and "\n" not in detail
            assert len(sides(db)) == 2  # the fixture's only: nothing queued


def test_the_games_quota_answers_429_until_the_hour_is_over(db: WebDb) -> None:
    with client_for(db, side_games_per_hour=6) as client:
        alice = bearer(db, "alice")  # the fixture's challenge of hers asked for 2 games already
        assert client.post("/api/challenges", json={**GOOD, "games": 3}, headers=alice).status_code == 202
        over = client.post("/api/challenges", json={**GOOD, "games": 2}, headers=alice)
        assert over.status_code == 429
        assert over.json()["detail"] == ("challenge quota: 6 games per hour; you asked for 5 in the last hour, try "
                                         "again later")
        assert client.post("/api/challenges", json={**GOOD, "games": 1}, headers=alice).status_code == 202
        assert client.post("/api/challenges", json={**GOOD, "bot": "delta", "opponents": ["gamma"], "games": 4},
                           headers=bearer(db, "bob")).status_code == 202  # bob's quota is his own
    with sqlite3.connect(db.path) as con:  # an hour later
        con.execute("UPDATE side_requests SET created = '2000-01-01T00:00:00+00:00'")
    with client_for(db, side_games_per_hour=6) as client:
        assert client.post("/api/challenges", json={**GOOD, "games": 6}, headers=bearer(db, "alice")).status_code == 202


def test_the_cpu_quota_counts_the_moves_of_the_last_hours_side_games(db: WebDb) -> None:
    moves = zlib.compress(msgspec.json.encode([[1_000_000], [500_000]]))  # as the store writes them
    with sqlite3.connect(db.path) as con:  # alice's challenge's two games took 3 s of moves between them
        con.execute("UPDATE games SET move_us = ? WHERE tournament_id = (SELECT tournament_id FROM side_requests "
                    "WHERE id = ?)", (moves, db.challenges["alice"]))
    with client_for(db, side_cpu_seconds_per_hour=3.0) as client:
        over = client.post("/api/challenges", json=GOOD, headers=bearer(db, "alice"))
        assert over.status_code == 429
        assert over.json()["detail"] == ("challenge quota: 3 CPU seconds per hour; your side games took 3.0 in the "
                                         "last hour, try again later")
        assert client.post("/api/challenges", json={**GOOD, "bot": "delta", "opponents": ["gamma"]},
                           headers=bearer(db, "bob")).status_code == 202  # bob's games took nothing
    with client_for(db, side_cpu_seconds_per_hour=3.5) as client:  # control: under the quota
        assert client.post("/api/challenges", json=GOOD, headers=bearer(db, "alice")).status_code == 202


def test_the_challenge_form_needs_its_csrf_token_and_shows_refusals(db: WebDb) -> None:
    fields = {"bot": "gamma", "opponents": "beta", "games": "2"}
    with client_for(db, side_games_per_hour=4) as client:
        right = log_in(client, db, "alice")
        for wrong in ({}, {"csrf": "nope"}, {"csrf": right[:-2] + "xx"}):
            answer = client.post("/challenges", data={**fields, **wrong}, follow_redirects=False)
            assert answer.status_code == 403
        assert len(sides(db)) == 2
        answer = client.post("/challenges", data={**fields, "csrf": right}, follow_redirects=False)
        assert answer.status_code == 303, answer.text  # control: the right token is taken
        number = int(answer.headers["location"].rsplit("/", 1)[1])
        assert sides(db)[-1] == ("alice", '["gamma@1","beta@1"]', 2)
        page = client.get(f"/challenges/{number}")
        assert page.status_code == 200 and "gamma@1, beta@1" in page.text
        over = client.post("/challenges", data={**fields, "csrf": right}, follow_redirects=False)
        assert over.status_code == 429 and "challenge quota: 4 games per hour" in over.text
        assert 'id="challenge-error"' in over.text and 'id="challenge-form"' in over.text
    with client_for(db) as client:  # bob's session sees none of it
        log_in(client, db, "bob")
        assert client.get(f"/challenges/{number}").status_code == 404
        assert client.get(f"/challenges/{number}").text == client.get("/challenges/99999").text


def test_the_form_is_the_authors_own(db: WebDb) -> None:
    with client_for(db) as client:
        log_in(client, db, "alice")
        bob_page = client.get("/authors/bob").text
        assert 'id="challenge-form"' not in bob_page
        mine = client.get("/authors/alice").text
        options = re.search(r'<select name="opponents" multiple required>(.*?)</select>', mine)
        assert options is not None and re.findall(r"<option>(\w+)</option>", options.group(1)) == ["beta", "delta"]


# -- the admin's finals ------------------------------------------------------------------------


def finals_requests(db: WebDb) -> list[tuple[str, str]]:
    with sqlite3.connect(db.path) as con:
        return con.execute("SELECT status, payload FROM league_requests WHERE kind = 'finals' ORDER BY id").fetchall()


def test_the_admin_asks_for_the_finals_once_and_nobody_else_may(db: WebDb) -> None:
    with client_for(db) as client:
        assert client.post("/api/admin/finals", json={"top": 2}).status_code == 401
        assert client.post("/api/admin/finals", json={"top": 2}, headers=bearer(db, "alice")).status_code == 404
        for bad in ({"top": 1}, {"top": 2, "max_games": 0}, {"top": "x"}, {"top": 2, "extra": 1}):
            answer = client.post("/api/admin/finals", json=bad, headers=bearer(db, "admin"))
            assert answer.status_code == 400, bad
        assert finals_requests(db) == []
        answer = client.post("/api/admin/finals", json={"top": 3, "max_games": 50}, headers=bearer(db, "admin"))
        assert answer.status_code == 202 and answer.json()["kind"] == "finals"
        assert finals_requests(db) == [("pending", '{"top":3,"max_games":50,"by":"web"}')]
        again = client.post("/api/admin/finals", json={"top": 2}, headers=bearer(db, "admin"))
        assert again.status_code == 409 and "asked for already" in again.json()["detail"]
        status = client.get("/api/admin", headers=bearer(db, "admin")).json()["finals"]
        assert status["status"] == "pending" and not status["begun"]


def test_finals_need_two_active_rated_versions(db: WebDb) -> None:
    with sqlite3.connect(db.path) as con:
        con.execute("UPDATE league_versions SET retired = 'now' WHERE name != 'beta@1'")
    with client_for(db) as client:
        answer = client.post("/api/admin/finals", json={"top": 2}, headers=bearer(db, "admin"))
        assert answer.status_code == 409
        assert answer.json()["detail"] == "the board has 1 active rated version(s): finals need 2 or more"


def test_the_finals_form_needs_its_csrf_token_and_the_page_shows_the_status(db: WebDb) -> None:
    with client_for(db) as client:
        log_in(client, db, "admin")
        page = client.get("/admin").text
        assert "Not asked for." in page
        form = re.search(r'<form method="post" action="/admin/finals" id="finals-form"><input type="hidden" '
                         r'name="csrf" value="([^"]*)"', page)
        assert form is not None
        for wrong in ({}, {"csrf": "nope"}):
            assert client.post("/admin/finals", data={"top": "2", **wrong}).status_code == 403
        assert finals_requests(db) == []
        answer = client.post("/admin/finals", data={"top": "2", "max_games": "", "csrf": form.group(1)})
        assert answer.status_code == 200 and "asked the daemon for the finals of the top 2" in answer.text
        assert finals_requests(db) == [("pending", '{"top":2,"max_games":null,"by":"web"}')]
        page = client.get("/admin").text
        assert "Asked for (request" in page and 'id="finals-form"' not in page


def test_a_challenge_game_shows_once_every_rotation_of_its_deal_is_stored(db: WebDb) -> None:
    """As a league game's group: the asker sees a game once its deal is over (its other rotation could be played
    still); the admin sees it at once."""
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        side = store.start_side(store.add_side(league.id, "challenge", "alice", ("gamma@1", "beta@1"), 2), league, 5)
        assert side.tournament_id is not None
        for rotation in range(2):
            names = ["gamma@1", "beta@1"][rotation:] + ["gamma@1", "beta@1"][:rotation]
            record = game(names, 40 + rotation, f"s{side.id}|d0", ["", ""])
            store.save_slots(side.tournament_id, [[StoredGame(
                slot_key=f"s{side.id}|d0|r{rotation}", game_index=0, deal_seed=5, rotation=rotation,
                record=record.to_result_record(), replay=replay_lines(record), stderr=record.stderr)]])
            if rotation == 0:
                with client_for(db) as client:
                    mine = client.get(f"/api/challenges/{side.id}", headers=bearer(db, "alice")).json()
                    assert mine["status"] == "playing" and mine["played"] == []
                    hidden = client.get(f"/api/challenges/{side.id}/games/1", headers=bearer(db, "alice"))
                    assert hidden.status_code == 404
                    admin = client.get(f"/api/challenges/{side.id}/games/1", headers=bearer(db, "admin"))
                    assert admin.status_code == 200  # the control: the game is there
    with client_for(db) as client:
        mine = client.get(f"/api/challenges/{side.id}", headers=bearer(db, "alice")).json()
        assert [g["number"] for g in mine["played"]] == [1, 2]
        views = client.get(f"/api/challenges/{side.id}/games/2", headers=bearer(db, "alice")).json()["views"]
        assert [v["seat"] for v in views] == [None, 1]  # every hand, and gamma's seat (1 in rotation 1)
