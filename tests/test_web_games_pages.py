"""The games list's pages reached by their links (a keyset: the games past the neighbour page's last one) are the
pages asked for by number (an offset), and its counts are what a count of the games listed gives, for every filter
and viewer: the counts come from the read side kept as games are stored, less the open groups' games."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from referee.web.app import create_app
from referee.web.settings import WebSettings
from tests.webdb import WebDb, built

FILTERS = ("", "bot=alpha", "verdict=crash", "verdict=any", "players=2", "verdict=any&players=2",
           "bot=alpha&verdict=any", "bot=gamma", "verdict=timeout")


@pytest.fixture(scope="module")
def web() -> Iterator[tuple[WebDb, TestClient[Any]]]:
    for db in built("durak-test-pages-", extra_bots={"gamma": "bob", "delta": "alice"}):  # removed after
        with TestClient(create_app(db.path, WebSettings(rate_burst=100_000, games_per_page=1))) as client:
            yield db, client


def numbers(page: dict[str, Any]) -> list[int]:
    return [game["number"] for game in page["games"]]


@pytest.mark.parametrize("query", FILTERS)
@pytest.mark.parametrize("viewer", ["admin", "anonymous"])
def test_pages_by_their_links_are_the_pages_by_number(web: tuple[WebDb, TestClient[Any]], query: str,
                                                       viewer: str) -> None:
    db, client = web
    headers = {"Authorization": f"Bearer {db.tokens[viewer]}"} if viewer != "anonymous" else {}
    first = client.get(f"/api/games?{query}", headers=headers).json()
    by_number = [first] + [client.get(f"/api/games?{query}&page={n}", headers=headers).json()
                           for n in range(2, first["pages"] + 1)]
    listed = [n for page in by_number for n in numbers(page)]
    assert first["total"] == len(listed) and len(set(listed)) == len(listed)  # one game a page here, none hidden
    if query == "":
        assert (db.games["open"] in listed) == (viewer == "admin")
    older = [first]
    while older[-1]["older"]:
        page = older[-1]
        older.append(client.get(f"/api/games?{query}&page={page['page'] + 1}&before={page['before']}",
                                headers=headers).json())
    assert [numbers(p) for p in older] == [numbers(p) for p in by_number]
    assert [p["page"] for p in older] == list(range(1, first["pages"] + 1))
    assert all(p["total"] is None and p["pages"] is None for p in older[1:])  # a keyset page counts nothing
    assert [p["older"] for p in by_number] == [n < first["pages"] for n in range(1, first["pages"] + 1)]
    newer = [older[-1]]
    while newer[-1]["page"] > 1:
        page = newer[-1]
        newer.append(client.get(f"/api/games?{query}&page={page['page'] - 1}&after={page['after']}",
                                headers=headers).json())
    assert [numbers(p) for p in reversed(newer)] == [numbers(p) for p in by_number]


def test_the_pages_links_carry_their_keysets(web: tuple[WebDb, TestClient[Any]]) -> None:
    client = web[1]
    second = client.get("/api/games?page=2").json()
    html = client.get("/games?page=2").text
    assert f"page=3&amp;before={second['before']}\">older</a>" in html
    assert "page=1\">newer</a>" in html  # the first page is the newest: no keyset, so new games show
    third = client.get(f"/api/games?page=3&before={second['before']}").json()
    html = client.get(f"/games?page=3&before={second['before']}").text
    assert f"page=2&amp;after={third['after']}\">newer</a>" in html
