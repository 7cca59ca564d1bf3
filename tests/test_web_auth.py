"""Signing in and what guards the writes: CSRF on every form (and none needed by a Bearer client), session cookies
refused when signed by another key, expired or of a revoked author, tokens never logged nor shown again, rate
limits with 429 + Retry-After, body caps and the upload quotas."""

from __future__ import annotations

import logging

import pytest
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.web.auth import SESSION_COOKIE, sign_session
from tests.webdb import WebDb
from tests.webkit import base, client_for, csrf_of, db, log_in

__all__ = ["base", "db"]  # the fixtures, used by name

Client = TestClient  # type: ignore[type-arg]


def session_cookie(db: WebDb, name: str, key: bytes | None = None, now: float | None = None) -> str:
    with ArenaStore(db.path) as store:
        author = store.author(name)
        assert author is not None
        return sign_session(store, key or store.web_key(), author, now=now)


# -- CSRF ------------------------------------------------------------------------------------


def test_the_login_form_needs_its_csrf_token(db: WebDb) -> None:
    with client_for(db) as client:
        right = csrf_of(client.get("/login").text)
        for wrong in ({}, {"csrf": ""}, {"csrf": right[:-2] + "xx"}):
            answer = client.post("/login", data={"token": db.tokens["alice"], **wrong}, follow_redirects=False)
            assert answer.status_code == 403 and SESSION_COOKIE not in answer.headers.get("set-cookie", "")
        client.cookies.clear()  # the token is bound to its login cookie: without it, refused
        assert client.post("/login", data={"token": db.tokens["alice"], "csrf": right}).status_code == 403
    with client_for(db) as client:
        right = csrf_of(client.get("/login").text)
        wrong_token = client.post("/login", data={"token": db.tokens["alice"] + "x", "csrf": right})
        assert wrong_token.status_code == 401 and SESSION_COOKIE not in wrong_token.headers.get("set-cookie", "")
        log_in(client, db, "alice")  # control
        assert client.get("/api/authors/alice").json()["uploads"] is not None


@pytest.mark.parametrize("form", [("/logout", {}), ("/upload", {"bot": "admins_bot"}),
                                  ("/admin/retire", {"bot": "beta"}), ("/admin/quarantine", {"bot": "beta"}),
                                  ("/admin/reinstate", {"bot": "alpha"}),
                                  ("/tables", {"variant": "podkidnoy", "bots": "beta@1"})])
def test_every_form_of_a_session_needs_its_csrf_token(db: WebDb, form: tuple[str, dict[str, str]]) -> None:
    path, fields = form
    files = {"archive": ("bot.tar.gz", b"\x1f\x8b archive")} if path == "/upload" else None
    with client_for(db) as client:
        right = log_in(client, db, "admin")
        for wrong in ({}, {"csrf": "nope"}, {"csrf": csrf_of(client_for(db).get("/login").text)}):
            answer = client.post(path, data={**fields, **wrong}, files=files, follow_redirects=False)
            assert answer.status_code == 403, (path, wrong)
        answer = client.post(path, data={**fields, "csrf": right}, files=files, follow_redirects=False)
        assert answer.status_code in (200, 303), answer.text  # control: the right token is taken
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        kinds = [r.kind for r in store.pending_requests(league.id)][len(db.uploads):]  # past the fixture's uploads
        tables = store.tables(league.id, author="admin")
    assert kinds == {"/logout": [], "/upload": ["upload"], "/admin/retire": ["retire"],
                     "/admin/quarantine": ["quarantine"], "/admin/reinstate": ["reinstate"], "/tables": []}[path]
    assert len(tables) == (path == "/tables")  # the form's table, opened once: with the right token


