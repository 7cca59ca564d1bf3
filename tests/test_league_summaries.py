"""The board's fit from the stored group summaries (schema 11, referee/league/board.py): the same board as the fit
of the games, however the groups were completed; a ledger reads only the summaries stored since its last refit; the
migration from schema 10 and the daemon's fill of the summaries it left out."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from referee.background import BACKGROUND_NICENESS
from referee.league.board import Board, Ledger, refit
from referee.league.course import _Refit
from referee.rating.bradley_terry import rate
from referee.rating.leaderboard import render
from referee.rating.summaries import Summaries
from referee.results.league_store import GroupRow, LeagueStore
from referee.results.schema import SCHEMA_VERSION
from tests.test_rating_summaries import assert_same, outcome, ranked


def add_groups(path: Path, league_id: int, first: int, count: int, rng: random.Random) -> list[int]:
    """Groups ``first``... of 2-5 of nine versions, every rotation stored (a draw in one game of ten), still open;
    returns their numbers. Games are written as the daemon's rows would be, their records holding what the
    triggers read."""
    names = [f"bot{i}@1" for i in range(9)]
    strength = {name: rng.gauss(0.0, 1.0) for name in names}
    with LeagueStore(path) as store:
        for number in range(first, first + count):
            table = rng.sample(names, rng.randint(2, 5))
            store.issue_group(league_id, GroupRow(number, number, tuple(table), table[0]))
    with sqlite3.connect(path) as con:
        base = con.execute("SELECT COALESCE(MAX(number), 0) FROM games").fetchone()[0]
        for number in range(first, first + count):
            table = json.loads(con.execute("SELECT seats FROM league_groups WHERE number = ?", (number,)).fetchone()[0])
            for rotation in range(len(table)):
                seats = table[rotation:] + table[:rotation]
                drawn = rng.random() < 0.1
                places = [1] * len(seats) if drawn else ranked([round(strength[s] + rng.gauss(0, 1)) for s in seats])
                fooled = len(set(places)) > 1
                fools = [s for s, p in zip(seats, places, strict=True) if fooled and p == max(places)]
                base += 1
                con.execute(
                    "INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, rotation, "
                    "end_reason, outcome, record, replay, stderr, finished, number) VALUES (?, ?, 0, ?, ?, ?, ?, "
                    "'fool', ?, ?, x'', x'', 't', ?)",
                    (league_id, f"g{number}|r{rotation}", f"k{base}", f"g{number}", number, rotation,
                     outcome(seats, places, fooled), json.dumps({"players": seats, "fools": fools, "verdicts": []}),
                     base))
    return list(range(first, first + count))


def make_league(tmp_path: Path, groups: int = 30, seed: int = 3) -> tuple[Path, int, random.Random]:
    path = tmp_path / "league.db"
    rng = random.Random(seed)
    with LeagueStore(path) as store:
        league = store.create_league("summaries", "x.toml", "", "f", 1)
    numbers = add_groups(path, league.id, 0, groups, rng)
    with LeagueStore(path) as store:
        for number in numbers[:-3]:
            store.close_group(league.id, number, "complete")
        store.close_group(league.id, numbers[-3], "void", "a version quarantined")  # never rated
        # numbers[-2:] stay open: never rated
    return path, league.id, rng


def assert_board_is_the_games_fit(store: LeagueStore, league_id: int, board: Board) -> None:
    outcomes = store.outcomes(league_id)
    full = rate(outcomes)
    assert_same(full, board.table)
    assert board.n_games == outcomes.n_games
    assert board.rated == dict(zip(outcomes.bots, map(int, np.bincount(outcomes.bot)), strict=True))
    assert board.text() == render(outcomes, rating=full)


def test_the_board_of_the_summaries_is_the_board_of_the_games(tmp_path: Path) -> None:
    path, league_id, _ = make_league(tmp_path)
    with LeagueStore(path) as store:
        store.set_version  # noqa: B018 (the marks of retired versions: none here, the board's footer has none)
        assert store.summary_counts(league_id) == (27, 27)
        assert_board_is_the_games_fit(store, league_id, refit(store, league_id))
    with LeagueStore(path, create=False) as reader:  # as the daemon's refit thread reads
        assert_board_is_the_games_fit(reader, league_id, refit(reader, league_id))


def test_a_ledger_reads_only_the_summaries_stored_since_its_last_refit(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path, league_id, rng = make_league(tmp_path)
    ledger = Ledger(league_id)
    read: list[int] = []
    real = LeagueStore.summaries

    def spy(self: LeagueStore, league: int, after: int, limit: int = 5000) -> list[tuple[int, str]]:
        rows = real(self, league, after, limit)
        read.extend(row_id for row_id, _ in rows)
        return rows

    monkeypatch.setattr(LeagueStore, "summaries", spy)
    with LeagueStore(path) as store:
        ledger.refit(store)
        assert len(read) == 27
        numbers = add_groups(path, league_id, 100, 12, rng)
        for number in numbers:
            store.close_group(league_id, number, "complete")
        board = ledger.refit(store)
        assert len(read) == 27 + 12 and len(set(read)) == len(read)  # the new ones alone
        assert_board_is_the_games_fit(store, league_id, board)
        assert ledger.refit(store).n_games == board.n_games and len(read) == 39


def test_groups_completed_without_a_summary_are_rated_then_filled(tmp_path: Path) -> None:
    """A group made complete by hand (a test, a bench) has no summary: a refit summarizes it from its games for that
    fit only; ``fill_summaries`` (the daemon, at its start) stores it."""
    path, league_id, rng = make_league(tmp_path)
    numbers = add_groups(path, league_id, 200, 7, rng)
    with sqlite3.connect(path) as con:
        con.executemany("UPDATE league_groups SET status = 'complete' WHERE number = ?", [(n,) for n in numbers])
    ledger = Ledger(league_id)
    with LeagueStore(path) as store:
        assert store.summary_counts(league_id) == (34, 27)
        assert_board_is_the_games_fit(store, league_id, ledger.refit(store))
        assert store.fill_summaries(league_id, chunk=3) == 7
        assert store.summary_counts(league_id) == (34, 34)
        assert_board_is_the_games_fit(store, league_id, ledger.refit(store))


def test_a_schema_10_database_migrates_and_is_filled(tmp_path: Path) -> None:
    path, league_id, _ = make_league(tmp_path)
    with sqlite3.connect(path) as con:  # as schema 10 left it
        con.execute("DROP TRIGGER league_summaries_gone")
        con.execute("DROP TABLE league_summaries")
        con.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    with LeagueStore(path, create=False) as old:  # a reader never migrates: it fits the games
        assert old.schema_version == 10
        assert_board_is_the_games_fit(old, league_id, refit(old, league_id))
    with LeagueStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION and store.summary_counts(league_id) == (27, 0)
        assert_board_is_the_games_fit(store, league_id, refit(store, league_id))
        assert store.fill_summaries(league_id) == 27 and store.fill_summaries(league_id) == 0
        assert_board_is_the_games_fit(store, league_id, refit(store, league_id))


def test_a_removed_game_removes_its_groups_summary(tmp_path: Path) -> None:
    path, league_id, _ = make_league(tmp_path)
    ledger = Ledger(league_id)
    with LeagueStore(path) as store:
        ledger.refit(store)
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM games WHERE deal_key = 'g4' AND rotation = 0")
        assert con.execute("SELECT COUNT(*) FROM league_summaries WHERE number = 4").fetchone()[0] == 0
    with LeagueStore(path) as store:
        assert_board_is_the_games_fit(store, league_id, ledger.refit(store))  # read anew, g4 from its games


def test_a_ledger_counts_the_groups_again_only_after_a_deletion(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the summaries read are every complete group's is counted (a pass over the league's groups and
    summaries) until it is so, then again only after a game was deleted (which removes its group's summary): groups
    completed meanwhile came with theirs. The control: the deletion's refit counts, and its board is the games'."""
    path, league_id, rng = make_league(tmp_path)
    counts: list[tuple[int, int]] = []
    real = LeagueStore.summary_counts

    def spy(self: LeagueStore, league: int) -> tuple[int, int]:
        counts.append(real(self, league))
        return counts[-1]

    monkeypatch.setattr(LeagueStore, "summary_counts", spy)
    ledger = Ledger(league_id)
    with LeagueStore(path) as store:
        ledger.refit(store)
        for number in add_groups(path, league_id, 100, 5, rng):
            store.close_group(league_id, number, "complete")
        assert_board_is_the_games_fit(store, league_id, ledger.refit(store))
        assert counts == [(27, 27)]  # the first refit's count alone
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM games WHERE deal_key = 'g4' AND rotation = 0")
    with LeagueStore(path) as store:
        assert_board_is_the_games_fit(store, league_id, ledger.refit(store))
        # g4's summary gone: every row read again, its group summarized anew from its games
        assert counts[1:] == [(32, 31), (32, 31)]
        ledger.refit(store)
        assert counts[3:] == [(32, 31)]  # still one short of the groups: counted until filled
        assert store.fill_summaries(league_id) == 1
        ledger.refit(store)
        ledger.refit(store)
        assert counts[4:] == [(32, 32)]


