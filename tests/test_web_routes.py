"""Every route the app serves is held to the visibility matrix (tests/test_web_visibility.py's table of routes):
a page or an API route that shows something is in that table, where each viewer's answer is checked, and a route
that writes is behind a sign-in guard (the login form alone is open, as the admission says) and, under /admin, the
admin's context. So a route added without its check, or without its row in the matrix, fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from litestar import Litestar, get, post
from litestar.testing import TestClient

from referee.results.arena_store import ArenaStore
from referee.web.admission import ANONYMOUS_WRITES
from referee.web.app import create_app
from referee.web.context import ADMIN_DEPENDENCIES, ADMIN_PAGE_DEPENDENCIES, SIGN_IN_GUARDS
from referee.web.settings import WebSettings
from tests.test_web_visibility import VIEWERS, fetch
from tests.test_web_visibility import routes as visibility_matrix
from tests.webdb import A_TABLE, WebDb, game, league_copy, stored
from tests.webkit import base

__all__ = ["base"]  # the fixtures, used by name

#: What the app serves that shows no one's data, and why it is not in the matrix.
NOT_SHOWN = {
    "/static/{name:str}": "the arena's own scripts and styles",
    "/favicon.ico": "the arena's icon",
    "/schema": "the API's OpenAPI document (Litestar's), the same for everyone",
    "/schema/openapi.json": "the same",
    "/schema/{path:str}": "the same",
}
#: Reads whose answers the matrix (kept as it is) does not fetch, and the test that holds each to the rules instead.
CHECKED_ELSEWHERE = {
    "/api/board/live": "tests/test_web_board*.py: the board's live part, the same for every viewer",
    "/tables/{table_id:int}/replay": "test_a_tables_replay_page_is_its_authors_alone, below",
}
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
ADMIN_CONTEXTS = (ADMIN_DEPENDENCIES["ctx"].dependency, ADMIN_PAGE_DEPENDENCIES["ctx"].dependency)


def pattern(path: str) -> re.Pattern[str]:
    """A route's path as a regular expression over the paths it serves (``{n:int}``: digits, ``{s:str}``: a
    segment)."""
    parts = re.split(r"(\{[^}]+\})", path)
    text = "".join(re.escape(part) if not part.startswith("{") else
                   r"\d+" if part.endswith(":int}") else "[^/]+" for part in parts)
    return re.compile(f"{text}/?")


def unchecked(app: Litestar, matrix: list[str]) -> list[str]:
    """Each route of ``app`` (method and path) that nothing holds to the rules: a read not in the ``matrix`` (its
    paths, queries dropped), a write under no sign-in guard, an admin's route without the admin's context."""
    shown = [path.partition("?")[0] for path in matrix]
    found = []
    for route in app.routes:
        if route.path in NOT_SHOWN or route.path in CHECKED_ELSEWHERE:
            continue
        for handler in getattr(route, "route_handlers", []):
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                guarded = any(guard in SIGN_IN_GUARDS for guard in handler.resolve_guards())
                if method == "GET" and not any(pattern(route.path).fullmatch(path) for path in shown):
                    found.append(f"GET {route.path}: not in the visibility matrix")
                if method in WRITES and not guarded and route.path not in ANONYMOUS_WRITES:
                    found.append(f"{method} {route.path}: a write under no sign-in guard")
                provider = handler.resolve_dependencies().get("ctx")
                if route.path.startswith(("/admin", "/api/admin")) and (
                        provider is None or provider.dependency not in ADMIN_CONTEXTS):
                    found.append(f"{method} {route.path}: the admin's route without the admin's context")
    return found


def test_every_route_is_in_the_visibility_matrix_or_behind_its_guard(base: WebDb) -> None:
    app = create_app(base.path, WebSettings())
    assert len(app.routes) > 40  # the controllers' routes are all there
    assert unchecked(app, list(visibility_matrix(base))) == []


def test_a_route_added_without_its_check_is_caught(base: WebDb) -> None:
    """The control: a read with no row in the matrix, a write with no guard and an admin's route with no admin's
    context, each added to the app as a careless handler would be."""
    @get("/api/secrets")
    async def secrets() -> dict[str, Any]:
        return {}

    @post("/api/secrets/forget")
    async def forget() -> None:
        return None

    @get("/admin/secrets")
    async def admin_secrets() -> dict[str, Any]:
        return {}

    matrix = [*visibility_matrix(base), "/admin/secrets"]  # in the matrix, but not the admin's
    app = create_app(base.path, WebSettings())
    for handler in (secrets, forget, admin_secrets):
        app.register(handler)
    assert sorted(unchecked(app, matrix)) == ["GET /admin/secrets: the admin's route without the admin's context",
                                              "GET /api/secrets: not in the visibility matrix",
                                              "POST /api/secrets/forget: a write under no sign-in guard"]


def test_a_tables_replay_page_is_its_authors_alone(base: WebDb, tmp_path: Path) -> None:
    """The one page the matrix (kept as it is) does not fetch, fetched as it would: alice's table, over, its replay
    page hers alone (the admin's included in "nobody else"), as its API twin."""
    db = league_copy(base, tmp_path)
    with ArenaStore(db.path) as store:
        store.end_table(db.table, stored(game([A_TABLE, "beta@1"], 5, "t1", ["", ""]), 0, 0))
    with TestClient(create_app(db.path, WebSettings(rate_burst=10_000))) as client:
        for path, anonymous in ((f"/tables/{db.table}/replay", 303), (f"/api/tables/{db.table}/replay", 401)):
            answers = {viewer: fetch(db, client, viewer, path) for viewer in VIEWERS}
            assert {viewer: status for viewer, (status, _) in answers.items()} == {
                "anonymous": anonymous, "alice": 200, "bob": 404, "admin": 404}, path
            assert A_TABLE.encode() in answers["alice"][1]  # the control: hers shows her table's game
            assert not any(A_TABLE.encode() in raw for viewer, (_, raw) in answers.items() if viewer != "alice")
