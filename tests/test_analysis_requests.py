"""The queue of post-game analyses (schema 12) and the daemon's side of it (referee/league/analyses.py): a request
stored once per seat, carried out oldest first within each author's CPU quota per hour, its analysis stored as
``durak analyze`` makes it, a failure kept with why; a schema 11 database migrates; the runner's process does what
the in-process step does."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sqlite3
import threading
import time

import msgspec
import pytest

from referee.analysis.analyze import GameAnalysis, analyze_game
from referee.analysis.evaluate import Settings
from referee.league.analyses import ANALYSIS_NICE, Abandoned, AnalysisFailed, AnalysisRunner, analysis_of, analyze_next
from referee.league.config import ArenaSettings
from referee.results.analysis_store import NewAnalysis
from referee.results.arena_store import ArenaStore
from referee.results.schema import SCHEMA_VERSION
from referee.results.store import StoreError
from referee.results.web_queries import WebStore
from tests.old_schemas import drop_schema_12
from tests.webdb import WebDb
from tests.webkit import base, db

__all__ = ["base", "db"]  # the fixtures, used by name

PLAYOUTS = 8


def quota(cpu_per_hour: float) -> ArenaSettings:
    """The [arena] settings the daemon's step reads: ``cpu_per_hour`` CPU seconds per author, 8 worlds at most."""
    return ArenaSettings(analysis_cpu_seconds_per_hour=cpu_per_hour, analysis_playouts=PLAYOUTS)


def game_id(store: ArenaStore, number: int) -> int:
    """The ``games`` row of the league's game ``number``."""
    league = store.league()
    assert league is not None
    found = WebStore.league_game_line(store, league.id, number)  # type: ignore[arg-type]  # its query alone
    assert found is not None
    return found.id


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
        assert analyze_next(store, league.id, quota(300.0)) is True
        assert analyze_next(store, league.id, quota(300.0)) is False  # nothing left
        row = store.analysis(asked, with_result=True)
        assert row is not None and row.status == "done" and row.cpu_seconds > 0 and row.analysis is not None
        replay = next(iter(store.replays_by_id([gid]))).replay
    expected = analyze_game(replay, 0, Settings(playouts=PLAYOUTS, seed=0))
    assert msgspec.json.decode(row.analysis, type=GameAnalysis) == expected
    assert analyses_mark(db) == before + 2  # running, then done: a replay kept for anonymous visitors is built anew


def fake(*_: object) -> tuple[bytes, float]:
    """An analysis that took 5 CPU seconds."""
    return b"{}", 5.0


def test_an_author_over_the_cpu_quota_waits_while_others_go_first(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        tight = quota(1e-9)  # any CPU second spent is over it
        first = ask(store, "alice", game_id(store, db.games["complete0"]), 0)
        second = ask(store, "alice", game_id(store, db.games["complete1"]), 1)
        bobs = ask(store, "bob", game_id(store, db.games["complete1"]), 0)
        assert analyze_next(store, league.id, tight, fake)  # alice's first: she had spent nothing
        assert analyze_next(store, league.id, tight, fake)  # then bob's, though asked after her second
        status = {key: store.analysis(n).status for key, n in  # type: ignore[union-attr]
                  (("first", first), ("second", second), ("bobs", bobs))}
        assert status == {"first": "done", "second": "pending", "bobs": "done"}
        assert not analyze_next(store, league.id, tight, fake)  # both over their quota now
        assert analyze_next(store, league.id, quota(10.0), fake)  # control: under a larger one
        assert store.analysis(second).status == "done"  # type: ignore[union-attr]


def test_a_row_asking_for_more_worlds_than_the_arena_allows_fails_unmade(db: WebDb) -> None:
    """A row the web server's user wrote by hand: the daemon holds it to ``[arena] analysis_playouts``."""
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        asked = store.add_analysis(league.id, NewAnalysis("alice", "game", game_id(store, db.games["complete0"]), 0,
                                                          10**9, 0)).id
        assert analyze_next(store, league.id, quota(300.0), fake)
        row = store.analysis(asked)
        assert row is not None and row.status == "failed" and row.cpu_seconds == 0
        assert row.result == f"the request asks for 1000000000 worlds per decision, not 2 to {PLAYOUTS}"


def test_a_game_that_cannot_be_analyzed_fails_with_why(db: WebDb) -> None:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        asked = ask(store, "alice", game_id(store, db.games["complete0"]), 5)  # no such seat
        assert analyze_next(store, league.id, quota(300.0))
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
    runner = AnalysisRunner(db.path, quota(300.0))
    seen: list[int] = []
    in_process = runner.in_process

    def watched(*args: object) -> tuple[bytes, float]:
        seen.append(os.getpid())
        return in_process(*args)  # type: ignore[arg-type]

    runner.in_process = watched  # type: ignore[method-assign]
    runner.start()
    try:
        deadline = time.monotonic() + 240  # the process runs at nice 19: beside busy cores it may take minutes
        while time.monotonic() < deadline:
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
        assert store.schema_version == SCHEMA_VERSION == 15
        league = store.league()
        assert league is not None and store.count_games(league.id) > 0
        assert store.pending_analyses(league.id) == []
        asked = ask(store, "alice", game_id(store, db.games["complete0"]), 0)
        assert [row.id for row in store.pending_analyses(league.id)] == [asked]


def test_the_runners_process_runs_at_nice_19_and_a_stop_ends_it_at_once(db: WebDb) -> None:
    """The league never waits for an analysis: its process takes a core only when no one else wants it, and a stop
    of the daemon kills it rather than waiting (the request is done again at the next start)."""
    with ArenaStore(db.path) as store:
        replay = next(iter(store.replays_by_id([game_id(store, db.games["complete0"])]))).replay
    runner = AnalysisRunner(db.path, quota(300.0))
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(runner.in_process(replay, 0, 100_000, 0))  # minutes of work
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    deadline = time.monotonic() + 120  # a spawned interpreter's start, beside busy cores
    child = None
    while time.monotonic() < deadline:
        children = [p for p in multiprocessing.active_children() if p.name == "analysis"]
        if children and children[0].pid is not None:
            with contextlib.suppress(ProcessLookupError):
                if os.getpriority(os.PRIO_PROCESS, children[0].pid) == ANALYSIS_NICE:
                    child = children[0]
                    break
        time.sleep(0.05)
    assert child is not None, "no analysis process at nice 19"
    asked = time.monotonic()
    runner.stopping.set()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - asked < 10  # 0.1 s on a quiet machine: killed, not waited for
    assert len(outcome) == 1 and isinstance(outcome[0], Abandoned) and not child.is_alive()
    assert ANALYSIS_NICE == 19
