"""Signing in: ``Authorization: Bearer <token>`` for API clients, a signed session cookie for browsers, and the
CSRF tokens of a cookie session's forms.

A session cookie is ``<payload>.<signature>``, base64url: the payload is the author's id, their ``epoch``, the
issue time and a random nonce; the signature is HMAC-SHA256 under the database's web key
(:meth:`ArenaVisits.web_key`). The session itself lives on the server: a row of ``web_sessions`` (the nonce, the
author, when it expires) written at login, deleted at logout and when the author is revoked. A cookie is refused
(the viewer is anonymous and the cookie cleared) when the signature is another key's, it is older than the
session's life, its row is gone or expired (a copy kept from before a logout included), or the author is revoked
or their epoch has moved on.

CSRF: a form of a session carries HMAC(key, "csrf|" + the session's nonce) (a synchronizer token bound to the
session, kept nowhere); the login form, before any session, carries HMAC(key, "login|" + a random nonce) whose
nonce sits in a short-lived cookie of its own. A Bearer request carries no cookie credentials and needs none.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

import msgspec

from referee.league.authors import author_of_token
from referee.results.arena_store import ArenaVisits, AuthorRow
from referee.web.visibility import ANONYMOUS, Viewer

SESSION_COOKIE = "durak_session"
LOGIN_COOKIE = "durak_login"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
#: A session's life unless the server's settings say otherwise (:attr:`WebSettings.session_seconds`).
SESSION_SECONDS = 8 * 3600


class _Payload(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    author: int
    epoch: int
    issued: int
    nonce: str


@dataclass(frozen=True)
class Session:
    """A cookie that verified: who, and the nonce its CSRF tokens derive from."""

    author: AuthorRow
    nonce: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(key: bytes, label: str, data: str) -> str:
    return _b64(hmac.new(key, f"{label}|{data}".encode(), hashlib.sha256).digest())


def sign_session(store: ArenaVisits, key: bytes, author: AuthorRow, *, max_age: int = SESSION_SECONDS,
                 now: float | None = None) -> str:
    """A new session for ``author``: its row written (live for ``max_age`` seconds), its cookie's value."""
    issued = int(now if now is not None else time.time())
    nonce = secrets.token_urlsafe(16)
    store.add_session(nonce, author.id, issued, issued + max_age)
    payload = _b64(msgspec.json.encode(_Payload(author.id, author.epoch, issued, nonce)))
    return f"{payload}.{_mac(key, 'session', payload)}"


def verify_session(store: ArenaVisits, key: bytes, value: str, max_age: int,
                   now: float | None = None) -> Session | None:
    """The session a cookie holds, or None: a bad signature, too old, a session ended (logged out, revoked,
    expired: its row is gone), an author revoked, unknown or of an older epoch (one answer for every failure)."""
    payload_text, _, signature = value.partition(".")
    if not hmac.compare_digest(signature.encode(), _mac(key, "session", payload_text).encode()):
        return None
    try:
        payload = msgspec.json.decode(_unb64(payload_text), type=_Payload)
    except (msgspec.DecodeError, binascii.Error, ValueError):
        return None
    at = now if now is not None else time.time()
    if not 0 <= at - payload.issued <= max_age or not store.session_live(payload.nonce, payload.author, at):
        return None
    author = store.author_by_id(payload.author)
    if author is None or author.revoked is not None or author.epoch != payload.epoch:
        return None
    return Session(author, payload.nonce)


def end_session(store: ArenaVisits, session: Session) -> None:
    """Logout: the session's row deleted, so that its cookie (and any copy of it) is refused from now on."""
    store.end_session(session.nonce)


def session_csrf(key: bytes, session: Session) -> str:
    return _mac(key, "csrf", session.nonce)


def new_login_nonce() -> str:
    return secrets.token_urlsafe(16)


def login_csrf(key: bytes, nonce: str) -> str:
    return _mac(key, "login", nonce)


def csrf_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer`` header (None without one; "" for a malformed one)."""
    if authorization is None:
        return None
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def viewer_of(author: AuthorRow | None) -> Viewer:
    return ANONYMOUS if author is None else Viewer(author=author.name, admin=author.admin)


def author_of_bearer(store: ArenaVisits, token: str) -> AuthorRow | None:
    return author_of_token(store, token) if token else None
