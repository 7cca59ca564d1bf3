"""Who sees what, on the bytes sent: every page and API route x {anonymous, author A, author B, admin}. The rule
table here mirrors docs/WEB.md's; the controls (a marker shown where it may be) keep the matrix from passing by
showing nothing."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.web.app import create_app
from referee.web.auth import SESSION_COOKIE, sign_session
from referee.web.settings import WebSettings
from tests.webdb import (
    A_BUILD_LOG,
    A_GATE_LOG,
    A_QUARANTINE,
    A_REASON,
    A_SIDE_REASON,
    A_SIDE_RESULT,
    A_SIDE_STDERR,
    A_STDERR,
    A_TABLE,
    B_BUILD_LOG,
    B_GATE_LOG,
    B_SIDE_RESULT,
    B_SIDE_STDERR,
    B_STDERR,
    OPEN_MARK,
    WebDb,
    build,
)

VIEWERS = ("anonymous", "alice", "bob", "admin")
OPEN_GAME_KEY = "g1|s13"  # the open group's game id: its hands are in its replay

#: Each secret and who may see it anywhere (docs/WEB.md, "Who sees what").
MAY_SEE: dict[str, set[str]] = {
    A_STDERR: {"alice", "admin"},  # a bot's stderr: its author's and the admin's
    B_STDERR: {"bob", "admin"},
    A_REASON: {"alice", "admin"},  # a verdict's reason quotes stderr: the kind is public, the reason is not
    OPEN_MARK: {"admin"},  # a game of an open group: the admin's only
    OPEN_GAME_KEY: {"admin"},
    A_BUILD_LOG: {"alice", "admin"},  # uploads and their logs: the uploader's and the admin's
    A_GATE_LOG: {"alice", "admin"},
    B_BUILD_LOG: {"bob", "admin"},
    B_GATE_LOG: {"bob", "admin"},
    A_QUARANTINE: {"alice", "admin"},  # why a version is quarantined may quote what it did
    # a challenge and its games: its asker's and the admin's; in them, the asker's own bot's stderr and reasons
    # only (bob's bot's stderr in alice's challenge is nobody's but the admin's, and the other way round)
    A_SIDE_RESULT: {"alice", "admin"},
    B_SIDE_RESULT: {"bob", "admin"},
    A_SIDE_STDERR: {"alice", "admin"},
    A_SIDE_REASON: {"alice", "admin"},
    B_SIDE_STDERR: {"bob", "admin"},
    A_TABLE: {"alice"},  # a card table's seat: its author's alone, not the admin's
}


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[WebDb, TestClient]]:  # type: ignore[type-arg]
    folder = Path(tempfile.mkdtemp(prefix="durak-test-web-"))
    db = build(folder)
    # A table stream ends at its longest life (the test client hands over a response once it has ended).
    app = create_app(db.path, WebSettings(rate_burst=10_000, table_stream_seconds=0.2))
    with TestClient(app) as client:
        yield db, client


def routes(db: WebDb) -> dict[str, dict[str, int]]:
    """Every route that shows something, and its status per viewer where not 200 (303: to the login page)."""
    hidden = {"anonymous": 404, "alice": 404, "bob": 404}
    games = db.games
    a_up, b_up = db.uploads["alice"], db.uploads["bob"]
    return {
        "/": {}, "/api/board": {},
        "/bots/alpha": {}, "/api/bots/alpha": {}, "/bots/beta": {}, "/api/bots/beta": {},
        "/games": {}, "/api/games": {}, "/games?verdict=crash": {}, "/api/games?bot=alpha&players=2": {},
        **{f"{prefix}/games/{games[key]}": {} for prefix in ("", "/api") for key in ("complete0", "complete1", "void")},
        f"/games/{games['open']}": hidden, f"/api/games/{games['open']}": hidden,
        "/authors/alice": {}, "/api/authors/alice": {}, "/authors/bob": {}, "/api/authors/bob": {},
        f"/api/uploads/{a_up}": {"anonymous": 401, "bob": 404}, f"/api/uploads/{b_up}": {"anonymous": 401,
                                                                                           "alice": 404},
        "/admin": {"anonymous": 303, "alice": 404, "bob": 404}, "/api/admin": {"anonymous": 401, "alice": 404,
                                                                              "bob": 404},
        "/upload": {"anonymous": 303}, "/login": {},
        **challenge_routes(db),
        "/tables": {"anonymous": 303}, "/api/tables": {"anonymous": 401},
        f"/tables/{db.table}": {"anonymous": 303, "bob": 404, "admin": 404},
        **{f"/api/tables/{db.table}{tail}": {"anonymous": 401, "bob": 404, "admin": 404}
           for tail in ("", "/messages", "/events")},
        f"/api/tables/{db.table}/replay": {"anonymous": 401, "alice": 404, "bob": 404, "admin": 404},  # not over
    }


def challenge_routes(db: WebDb) -> dict[str, dict[str, int]]:
    """Each author's challenge and its games: the asker's and the admin's; another author gets 404 (as for an id
    that does not exist), nobody the login (a page's redirect, the API's 401)."""
    found: dict[str, dict[str, int]] = {}
    for author, other in (("alice", "bob"), ("bob", "alice")):
        number = db.challenges[author]
        for tail in ("", "/games/1", "/games/2"):
            found[f"/challenges/{number}{tail}"] = {"anonymous": 303, other: 404}
            found[f"/api/challenges/{number}{tail}"] = {"anonymous": 401, other: 404}
    return found


def fetch(db: WebDb, client: TestClient, viewer: str, path: str) -> tuple[int, bytes]:  # type: ignore[type-arg]
    """The answer's status and bytes (headers included): API routes by Bearer token, pages by session cookie."""
    client.cookies.clear()
    headers = {}
    if viewer != "anonymous":
        if path.startswith("/api/"):
            headers["Authorization"] = f"Bearer {db.tokens[viewer]}"
        else:
            with ArenaStore(db.path) as store:
                author = store.author(viewer)
                assert author is not None
                client.cookies.set(SESSION_COOKIE, sign_session(store, store.web_key(), author))
    answer = client.get(path, headers=headers, follow_redirects=False)
    raw = b"".join(f"{k}: {v}\n".encode() for k, v in answer.headers.multi_items()) + answer.content
    return answer.status_code, raw