def test_a_bearer_client_needs_no_csrf_but_a_cookie_session_on_the_api_does(db: WebDb) -> None:
    with client_for(db) as client:
        admin = {"Authorization": f"Bearer {db.tokens['admin']}"}
        assert client.post("/api/admin/retire", json={"bot": "beta"}, headers=admin).status_code == 202
        assert client.post("/api/uploads?bot=alpha", content=b"\x1f\x8bgz", headers={
            "Authorization": f"Bearer {db.tokens['alice']}", "Content-Type": "application/gzip"}).status_code == 202
        right = log_in(client, db, "admin")
        assert client.post("/api/admin/retire", json={"bot": "beta"}).status_code == 403
        answer = client.post("/api/admin/retire", json={"bot": "beta"}, headers={"X-CSRF-Token": right})
        assert answer.status_code == 202 and answer.json()["kind"] == "retire"


# -- session cookies --------------------------------------------------------------------------


def test_a_cookie_of_another_key_an_old_one_or_a_revoked_authors_is_refused_and_cleared(db: WebDb) -> None:
    with client_for(db, session_seconds=3600) as client:
        refused = [session_cookie(db, "alice", key=b"k" * 32), session_cookie(db, "alice", now=1.0),
                   session_cookie(db, "alice") + "x", "garbage"]
        for cookie in refused:
            client.cookies.set(SESSION_COOKIE, cookie)
            answer = client.get("/authors/alice")
            assert "A-BUILD-LOG" not in answer.text and f"{SESSION_COOKIE}=;" in answer.headers["set-cookie"]
        valid = session_cookie(db, "alice")
        client.cookies.set(SESSION_COOKIE, valid)
        assert "A-BUILD-LOG" in client.get("/authors/alice").text  # control
        with ArenaStore(db.path) as store:
            store.revoke_author("alice")
        client.cookies.set(SESSION_COOKIE, valid)
        answer = client.get("/authors/alice")
        assert "A-BUILD-LOG" not in answer.text and f"{SESSION_COOKIE}=;" in answer.headers["set-cookie"]


def test_the_session_cookie_is_httponly_strict_and_secure_behind_a_trusted_tls_proxy(db: WebDb) -> None:
    with client_for(db, trusted_proxies=frozenset({"testclient"})) as client:
        nonce_page = client.get("/login", headers={"X-Forwarded-Proto": "https"})
        assert "Secure" in nonce_page.headers["set-cookie"]
        nonce = nonce_page.headers["set-cookie"].split(";")[0].split("=", 1)[1]
        client.cookies.set("durak_login", nonce)  # a Secure cookie: the client keeps it for https only
        answer = client.post("/login", data={"token": db.tokens["bob"], "csrf": csrf_of(nonce_page.text)},
                             headers={"X-Forwarded-Proto": "https"}, follow_redirects=False)
        cookie = next(c for c in answer.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE))
        assert all(part in cookie for part in ("HttpOnly", "SameSite=strict", "Secure", "Max-Age=28800"))
    with client_for(db) as client:  # an untrusted peer's X-Forwarded-Proto is not believed
        assert "Secure" not in client.get("/login", headers={"X-Forwarded-Proto": "https"}).headers["set-cookie"]


def test_a_token_is_never_logged_nor_shown_again(db: WebDb, caplog: pytest.LogCaptureFixture) -> None:
    token = db.tokens["alice"]
    secret = token.split("_", 2)[2]
    with client_for(db) as client:
        root = logging.getLogger()  # after the app's start, which configures logging (Litestar's defaults)
        root.addHandler(caplog.handler)
        level, root.level = root.level, logging.DEBUG
        for name in ("litestar", "httpx", "uvicorn", "uvicorn.access"):
            logging.getLogger(name).setLevel(logging.DEBUG)
        log_in(client, db, "alice")
        pages = [client.get(path).text for path in ("/", "/authors/alice", "/upload", "/games")]
        client.cookies.clear()
        pages.append(client.get("/api/authors/alice", headers={"Authorization": f"Bearer {token}"}).text)
        pages.append(client.post("/login", data={"token": token, "csrf": "x"}).text)
        root.removeHandler(caplog.handler)
        root.level = level
    assert caplog.records and all(secret not in text for text in [caplog.text, *pages])
    with ArenaStore(db.path) as store:
        cookie = session_cookie(db, "alice")
        assert secret not in cookie and store.web_key().hex() not in caplog.text


