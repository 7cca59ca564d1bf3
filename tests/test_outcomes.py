"""Outcome columns: the database's compact outcome text gives exactly what the records give."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from protocol.records import ResultRecord, Verdict
from referee.rating.bradley_terry import rate
from referee.rating.leaderboard import build_rows, game_stats
from referee.rating.outcomes import outcome_text, outcomes_from_records, outcomes_from_rows
from referee.results.store import Store, StoredGame, StoreError


def random_records(count: int, seed: int) -> list[ResultRecord]:
    """Games of 2-6 of 8 bots with ties, co-fools, draws and the odd disqualification."""
    rng = random.Random(seed)
    bots = [f"bot{i}" for i in range(8)]
    records = []
    for g in range(count):
        players = rng.sample(bots, rng.randint(2, 6))
        finish = rng.sample(players, len(players))
        groups: list[list[str]] = []
        for name in finish:
            if groups and rng.random() < 0.3:
                groups[-1].append(name)
            else:
                groups.append([name])
        drawn = rng.random() < 0.1 and len(groups) == 1
        fools = [] if drawn else list(groups[-1])
        verdicts = [Verdict(seat=0, bot=players[0], kind="disqualified", reason="x")] if rng.random() < 0.02 else []
        records.append(ResultRecord(game=f"g{g}", deal=f"d{g // 3}", variant="chase", players=players, order=groups,
                                    fools=fools, end="draw" if drawn else "fool", verdicts=verdicts))
    return records


def test_outcome_text_round_trips_to_the_same_columns() -> None:
    records = random_records(500, 1)
    direct = outcomes_from_records(records)
    disqualified = {v.bot: v.reason for r in records for v in r.verdicts}
    via_text = outcomes_from_rows(((r.deal, outcome_text(r)) for r in records), disqualified)
    for field in ("bot", "place", "fool", "size", "cluster", "drawn"):
        assert np.array_equal(getattr(direct, field), getattr(via_text, field)), field
    assert (direct.bots, direct.clusters, direct.disqualified) == (via_text.bots, via_text.clusters,
                                                                   via_text.disqualified)
    assert outcome_text(records[0]).count("|") == 2


@pytest.mark.parametrize("mode", ["fool", "order"])
def test_ratings_and_statistics_are_the_same_from_columns_and_from_records(mode: str) -> None:
    records = random_records(400, 2)
    outcomes = outcomes_from_records(records)
    from_records = rate(records, mode)  # type: ignore[arg-type]
    from_columns = rate(outcomes, mode)  # type: ignore[arg-type]
    assert [(b.name, b.elo) for b in from_records.bots] == [(b.name, b.elo) for b in from_columns.bots]
    assert build_rows(records, from_records) == build_rows(outcomes, from_columns)


def test_statistics_count_games_fools_places_and_draws() -> None:
    records = [
        ResultRecord(game="g1", deal="d", variant="podkidnoy", players=["a", "b", "c"], order=[["a"], ["b", "c"]],
                     fools=["b", "c"], end="fool"),
        ResultRecord(game="g2", deal="d", variant="podkidnoy", players=["a", "b"], order=[["a", "b"]], fools=[],
                     end="draw"),
    ]
    stats = game_stats(outcomes_from_records(records))
    assert (stats["a"].games, stats["a"].fools, stats["a"].place_sum, stats["a"].draws) == (2, 0, 2, 1)
    assert (stats["b"].games, stats["b"].fools, stats["b"].place_sum, stats["b"].draws) == (2, 1, 3, 1)
    assert (stats["c"].games, stats["c"].fools, stats["c"].place_sum, stats["c"].draws) == (1, 1, 2, 0)


def test_fools_that_are_not_the_last_place_are_refused() -> None:
    bad = ResultRecord(game="g", deal="d", variant="podkidnoy", players=["a", "b"], order=[["a"], ["b"]],
                       fools=["a"], end="fool")
    with pytest.raises(ValueError, match="not the last place"):
        outcomes_from_records([bad])


def test_the_database_reads_the_outcomes_its_records_give(tmp_path: Path) -> None:
    records = random_records(60, 3)
    with Store(tmp_path / "r.db") as store:
        tournament = store.create_tournament("t", "t.toml", "", "f", 1)
        for i, record in enumerate(records):
            store.save_slot(tournament.id, [StoredGame(f"s{i}", 0, i, 0, record, b"", [])])
        stored = store.outcomes()
    direct = outcomes_from_records(records)
    assert np.array_equal(stored.place, direct.place) and np.array_equal(stored.fool, direct.fool)
    assert stored.bots == direct.bots and stored.clusters == direct.clusters


def test_a_batch_of_slots_is_stored_in_one_transaction_and_a_slot_stored_already_once(tmp_path: Path) -> None:
    records = random_records(6, 3)
    games = [[StoredGame(f"s{i}", 0, i, 0, record, b"", [])] for i, record in enumerate(records)]
    with Store(tmp_path / "r.db") as store:
        tournament = store.create_tournament("t", "t.toml", "", "f", 1)
        assert store.save_slot(tournament.id, games[1])
        assert store.save_slots(tournament.id, games[:4]) == [True, False, True, True]  # s1 was stored already
        assert store.count_games(tournament.id) == 4
        with pytest.raises(StoreError, match="UNIQUE"):  # game 0 of s5 twice: none of the batch is stored
            store.save_slots(tournament.id, [games[4], games[5] * 2])
        assert store.count_games(tournament.id) == 4
        assert store.stored_slots(tournament.id) == {"s0", "s1", "s2", "s3"}
