"""The queue of post-game analyses (schema 12) and the daemon's side of it (referee/league/analyses.py): a request
stored once per seat, carried out oldest first within each author's CPU quota per hour, its analysis stored as
``durak analyze`` makes it, a failure kept with why; a schema 11 database migrates; the runner's process does what
the in-process step does."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from referee.analysis.analyze import GameAnalysis, analyze_game
from referee.analysis.evaluate import Settings
from referee.league.analyses import AnalysisFailed, AnalysisRunner, analysis_of, analyze_next
from referee.results.analysis_store import NewAnalysis
from referee.results.arena_store import ArenaStore
from referee.results.schema import SCHEMA_VERSION
from referee.results.store import StoreError
from referee.results.web_queries import WebStore
from tests.old_schemas import drop_schema_12
from tests.webdb import WebDb, built, league_copy

PLAYOUTS = 8


@pytest.fixture(scope="module")
def base() -> Iterator[WebDb]:
    yield from built("durak-test-analysis-requests-")


@pytest.fixture
def db(base: WebDb, tmp_path: Path) -> WebDb:
    return league_copy(base, tmp_path)


def game_id(store: ArenaStore, number: int) -> int:
    """The ``games`` row of the league's game ``number``."""
    league = store.league()
    assert league is not None
    found = WebStore.league_game(store, league.id, number)  # type: ignore[arg-type]  # its query alone
    assert found is not None
    return found[0].id


def analyses_mark(db: WebDb) -> int:
    with sqlite3.connect(db.path) as con:
        row = con.execute("SELECT value FROM read_marks WHERE name = 'analyses'").fetchone()
    return 0 if row is None else int(row[0])


def ask(store: ArenaStore, author: str, game: int, seat: int) -> int:
    league = store.league()
    assert league is not None
    return store.add_analysis(league.id, NewAnalysis(author, "game", game, seat, PLAYOUTS, 0)).id


def test_a_request_is_carried_out_as_durak_analyze_makes_it(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        gid = game_id(store, db.games["complete0"])
        asked = ask(store, "alice", gid, 0)
        with pytest.raises(StoreError, match="analyzed already"):
            ask(store, "alice", gid, 0)
        before = analyses_mark(db)
        assert analyze_next(store, league.id, 300.0) is True
        assert analyze_next(store, league.id, 300.0) is False  # nothing left
        row = store.analysis(asked, with_result=True)
        assert row is not None and row.status == "done" and row.cpu_seconds > 0 and row.analysis is not None
        replay = next(iter(store.replays_by_id([gid]))).replay
    expected = analyze_game(replay, 0, Settings(playouts=PLAYOUTS, seed=0))
    assert msgspec.json.decode(row.analysis, type=GameAnalysis) == expected
    assert analyses_mark(db) == before + 2  # running, then done: a replay kept for anonymous visitors is built anew


def test_an_author_over_the_cpu_quota_waits_while_others_go_first(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        first = ask(store, "alice", game_id(store, db.games["complete0"]), 0)
        second = ask(store, "alice", game_id(store, db.games["complete1"]), 1)
        bobs = ask(store, "bob", game_id(store, db.games["complete1"]), 0)
        assert analyze_next(store, league.id, 1e-9, analyze=lambda *_: (b"{}", 5.0))  # alice's first: under, then over
        assert store.analysis(first).status == "done"  # type: ignore[union-attr]
        assert analyze_next(store, league.id, 1e-9, analyze=lambda *_: (b"{}", 5.0))
        assert store.analysis(bobs).status == "done"  # type: ignore[union-attr]  # bob's, though asked after
        assert store.analysis(second).status == "pending"  # type: ignore[union-attr]
        assert not analyze_next(store, league.id, 1e-9)  # both over their quota now
        assert analyze_next(store, league.id, 10.0, analyze=lambda *_: (b"{}", 5.0))  # control: under a larger one
        assert store.analysis(second).status == "done"  # type: ignore[union-attr]


def test_a_game_that_cannot_be_analyzed_fails_with_why(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        asked = ask(store, "alice", game_id(store, db.games["complete0"]), 5)  # no such seat
        assert analyze_next(store, league.id, 300.0)
        row = store.analysis(asked)
        assert row is not None and row.status == "failed" and row.result.startswith("the game could not be analyzed")
    with pytest.raises(AnalysisFailed, match="could not be analyzed"):
        analysis_of(b"not a replay", 0, PLAYOUTS, 0)


def test_the_runner_analyzes_in_a_process_of_its_own_and_requeues_at_its_start(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        gid = game_id(store, db.games["complete1"])
        asked = ask(store, "bob", gid, 0)
        store.start_analysis(asked)  # as a daemon stopped mid-analysis leaves it
        replay = next(iter(store.replays_by_id([gid]))).replay
    runner = AnalysisRunner(db.path, 300.0)
    seen: list[int] = []
    in_process = runner.in_process

    def watched(*args: object) -> tuple[bytes, float]:
        seen.append(os.getpid())
        return in_process(*args)  # type: ignore[arg-type]

    runner.in_process = watched  # type: ignore[method-assign]
    runner.start()
    try:
        for _ in range(200):
            with ArenaStore(db.path) as store:
                row = store.analysis(asked, with_result=True)
            if row is not None and row.status == "done":
                break
            runner.stopping.wait(0.1)
    finally:
        runner.stop()
    assert row is not None and row.status == "done" and row.analysis is not None, row
    assert msgspec.json.decode(row.analysis, type=GameAnalysis) == analyze_game(
        replay, 0, Settings(playouts=PLAYOUTS, seed=0))
    assert seen == [os.getpid()]  # the watcher called it once (a spawned process analyzed: its CPU not ours)


def test_a_schema_11_database_migrates(db: WebDb) -> None:
    with sqlite3.connect(db.path) as con:  # as schema 11 left it
        drop_schema_12(con)
        con.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    with ArenaStore(db.path) as store:
        assert store.schema_version == SCHEMA_VERSION == 12
        league = store.league()
        assert league is not None and store.count_games(league.id) > 0
        assert store.pending_analyses(league.id) == []
        asked = ask(store, "alice", game_id(store, db.games["complete0"]), 0)
        assert [row.id for row in store.pending_analyses(league.id)] == [asked]