def test_the_new_summaries_are_read_down_the_rows_key(tmp_path: Path) -> None:
    """A refit reads the summaries after the last row it read down the rows' key, not every summary of the league
    sorted in a temp B-tree (22 ms a read at a million games, and growing with the groups). The control: the same
    statement with the league on its index is planned through the league's summaries and a sort."""
    path, league_id, _ = make_league(tmp_path)
    statements: list[str] = []
    with LeagueStore(path) as store:
        store._db.set_trace_callback(statements.append)  # the store's own connection, as a refit reads it
        assert len(store.summaries(league_id, 0)) == 27
    read, = (sql for sql in statements if "FROM league_summaries" in sql)
    with sqlite3.connect(path) as con:
        plan = [row[3] for row in con.execute(f"EXPLAIN QUERY PLAN {read}")]
        assert plan == ["SEARCH league_summaries USING INTEGER PRIMARY KEY (rowid>?)"]
        indexed = read.replace("+tournament_id", "tournament_id")
        control = [row[3] for row in con.execute(f"EXPLAIN QUERY PLAN {indexed}")]
        assert "USE TEMP B-TREE FOR ORDER BY" in control and not any("rowid>?" in step for step in control)


def blas_threads() -> int:
    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)


def test_the_daemons_refit_takes_one_core_at_the_lowest_priority(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon's refit (its own thread) fits on one BLAS thread, at the background niceness: it takes no second
    core from the games' moves and the web's requests, and yields the one it has to them."""
    path, league_id, _ = make_league(tmp_path)
    seen: list[tuple[int, int]] = []
    real = Summaries.fit

    def spy(self: Summaries, **options: Any) -> Any:
        seen.append((blas_threads(), os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        return real(self, **options)

    monkeypatch.setattr(Summaries, "fit", spy)
    refitting = _Refit(path, Ledger(league_id))
    assert refitting.done.wait(60)
    with LeagueStore(path) as store:
        assert_board_is_the_games_fit(store, league_id, refitting.board())
    assert seen == [(1, BACKGROUND_NICENESS)]
    # Control: the fit called outside a refit sees numpy's BLAS as loaded (a thread per core: more than one where
    # there are cores for it) and this thread's own niceness.
    Summaries().fit()
    threads, niceness = seen[-1]
    assert niceness == os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != BACKGROUND_NICENESS
    assert threads > 1 or min(os.cpu_count() or 1, len(os.sched_getaffinity(0))) == 1
