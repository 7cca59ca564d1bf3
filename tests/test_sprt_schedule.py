"""The SPRT's duplicate-deal schedule: the exact slots of small cases, pairing, seeds and process reuse."""

from __future__ import annotations

from collections import defaultdict

import pytest

from referee.engine.rng import SeededRng, derive_seed
from referee.results.deals import games_of_deal
from referee.tournament.config import BotConfig, TournamentConfig
from referee.tournament.schedule import instance_for, schedule, seat_order
from referee.tournament.sprt_schedule import SprtPlan

SEED = 7


def test_head_to_head_group_is_the_round_robins_deal() -> None:
    """2 players: a group is the deal in both seatings, with the seed and seats a round robin of the two gives."""
    plan = SprtPlan("new", "base")
    slots = plan.groups(SEED, 0, 2)
    assert [(s.key, s.table, s.arm, s.rotation) for s in slots] == [
        ("s:base,new|d0|r0", ("new", "base"), 0, 0),
        ("s:base,new|d0|r1", ("base", "new"), 0, 1),
        ("s:base,new|d1|r0", ("new", "base"), 0, 0),
        ("s:base,new|d1|r1", ("base", "new"), 0, 1),
    ]
    assert [s.deal_seed for s in slots] == [derive_seed(SEED, "deal", "base,new", d) for d in (0, 0, 1, 1)]
    tournament = TournamentConfig(name="t", deals=2, bots=[BotConfig(name=n, command="p") for n in ("new", "base")])
    expected = schedule(tournament, SEED)
    assert [(s.table, s.deal_seed, s.deal_key, s.rotation) for s in slots] == \
        [(s.table, s.deal_seed, s.deal_key, s.rotation) for s in expected]
    assert plan.games_per_group == 2 and plan.players == 2


def test_field_group_exact_slots() -> None:
    """Against a field: arm 0 seats NEW, arm 1 BASE in the same seat of the same rotations; one deal seed."""
    plan = SprtPlan("new", "base", ("f1", "f2"))
    slots = plan.group(SEED, 0)
    seats = list(range(3))
    SeededRng(derive_seed(SEED, "seats", "base,f1,f2,new")).shuffle(seats)
    assert seats == [2, 0, 1]  # so the arm's seat (index 0) is seat 1 of rotation 0
    assert [(s.key, s.table, s.table_key, s.arm, s.rotation) for s in slots] == [
        ("s:base,f1,f2,new|d0|a0|r0", ("f2", "new", "f1"), "f1,f2,new", 0, 0),
        ("s:base,f1,f2,new|d0|a0|r1", ("new", "f1", "f2"), "f1,f2,new", 0, 1),
        ("s:base,f1,f2,new|d0|a0|r2", ("f1", "f2", "new"), "f1,f2,new", 0, 2),
        ("s:base,f1,f2,new|d0|a1|r0", ("f2", "base", "f1"), "base,f1,f2", 1, 0),
        ("s:base,f1,f2,new|d0|a1|r1", ("base", "f1", "f2"), "base,f1,f2", 1, 1),
        ("s:base,f1,f2,new|d0|a1|r2", ("f1", "f2", "base"), "base,f1,f2", 1, 2),
    ]
    assert {s.deal_seed for s in slots} == {derive_seed(SEED, "deal", "base,f1,f2,new", 0)}
    assert {s.deal_key for s in slots} == {"base,f1,f2,new|d0"}
    assert plan.games_per_group == 6 and plan.players == 3


@pytest.mark.parametrize("plan", [
    SprtPlan("new", "base", ("f1", "f2", "f3")),
    SprtPlan("new", "base", ("f1", "f2"), rotations="all", series=2),
    SprtPlan("new", "base", rotations="all"),
])
def test_arms_are_duplicates_and_no_process_meets_a_deal_twice(plan: SprtPlan) -> None:
    slots = plan.groups(SEED, 0, 5)
    assert len({s.key for s in slots}) == len(slots)
    assert sum(s.games for s in slots) == 5 * plan.games_per_group
    by_group: dict[str, list[int]] = defaultdict(list)
    for slot in slots:
        by_group[slot.deal_key].append(slot.deal_seed)
    assert len(by_group) == 5 and all(len(set(seeds)) == 1 for seeds in by_group.values())
    assert len({seeds[0] for seeds in by_group.values()}) == 5
    if plan.field:  # BASE's slot is NEW's with BASE in NEW's seat
        for group in range(5):
            slots_of = plan.group(SEED, group)
            for a, b in zip([s for s in slots_of if s.arm == 0], [s for s in slots_of if s.arm], strict=True):
                assert a.rotation == b.rotation and a.games == b.games
                assert tuple("base" if name == "new" else name for name in a.table) == b.table
    met: dict[tuple[str, tuple[int, int]], list[str]] = defaultdict(list)
    for slot in slots:
        for name in slot.table:
            met[name, instance_for(slot)].append(slot.deal_key)
    assert all(len(keys) == len(set(keys)) for keys in met.values())


def test_every_arm_sits_in_every_seat() -> None:
    plan = SprtPlan("new", "base", ("f1", "f2", "f3"))
    for arm, bot in enumerate(("new", "base")):
        seats = sorted(s.table.index(bot) for s in plan.group(SEED, 3) if s.arm == arm)
        assert seats == [0, 1, 2, 3]
    assert plan.group(SEED, 3)[0].table == seat_order(plan.base_order(SEED), 0, "cyclic")


def test_groups_depend_on_their_number_only() -> None:
    plan = SprtPlan("new", "base", ("f1",))
    assert plan.groups(SEED, 0, 4)[-len(plan.group(SEED, 3)):] == plan.group(SEED, 3) == plan.groups(SEED, 3, 4)
    assert plan.group(SEED + 1, 3) != plan.group(SEED, 3)


def test_bots_must_differ() -> None:
    with pytest.raises(ValueError, match="different bots"):
        SprtPlan("new", "base", ("f1", "new"))
    with pytest.raises(ValueError, match="different bots"):
        SprtPlan("a", "a")


@pytest.mark.parametrize("plan", [SprtPlan("new", "base"), SprtPlan("new", "base", ("f1", "f2"), series=2),
                                  SprtPlan("new", "base", ("f1",), rotations="all")])
def test_a_deal_is_known_complete_from_any_of_its_games(plan: SprtPlan) -> None:
    """The report shows a deal's games once all are stored: any game's key tells how many that is."""
    slots = plan.group(SEED, 2)
    for slot in slots:
        for game in range(slot.games):
            key = f"{slot.key}|g{game + 1}"  # as the worker's play_series names a slot's games
            assert games_of_deal(key, len(slot.table), plan.rotations, plan.series) == plan.games_per_group
    tournament = schedule(TournamentConfig(name="t", players=3, series=2, bots=[BotConfig(name=n, command="p")
                                                                                   for n in ("a", "b", "c")]), SEED)
    assert {games_of_deal(f"{s.key}|g1", 3, "cyclic", 2) for s in tournament} == {6}