def test_every_route_shows_each_viewer_only_what_the_rules_allow(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    seen: dict[tuple[str, str], set[str]] = {}
    for path, statuses in routes(db).items():
        for viewer in VIEWERS:
            status, raw = fetch(db, client, viewer, path)
            assert status == statuses.get(viewer, 200), (path, viewer, raw[:300])
            if status == 303:
                assert b"location: /login" in raw
            for secret, allowed in MAY_SEE.items():
                if secret.encode() in raw:
                    assert viewer in allowed, f"{secret} shown to {viewer} at {path}"
                    seen.setdefault((secret, viewer), set()).add(path)
    games = db.games
    controls = {  # where each secret must show, so that the matrix cannot pass by showing nothing
        (A_STDERR, "alice"): f"/api/games/{games['complete0']}", (A_STDERR, "admin"): f"/games/{games['void']}",
        (B_STDERR, "bob"): f"/games/{games['complete1']}", (A_REASON, "alice"): "/api/games",
        (A_REASON, "admin"): f"/games/{games['complete0']}", (OPEN_MARK, "admin"): f"/api/games/{games['open']}",
        (OPEN_GAME_KEY, "admin"): "/api/games", (A_BUILD_LOG, "alice"): "/authors/alice",
        (B_GATE_LOG, "bob"): f"/api/uploads/{db.uploads['bob']}", (B_BUILD_LOG, "admin"): "/api/authors/bob",
        (A_QUARANTINE, "alice"): "/bots/alpha", (A_QUARANTINE, "admin"): "/api/bots/alpha",
        (A_SIDE_RESULT, "alice"): "/authors/alice", (A_SIDE_RESULT, "admin"): "/admin",
        (B_SIDE_RESULT, "bob"): f"/api/challenges/{db.challenges['bob']}",
        (A_SIDE_STDERR, "alice"): f"/challenges/{db.challenges['alice']}/games/1",
        (A_SIDE_STDERR, "admin"): f"/api/challenges/{db.challenges['alice']}/games/2",
        (A_SIDE_REASON, "alice"): f"/api/challenges/{db.challenges['alice']}",
        (A_SIDE_REASON, "admin"): "/api/admin",
        (B_SIDE_STDERR, "bob"): f"/challenges/{db.challenges['bob']}/games/2",
        (B_SIDE_STDERR, "admin"): f"/challenges/{db.challenges['alice']}/games/1",
        (A_TABLE, "alice"): f"/api/tables/{db.table}/messages",
    }
    for (secret, viewer), path in controls.items():
        assert path in seen.get((secret, viewer), set()), f"{secret} not shown to {viewer} at {path}"
    assert f"/api/tables/{db.table}/events" in seen[(A_TABLE, "alice")]  # the stream too


def test_a_verdicts_kind_is_public_and_its_reason_is_not(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    client.cookies.clear()
    crash = client.get("/api/games?verdict=crash").json()["games"]
    assert [v["kind"] for v in crash[0]["verdicts"]] == ["crash"] and crash[0]["verdicts"][0]["reason"] is None
    view = client.get(f"/api/games/{db.games['complete0']}").json()["views"]
    assert len(view) == 1 and view[0]["seat"] is None and view[0]["stderr"] == [[], []]
    assert view[0]["verdicts"][0]["kind"] == "crash" and view[0]["verdicts"][0]["reason"] == ""


def test_an_author_gets_every_hand_and_their_own_seats_view(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    client.cookies.clear()
    views = client.get(f"/api/games/{db.games['complete1']}",
                       headers={"Authorization": f"Bearer {db.tokens['alice']}"}).json()["views"]
    assert [v["seat"] for v in views] == [None, 1]  # alpha sits at seat 1 in the second rotation
    assert views[1]["stderr"][1][0]["text"] == A_STDERR and views[1]["stderr"][0] == []


def test_unknown_and_forbidden_objects_answer_alike(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    client.cookies.clear()
    bob = {"Authorization": f"Bearer {db.tokens['bob']}"}
    for hidden, missing in ((f"/api/games/{db.games['open']}", "/api/games/999"),
                            (f"/api/uploads/{db.uploads['alice']}", "/api/uploads/999"), ("/api/admin", "/api/nope")):
        one, other = client.get(hidden, headers=bob), client.get(missing, headers=bob)
        assert one.status_code == other.status_code == 404 and one.content == other.content


def test_every_answer_carries_the_security_headers(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    client.cookies.clear()
    for path in ("/", "/api/board", "/static/board.js", "/nope", f"/games/{db.games['open']}",
                 "/schema/openapi.json"):
        answer = client.get(path)
        assert answer.headers["content-security-policy"].startswith("default-src 'none'; script-src 'self';")
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "no-referrer"
        # What every visitor sees may be kept by a proxy a few seconds; a refusal, never.
        kept = "public, max-age=300" if "/static/" in path else "public, max-age=5" if path in ("/", "/api/board") \
            else "no-store"
        assert answer.headers["cache-control"] == kept
    alice = {"Authorization": f"Bearer {db.tokens['alice']}"}
    for path in ("/", "/api/board"):  # a signed-in viewer's page is theirs alone
        assert client.get(path, headers=alice).headers["cache-control"] == "no-store"


def test_the_openapi_document_lists_the_api(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    _, client = web
    paths = client.get("/schema/openapi.json").json()["paths"]
    assert {"/api/board", "/api/bots/{name}", "/api/games", "/api/games/{number}", "/api/authors/{name}",
            "/api/uploads", "/api/uploads/{upload_id}", "/api/admin", "/api/admin/{action}", "/api/admin/finals",
            "/api/challenges", "/api/challenges/{challenge_id}", "/api/challenges/{challenge_id}/games/{number}",
            "/api/tables", "/api/tables/{table_id}", "/api/tables/{table_id}/messages", "/api/tables/{table_id}/moves",
            "/api/tables/{table_id}/events",
            "/api/tables/{table_id}/replay", "/api/tables/{table_id}/resign"} <= set(paths)
    assert not any(path.startswith(("/login", "/static")) for path in paths)


def test_the_games_list_filters_and_pages_in_sql(web: tuple[WebDb, TestClient]) -> None:  # type: ignore[type-arg]
    db, client = web
    client.cookies.clear()

    def numbers(query: str, viewer: str | None = None) -> list[int]:
        headers = {"Authorization": f"Bearer {db.tokens[viewer]}"} if viewer else {}
        return [g["number"] for g in client.get(f"/api/games?{query}", headers=headers).json()["games"]]

    games = db.games
    done = sorted((games["complete0"], games["complete1"], games["void"]), reverse=True)
    assert numbers("") == numbers("bot=beta") == numbers("players=2") == done  # newest first, no open group
    assert numbers("", "admin") == sorted(games.values(), reverse=True)
    assert numbers("verdict=crash") == numbers("verdict=any") == [games["complete0"]]
    assert numbers("verdict=timeout") == numbers("players=3") == numbers("bot=nobody") == []
    with TestClient(create_app(db.path, WebSettings(games_per_page=2, rate_burst=10_000))) as paged:
        first, second = (paged.get(f"/api/games?bot=alpha&page={n}").json() for n in (1, 2))
        assert (first["total"], first["pages"], second["page"]) == (3, 2, 2)
        assert [g["number"] for g in first["games"] + second["games"]] == done
        assert paged.get("/api/games?page=99").json()["page"] == 2  # past the end: the last page
