"""Who may play the finals, one rule (:func:`referee.league.finals.finalists`) for the finals themselves (a fresh
fit) and for the web, which refuses the admin's request when they cannot begin (the board as last fitted): the
first ``top`` rated versions still active, two at least. A version entered since the last fit is on the web's
board, unrated, and counts for neither."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.league.finals import finalists, finals_problem
from referee.results.arena_store import ArenaStore, BoardRow
from referee.results.league_store import VersionRow
from referee.results.requests import FEWEST_FINALISTS, MOST_FINALISTS, FinalsTop
from referee.web.page_values import bounds
from tests.clirun import invoke
from tests.webdb import WebDb, built
from tests.webkit import bearer, client_for, db

__all__ = ["db"]  # the fixtures, used by name


@pytest.fixture(scope="module")
def base() -> Iterator[WebDb]:
    """alpha (quarantined) and beta rated; gamma entered since the fit: on the board, unrated."""
    yield from built("durak-test-finals-", extra_bots={"gamma": "bob"})


def test_an_unrated_version_on_the_board_is_no_finalist(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        board = {row.version: row for row in store.board(league.id)}
    assert board["gamma@1"].games == 0 and board["beta@1"].games > 0  # as the daemon lists a new entry
    with client_for(db) as client:
        asked = client.post("/api/admin/finals", json={"top": 2}, headers=bearer(db, "admin"))
        assert asked.status_code == 409, asked.text
        assert asked.json()["detail"] == "the board has 1 active rated version(s): finals need 2 or more"
        with ArenaStore(db.path) as store:  # the control: once gamma's games are fitted, the finals can begin
            store.save_board(league.id, [BoardRow(v, r.rank, r.elo, r.sd, r.games or 2, "2026-01-03T00:00:00")
                                         for v, r in board.items()])
        assert client.post("/api/admin/finals", json={"top": 2}, headers=bearer(db, "admin")).status_code == 202


def test_the_finalists_are_the_first_rated_versions_still_active() -> None:
    def version(name: str, *, retired: bool = False, quarantined: str | None = None) -> VersionRow:
        return VersionRow(name=name, bot=name.partition("@")[0], number=1, author="a", command=[], env={}, dir="",
                          sha256="", retired="2026-01-01" if retired else None, quarantined=quarantined)
    versions = {v.name: v for v in (version("a@1"), version("b@1", retired=True), version("c@1", quarantined="x"),
                                    version("d@1"), version("e@1"))}
    ranked = ["b@1", "a@1", "gone@1", "c@1", "d@1", "e@1"]
    assert [v.name for v in finalists(ranked, versions, 2)] == ["a@1", "d@1"]
    assert [v.name for v in finalists(ranked, versions, 5)] == ["a@1", "d@1", "e@1"]
    assert finals_problem(finalists(ranked, versions, 2)) is None
    assert finals_problem(finalists(["a@1", "b@1"], versions, 2)) == \
        "the board has 1 active rated version(s): finals need 2 or more"


@pytest.mark.parametrize("top", [FEWEST_FINALISTS - 1, MOST_FINALISTS + 1])
def test_the_command_line_takes_the_finals_size_the_admins_form_takes(db: WebDb, top: int) -> None:
    """``durak league finals --top`` refuses a size the admin's form and API refuse (one pair of bounds), in one line
    and exit 2, before touching the league."""
    assert bounds(FinalsTop) == (FEWEST_FINALISTS, MOST_FINALISTS)
    ran = invoke("league", "finals", str(db.path), "--top", str(top))
    assert ran.code == 2 and "--top" in ran.output and "Traceback" not in ran.output, ran.output
