"""Issue 35: numbers out of range never answer 500. Every route with an integer parameter (in its path or its
query: found from the app's routes and each handler's type hints, so a new route is covered as it is written) is
thrown huge, negative and boundary integers: an id in the path beyond SQLite's 64 bits is 404, a query number out
of range 400 in one line, nothing 5xx."""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.testing import TestClient

from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.webdb import WebDb
from tests.webkit import base

__all__ = ["base"]  # the fixtures, used by name

Client = TestClient  # type: ignore[type-arg]
INT64 = (-(2**63), 2**63 - 1)
#: The boundaries every route is thrown, beside hypothesis's draws.
BOUNDARIES = (0, -1, 1, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64,
              10**30, -(10**30), 10**300)


@dataclass(frozen=True)
class Target:
    """A route's integer parameter: the method, the path (``{name}`` where the number goes), where it sits."""

    method: str
    path: str
    name: str
    where: str  # "path" or "query"

    def url(self, number: int, fill: int = 1) -> str:
        if self.where == "query":
            return f"{self.path.format_map(_Fill(fill))}?{self.name}={number}"
        return self.path.format_map(_Fill(fill, {self.name: number}))


class _Fill(dict[str, Any]):
    def __init__(self, fill: int, given: dict[str, int] | None = None) -> None:
        super().__init__(given or {})
        self.fill = fill

    def __missing__(self, key: str) -> int:
        return self.fill


def _is_int(hint: Any) -> bool:
    if hint is int:
        return True
    return get_origin(hint) in (Union, types.UnionType) and int in get_args(hint) and \
        all(arg in (int, type(None)) for arg in get_args(hint))


def targets(app: Litestar) -> list[Target]:
    """Every (route, integer parameter) of the app, from its routes and its handlers' signatures (as Litestar
    resolved their type hints)."""
    found = []
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        path = route.path
        for parameter in route.path_parameters.values():
            path = path.replace(f"{{{parameter.full}}}", f"{{{parameter.name}}}")
        for handler in route.route_handlers:
            for method in sorted(handler.http_methods - {"OPTIONS", "HEAD"}):
                hints = {name: field.annotation for name, field in handler.parsed_fn_signature.parameters.items()}
                for parameter in route.path_parameters.values():
                    if parameter.type is int:
                        found.append(Target(method, path, parameter.name, "path"))
                for name, hint in hints.items():
                    if name not in route.path_parameters and _is_int(hint):
                        found.append(Target(method, path, name, "query"))
    return found


@pytest.fixture(scope="module")
def db(base: WebDb) -> WebDb:
    """The module's league itself: these tests write nothing that matters."""
    return base


@pytest.fixture(scope="module")
def app(db: WebDb) -> Litestar:
    # A table's event stream ends after 0.1 s here (its life is 5 minutes otherwise).
    return create_app(db.path, WebSettings(rate_burst=1_000_000, rate_per_second=1e6, table_stream_seconds=0.1,
                                           table_stream_look_seconds=0.02))


@pytest.fixture(scope="module")
def client(app: Litestar) -> Iterator[Client]:
    with TestClient(app) as client:
        yield client


#: A JSON body for the writes among the targets (what their handler takes; any would do: the number comes first).
BODIES = {"/api/tables/{table_id}/moves": {"request": 0, "action": "x"}}


def ask(client: Client, db: WebDb, target: Target, number: int) -> tuple[int, str]:
    """The answer to ``number`` at ``target``, as alice (signed in: every login wall passed, the number reaches
    the handler)."""
    url = target.url(number)
    headers = {"Authorization": f"Bearer {db.tokens['alice']}", "Accept": "application/json"}
    if target.method == "GET":
        answer = client.get(url, headers=headers)
    else:
        answer = client.request(target.method, url, headers=headers, json=BODIES.get(target.path, {}))
    return answer.status_code, answer.text


def check(client: Client, db: WebDb, target: Target, number: int) -> None:
    status, text = ask(client, db, target, number)
    assert status < 500, (target, number, status, text[:300])
    if not INT64[0] <= number <= INT64[1]:
        assert status == (404 if target.where == "path" else 400), (target, number, status, text[:300])
        if target.where == "query":
            assert "\n" not in text and "out of range" in text, text[:300]


def test_the_routes_with_integer_parameters_are_all_found(app: Litestar) -> None:
    """The enumeration's control: the routes known to take numbers are among those found."""
    found = {(t.method, t.path, t.name, t.where) for t in targets(app)}
    assert {("GET", "/api/games/{number}", "number", "path"), ("GET", "/api/games", "players", "query"),
            ("GET", "/api/games", "page", "query"), ("GET", "/games", "page", "query"),
            ("GET", "/api/uploads/{upload_id}", "upload_id", "path"),
            ("GET", "/api/challenges/{challenge_id}/games/{number}", "number", "path"),
            ("GET", "/api/tables/{table_id}/messages", "since", "query"),
            ("GET", "/api/tables/{table_id}/events", "since", "query"),
            ("POST", "/api/tables/{table_id}/moves", "table_id", "path"),
            ("GET", "/tables/{table_id}", "table_id", "path")} <= found
    assert len(found) >= 20


def test_every_integer_parameter_at_its_boundaries(client: Client, db: WebDb, app: Litestar) -> None:
    for target in targets(app):
        for number in BOUNDARIES:
            check(client, db, target, number)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_integer_at_any_integer_parameter_never_answers_5xx(client: Client, db: WebDb, app: Litestar,
                                                                data: st.DataObject) -> None:
    chosen = data.draw(st.sampled_from(targets(app)))
    number = data.draw(st.one_of(st.integers(), st.integers(min_value=2**62, max_value=2**70),
                                 st.integers(min_value=-(2**70), max_value=-(2**62)), st.sampled_from(BOUNDARIES)))
    check(client, db, chosen, number)


def test_a_streams_since_out_of_range_is_refused_before_it_starts(client: Client, db: WebDb) -> None:
    for number in (2**63, -(2**63) - 1, 10**30):
        status, text = ask(client, db, Target("GET", "/api/tables/{table_id}/events", "since", "query"), number)
        assert status == 400 and "out of range" in text, text[:200]


def test_the_games_pages_table_size_out_of_range_is_400(client: Client, db: WebDb) -> None:
    """The page takes ``players`` as text (its form sends it empty for any size): a number of any length is a
    table size or refused, never handed to a query."""
    for players in ("99999999999999999999999", "9223372036854775808", "123"):
        answer = client.get(f"/games?players={players}", headers={"Accept": "application/json"})
        assert answer.status_code == 400, (players, answer.text[:200])
    assert client.get("/games?players=2").status_code == 200  # control
