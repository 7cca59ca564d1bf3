"""The tournament schedule: determinism, balance per format, extension, rotations and duplicate-safe reuse."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from typing import Any

import msgspec
import pytest

from referee.engine.rng import derive_seed
from referee.tournament.config import BotConfig, TournamentConfig
from referee.tournament.schedule import (
    Slot,
    instance_for,
    rotation_count,
    schedule,
    schedule_summary,
    seat_order,
    tables,
)

SEED = 20261129


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def config(bots: int | list[str], **options: Any) -> TournamentConfig:
    field = names(bots) if isinstance(bots, int) else bots
    return TournamentConfig(name="t", bots=[BotConfig(name=name, command="prog") for name in field], **options)


def by_key(slots: list[Slot]) -> dict[str, Slot]:
    return {slot.key: slot for slot in slots}


def assert_well_formed(slots: list[Slot], players: int, rotations: int) -> None:
    """Unique keys; the rotations of a deal adjacent, sharing table, seed and deal key; the seats a rotation."""
    assert len(by_key(slots)) == len(slots)
    assert len(slots) % rotations == 0
    for start in range(0, len(slots), rotations):
        group = slots[start:start + rotations]
        assert [slot.rotation for slot in group] == list(range(rotations))
        assert len({(slot.deal_key, slot.deal_seed, slot.table_key, slot.deal) for slot in group}) == 1
        assert len({slot.table for slot in group}) == rotations  # every rotation a different seating
        for slot in group:
            assert len(slot.table) == players
            assert ",".join(sorted(slot.table)) == slot.table_key
            assert slot.key == f"t:{slot.deal_key}|r{slot.rotation}"
            assert slot.deal_key.startswith(slot.table_key) and slot.deal_key.endswith(f"|d{slot.deal}")
    assert len({slot.deal_seed for slot in slots}) == len(slots) // rotations  # a fresh deck per deal


def assert_seats_balanced(slots: list[Slot]) -> None:
    """Every bot sits in every seat equally often."""
    for name, seats in schedule_summary(slots)["seats_per_bot"].items():
        assert len(set(seats)) == 1, (name, seats)


# --- determinism --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("options", [
    {"players": 3},
    {"players": 3, "format": "sampled", "tables": 12},
    {"players": 3, "format": "gauntlet", "challengers": ["bot01"]},
])
def test_same_config_same_slots(options: dict[str, Any]) -> None:
    first = schedule(config(6, **options), SEED)
    assert schedule(config(6, **options), SEED) == first
    assert schedule(config(list(reversed(names(6))), **options), SEED) == first  # config order is irrelevant
    other = schedule(config(6, **options), SEED + 1)
    assert {slot.deal_seed for slot in other}.isdisjoint({slot.deal_seed for slot in first})


def test_deal_seeds_follow_the_documented_derivation() -> None:
    for slot in schedule(config(4, players=3, deals=3), SEED):
        assert slot.deal_seed == derive_seed(SEED, "deal", slot.table_key, slot.deal)


def test_slots_round_trip_through_json() -> None:
    """The runner sends slots to its workers as JSON."""
    slots = schedule(config(3), SEED)
    assert msgspec.json.decode(msgspec.json.encode(slots), type=list[Slot]) == slots


def test_slot_list_is_deal_major() -> None:
    slots = schedule(config(4, players=2, deals=3), SEED)
    deals = [slot.deal for slot in slots]
    assert deals == sorted(deals)
    assert slots[0].key.startswith("t:") and slots[0].key.endswith("|d0|r0")


# --- round robin --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "rotations"), [
    (2, 2, "cyclic"), (3, 2, "cyclic"), (5, 2, "all"), (5, 3, "cyclic"), (5, 3, "all"), (6, 4, "cyclic"),
    (6, 4, "all"), (7, 5, "cyclic"), (7, 6, "cyclic"),
])
def test_round_robin_is_exactly_balanced(n: int, k: int, rotations: str) -> None:
    deals, series = 2, 3
    slots = schedule(config(n, players=k, deals=deals, series=series, rotations=rotations), SEED)
    count = rotation_count(k, rotations)
    assert_well_formed(slots, k, count)
    assert {slot.table_key for slot in slots} == {",".join(c) for c in itertools.combinations(names(n), k)}
    summary = schedule_summary(slots)
    assert summary["tables"] == math.comb(n, k)
    assert summary["games"] == math.comb(n, k) * deals * count * series
    assert set(summary["games_per_bot"].values()) == {math.comb(n - 1, k - 1) * deals * count * series}
    assert_seats_balanced(slots)


def test_round_robin_base_order_is_shuffled_not_alphabetical() -> None:
    """With k >= 3 cyclic rotations keep neighbours: a seeded base order avoids "a always before b"."""
    bases = [table.base for table in tables(config(8, players=3), SEED)]
    assert any(list(base) != sorted(base) for base in bases)
    assert any(list(base) == sorted(base) for base in bases)
    before = Counter((base[i], base[(i + 1) % 3]) for base in bases for i in range(3))
    imbalance = [abs(before[a, b] - before[b, a]) for a, b in itertools.combinations(names(8), 2)]
    assert max(imbalance) <= 4


# --- gauntlet -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "challengers"), [(4, 2, 1), (6, 3, 2), (7, 4, 3), (8, 6, 2)])
def test_gauntlet_is_balanced_per_challenger(n: int, k: int, challengers: int) -> None:
    field = names(n)
    chosen = field[1:1 + challengers]
    slots = schedule(config(n, players=k, deals=2, format="gauntlet", challengers=chosen), SEED)
    assert_well_formed(slots, k, k)
    others = [name for name in field if name not in chosen]
    for slot in slots:
        assert len(set(slot.table) & set(chosen)) == 1  # one challenger per table, against the field
    summary = schedule_summary(slots)
    assert summary["tables"] == challengers * math.comb(n - challengers, k - 1)
    assert {summary["games_per_bot"][name] for name in chosen} == {math.comb(len(others), k - 1) * 2 * k}
    assert_seats_balanced(slots)


# --- sampled ------------------------------------------------------------------------------------------------


def test_sampled_big_field_is_balanced() -> None:
    """20 bots at 6 seats (C(20, 6) = 38,760 tables): 200 tables drawn without listing them all. How fast is
    not asserted here: timed unit tests fail on a loaded machine."""
    slots = schedule(config(20, players=6, format="sampled", tables=200, deals=5), SEED)
    assert_well_formed(slots, 6, 6)
    summary = schedule_summary(slots)
    assert summary["tables"] == 200 and summary["games"] == 200 * 5 * 6
    games = summary["games_per_bot"].values()
    assert len(games) == 20 and max(games) - min(games) <= 5 * 6  # at most one table's worth
    assert_seats_balanced(slots)
    drawn = tables(config(20, players=6, format="sampled", tables=200), SEED)
    played = Counter(name for table in drawn for name in table.base)
    assert max(played.values()) - min(played.values()) <= 1
    met = Counter(pair for table in drawn for pair in itertools.combinations(sorted(table.base), 2))
    pairs = [met[pair] for pair in itertools.combinations(names(20), 2)]
    assert max(pairs) - min(pairs) <= 4  # 3,000 pairings over 190 pairs: 15.8 each on average
    before = Counter((table.base[i], table.base[(i + 1) % 6]) for table in drawn for i in range(6))
    assert max(abs(before[a, b] - before[b, a]) for a, b in itertools.combinations(names(20), 2)) <= 2
    assert len({table.key for table in drawn}) == 200  # no table drawn twice


@pytest.mark.parametrize(("n", "k", "count"), [(5, 2, 7), (7, 3, 30), (9, 4, 25), (12, 5, 40), (8, 6, 17)])
def test_sampled_tables_per_bot_differ_by_at_most_one(n: int, k: int, count: int) -> None:
    drawn = tables(config(n, players=k, format="sampled", tables=count), SEED)
    played = Counter(name for table in drawn for name in table.base)
    assert len(played) == n and max(played.values()) - min(played.values()) <= 1


def test_sampled_repeated_tables_get_fresh_deals() -> None:
    """3 bots, 2 seats, 10 tables: only 3 distinct tables, so draws repeat under the ids ``key#2``..."""
    slots = schedule(config(3, format="sampled", tables=10, deals=2), SEED)
    assert_well_formed(slots, 2, 2)
    ids = {slot.deal_key.rpartition("|")[0] for slot in slots}
    assert len(ids) == 10 and any("#" in table_id for table_id in ids)
    for slot in slots:
        table_id = slot.deal_key.rpartition("|")[0]
        assert slot.deal_seed == derive_seed(SEED, "deal", table_id, slot.deal)