# -- limits ----------------------------------------------------------------------------------


def test_an_address_past_its_budget_gets_429_with_retry_after(db: WebDb) -> None:
    with client_for(db, rate_burst=5, rate_per_second=0.01) as client:
        assert [client.get("/api/board").status_code for _ in range(5)] == [200] * 5  # control: within the budget
        answer = client.get("/api/board")
        assert answer.status_code == 429 and int(answer.headers["retry-after"]) >= 1
        # An untrusted peer's X-Forwarded-For is not believed: still the same address.
        assert client.get("/api/board", headers={"X-Forwarded-For": "10.9.9.9"}).status_code == 429


def test_an_author_past_their_budget_gets_429_from_any_address(db: WebDb) -> None:
    with client_for(db, rate_burst=4, rate_per_second=0.01, trusted_proxies=frozenset({"testclient"})) as client:
        bearer = {"Authorization": f"Bearer {db.tokens['bob']}"}
        codes = [client.get("/api/board", headers={**bearer, "X-Forwarded-For": f"10.0.0.{i}"}).status_code
                 for i in range(6)]
        assert codes == [200] * 4 + [429] * 2
        assert client.get("/api/board", headers={"X-Forwarded-For": "10.0.0.99"}).status_code == 200  # anonymous


def test_bodies_are_capped(db: WebDb) -> None:
    alice = {"Authorization": f"Bearer {db.tokens['alice']}"}
    with client_for(db, form_bytes=1000, archive_bytes=5000) as client:
        big = {"bot": "beta" + " " * 2000}
        assert client.post("/api/admin/retire", json=big, headers=alice).status_code == 413
        assert client.post("/login", data={"token": "x" * 2000, "csrf": "y"}).status_code == 413
        raw = {**alice, "Content-Type": "application/octet-stream"}
        assert client.post("/api/uploads?bot=alpha", content=b"x" * 5001, headers=raw).status_code == 413
        assert client.post("/api/uploads?bot=alpha", content=b"x" * 4999, headers=raw).status_code == 202
        assert client.post("/api/uploads?bot=alpha", content=b"x", headers={
            **alice, "Content-Type": "text/html"}).status_code == 415
        right = log_in(client, db, "alice")
        answer = client.post("/upload", data={"bot": "alpha", "csrf": right},
                             files={"archive": ("a.zip", b"x" * 6000)})
        assert answer.status_code == 413


def test_the_bot_count_and_upload_quotas_say_why(db: WebDb) -> None:
    alice = {"Authorization": f"Bearer {db.tokens['alice']}", "Content-Type": "application/zip"}
    with client_for(db, max_bots=2, uploads_per_hour=3) as client:
        def upload(bot: str) -> tuple[int, str]:
            answer = client.post(f"/api/uploads?bot={bot}", content=b"\x1f\x8bgz", headers=alice)
            return answer.status_code, answer.text

        assert upload("beta") == (403, upload("beta")[1]) and "belongs to another author" in upload("beta")[1]
        assert upload("<b>")[0] == 400
        status, text = upload("alpha2")  # alice's second bot name: within max_bots
        assert status == 202 and '"url":"/api/uploads/' in text
        status, text = upload("alpha3")
        assert status == 403 and "bot quota: you have 2 bots, the most allowed is 2" in text
        assert upload("alpha")[0] == 202  # the fixture's upload, alpha2's and this one: 3 this hour
        status, text = upload("alpha")
        assert status == 429 and "3 uploads per hour" in text


def test_the_stored_bytes_quota(db: WebDb) -> None:
    with client_for(db, stored_bytes=100) as client:
        answer = client.post("/api/uploads?bot=alpha", content=b"x" * 101,
                             headers={"Authorization": f"Bearer {db.tokens['alice']}",
                                      "Content-Type": "application/gzip"})
        assert answer.status_code == 413 and "storage quota" in answer.text
