"""The queue of unrated side games in the store (schema 6): its rows, the hourly usage an author's quota is counted
on (games asked, CPU seconds of their games' measured moves), the order the daemon takes requests in, the migration
from schema 5, and that no rating, board or league query reads a side game."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from referee.league.board import board_rows, refit
from referee.results.arena_store import ArenaStore
from referee.results.rows import StoredGame
from referee.results.schema import SCHEMA_VERSION
from referee.results.web_queries import GameQuery, WebStore
from tests.old_schemas import drop_schema_6, drop_schema_7, drop_schema_8
from tests.webdb import build


def hour_ago() -> str:
    return (datetime.now(UTC) - timedelta(hours=1)).isoformat()


def test_usage_counts_the_games_asked_and_the_moves_cpu_of_the_last_hour(tmp_path: Path) -> None:
    db = build(tmp_path)
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        assert store.side_usage("alice", hour_ago()) == (2, 0.0)  # the fixture's challenge: 2 games, no times kept
        side = store.start_side(store.add_side(league.id, "challenge", "alice", ("alpha@1", "beta@1"), 5), league, 1)
        assert side.status == "playing" and side.tournament_id is not None
        moves = [[400_000, 600_000], [1_500_000]]  # 2.5 s over both seats
        store.save_slots(side.tournament_id, [[_with_moves(store, db.challenges["alice"], moves)]])
        asked, cpu = store.side_usage("alice", hour_ago())
        assert asked == 7 and cpu == 2.5
        assert store.side_usage("bob", hour_ago())[0] == 2  # bob's own challenge only
    with sqlite3.connect(db.path) as con:  # an hour and more ago: out of the window
        old = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
        con.execute("UPDATE side_requests SET created = ?", (old,))
        con.execute("UPDATE games SET finished = ?", (old,))
    with ArenaStore(db.path) as store:
        assert store.side_usage("alice", hour_ago()) == (0, 0.0)


def _with_moves(store: ArenaStore, side_id: int, moves: list[list[int]]) -> StoredGame:
    """A copy of one of a challenge's stored games, under a new slot key, with per-move times."""
    side = store.side(side_id)
    stored = next(store.replays_by_id([store.side_games(side)[0].id]))
    return StoredGame(slot_key="s9|d0|r0", game_index=0, deal_seed=1, rotation=0, record=stored.record,
                      replay=stored.replay, stderr=stored.stderr, move_us=moves)


def test_the_daemon_takes_the_request_it_was_playing_first_then_the_oldest(tmp_path: Path) -> None:
    db = build(tmp_path)
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        assert store.next_side(league.id) is None  # the fixture's are done
        first = store.add_side(league.id, "challenge", "bob", ("beta@1", "alpha@1"), 1)
        second = store.add_side(league.id, "challenge", "alice", ("alpha@1", "beta@1"), 1)
        assert store.next_side(league.id) == first
        store.start_side(second, league, 5)
        started = store.next_side(league.id)
        assert started is not None and started.id == second.id and started.status == "playing"
        assert store.start_side(started, league, 6) == started  # started once: its row is kept
        store.finish_side(second.id, "void", "beta@1 no longer plays")
        assert store.next_side(league.id) == first
        assert [s.id for s in store.sides(league.id, author="alice")] == [db.challenges["alice"], second.id]
        assert [s.id for s in store.sides(league.id, statuses=("pending",))] == [first.id]


def test_no_rating_board_or_league_query_reads_a_side_game(tmp_path: Path) -> None:
    """The controls: the side games are stored (their own rows' outcomes rate them), and a side game moved into the
    league's row would be rated and listed; where they belong, the league's fit, board and lists are as without."""
    db = build(tmp_path)
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        with_sides = refit(store, league.id)
        sides = [store.side(n) for n in db.challenges.values()]
        assert all(s.tournament_id is not None and store.outcomes(s.tournament_id).n_games == 2 for s in sides)
        rows = board_rows(with_sides, "now")
    with WebStore(db.path) as web:
        listed = web.count_league_games(league.id, GameQuery())
        bots = web.count_league_games(league.id, GameQuery(players=("alpha@1",)))
    with sqlite3.connect(db.path) as con:  # the same league without any side game
        con.execute("DELETE FROM games WHERE tournament_id IN (SELECT id FROM tournaments WHERE kind = 'side')")
    with ArenaStore(db.path) as store:
        without = refit(store, league.id)
        assert without.n_games == with_sides.n_games > 0
        assert board_rows(without, "now") == rows
    with WebStore(db.path) as web:
        assert web.count_league_games(league.id, GameQuery()) == listed
        assert web.count_league_games(league.id, GameQuery(players=("alpha@1",))) == bots
    # Control: a side game stored in the league's row (no group: counted as complete) would be rated and listed (by
    # the games' fit, ``durak leaderboard``'s: the board's reads only the complete groups' summaries).
    (tmp_path / "control").mkdir()
    db2 = build(tmp_path / "control")
    with sqlite3.connect(db2.path) as con:
        con.execute("UPDATE games SET tournament_id = (SELECT id FROM tournaments WHERE kind = 'league'), "
                    "number = 1000 + id WHERE tournament_id IN (SELECT id FROM tournaments WHERE kind = 'side')")
    with ArenaStore(db2.path) as store:
        assert store.outcomes(league.id).n_games > with_sides.n_games


def test_a_schema_5_database_migrates_with_its_league_kept(tmp_path: Path) -> None:
    db = build(tmp_path)
    with sqlite3.connect(db.path) as con:
        drop_schema_8(con)
        drop_schema_7(con)
        drop_schema_6(con)
        con.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
        games = con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    with ArenaStore(db.path) as store:
        assert store.schema_version == SCHEMA_VERSION == 15
        league = store.league()
        assert league is not None and store.count_games(league.id) == games
        assert store.sides(league.id) == [] and store.next_side(league.id) is None
        added = store.add_side(league.id, "challenge", "alice", ("alpha@1", "beta@1"), 3)
        assert store.side(added.id).seats == ("alpha@1", "beta@1")