# --- extension (resume relies on it) ------------------------------------------------------------------------


@pytest.mark.parametrize(("before", "after"), [
    (config(4, players=3), config(5, players=3)),  # a new bot
    (config(4, players=3, deals=3), config(4, players=3, deals=7)),  # more deals
    (config(4, players=2, deals=3), config(6, players=2, deals=5)),  # both
    (config(12, players=4, format="sampled", tables=10), config(12, players=4, format="sampled", tables=25)),
    (config(6, players=3, format="sampled", tables=10, deals=2),
     config(6, players=3, format="sampled", tables=10, deals=4)),
    (config(5, players=3, format="gauntlet", challengers=["bot00"]),
     config(7, players=3, format="gauntlet", challengers=["bot00"])),  # a bigger field
    (config(["zoe", "adam", "mia"]), config(["zoe", "adam", "bob", "mia"])),  # a new bot in the middle
])
def test_extension_keeps_every_old_slot(before: TournamentConfig, after: TournamentConfig) -> None:
    old, new = schedule(before, SEED), schedule(after, SEED)
    assert len(new) > len(old)
    new_by_key = by_key(new)
    for slot in old:
        assert new_by_key[slot.key] == slot  # same key, seats, seed, rotation and series


# --- rotations ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_cyclic_rotations(k: int) -> None:
    assert rotation_count(k, "cyclic") == k
    base = tuple("abcdef"[:k])
    orders = [seat_order(base, r, "cyclic") for r in range(k)]
    assert orders[0] == base and orders[1] == (*base[1:], base[0])
    for seat in range(k):  # each name once in every seat
        assert sorted(order[seat] for order in orders) == list(base)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_all_rotations_are_every_permutation_in_lexicographic_order(k: int) -> None:
    assert rotation_count(k, "all") == math.factorial(k)
    base = ("d", "a", "c", "b")[:k]
    orders = [seat_order(base, r, "all") for r in range(math.factorial(k))]
    assert orders == list(itertools.permutations(base))


def test_rotation_counts_in_a_schedule() -> None:
    cyclic = schedule(config(4, players=4, deals=1), SEED)
    everything = schedule(config(4, players=4, deals=1, rotations="all"), SEED)
    assert len(cyclic) == 4 and len(everything) == 24
    assert {slot.table for slot in cyclic} <= {slot.table for slot in everything}
    assert len({slot.table for slot in everything}) == 24


# --- process reuse ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", [
    config(5, players=3, deals=4),
    config(4, players=3, deals=2, rotations="all"),
    config(12, players=5, format="sampled", tables=30, deals=3),
    config(3, format="sampled", tables=9, deals=2),
    config(6, players=3, format="gauntlet", challengers=["bot02", "bot04"], deals=3),
])
def test_no_process_meets_a_deal_twice(cfg: TournamentConfig) -> None:
    """restart = "never": for every (bot, instance), the deals it plays are all different."""
    met: dict[tuple[str, tuple[int, int]], list[str]] = defaultdict(list)
    slots = schedule(cfg, SEED)
    for slot in slots:
        assert instance_for(slot) == (0, slot.rotation)
        for name in slot.table:
            met[name, instance_for(slot)].append(slot.deal_key)
    for deal_keys in met.values():
        assert len(deal_keys) == len(set(deal_keys))
    instances = {rotation for _, (_, rotation) in met}
    assert instances == set(range(rotation_count(cfg.players, cfg.rotations)))
    deal_seeds: dict[tuple[str, tuple[int, int]], list[int]] = defaultdict(list)  # and so no deck twice either
    for slot in slots:
        for name in slot.table:
            deal_seeds[name, instance_for(slot)].append(slot.deal_seed)
    assert all(len(seeds) == len(set(seeds)) for seeds in deal_seeds.values())


def test_summary() -> None:
    slots = schedule(config(3, deals=2, series=3), SEED)
    summary = schedule_summary(slots)
    assert summary == {
        "slots": 12, "games": 36, "tables": 3, "deals": 6,
        "games_per_bot": {"bot00": 24, "bot01": 24, "bot02": 24},
        "seats_per_bot": {"bot00": [12, 12], "bot01": [12, 12], "bot02": [12, 12]},
    }
    assert schedule_summary([])["games"] == 0


def test_bad_input_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="players"):
        schedule(config(2, players=3), SEED)
    with pytest.raises(ValueError, match="sampled"):
        schedule(config(4, format="sampled"), SEED)
