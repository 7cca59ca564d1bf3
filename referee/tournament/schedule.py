"""The schedule of a tournament: a pure function from the config and the tournament seed to a list of slots.

A *slot* is one series (``series`` games, default one) at fixed seats. Each table (a set of bots) plays
``deals`` deals; each deal is replayed at every rotation of the table's base seat order: ``cyclic`` gives
the k rotations ``B[r:] + B[:r]`` (every bot sits in every seat once), ``all`` gives the k! permutations of
B in lexicographic order. All rotations of a deal replay the same seeded series: game g of a slot deals
from ``derive_seed(deal_seed, "game", g)``.

Seeds (``derive_seed`` is SHA-256 based, documented in :mod:`referee.engine.rng`)::

    deal_seed    = derive_seed(seed, "deal", table_id, deal)    table_id: sorted bot names joined by ","
    base order   = derive_seed(seed, "seats", table_key)        round robin and gauntlet: SeededRng shuffle
    sampled draw = derive_seed(seed, "tables")                  one SeededRng stream for the whole draw

Seeds and keys depend on bot *names* and never on positions in the config, so adding bots or deals (or, for
``sampled``, tables) leaves every existing slot's key and seed unchanged: resume relies on it. A table drawn
again by ``sampled`` gets the id ``table_key#2`` (``#3``...), so its deals differ from the first draw's.

Formats:

* ``round_robin``: every k-subset of the bots (in sorted order of names).
* ``gauntlet``: each challenger with every (k-1)-subset of the non-challengers (the field); challengers do
  not meet each other. Every challenger plays the same number of games. Nothing is capped.
* ``sampled``: ``tables`` tables drawn greedily, one at a time. Members: every bot with fewer tables than
  the k-th least-played bot, then, from the bots at that count, repeatedly the one that has met the
  members chosen so far the fewest times (ties by a seeded random rank; the last pick first avoids
  completing a table already drawn). So tables per bot never differ by more than one, and pairs met stay
  even (20 bots at 6 seats, 200 tables: every bot 60 tables, every pair meets 14-17 times). Seat order: of
  the (k-1)! cyclic orders of the members, the one whose neighbour pairs (i directly before j) have so far
  been most often the other way round, then the one with the least-met neighbours (ties: the first in
  seeded random order). Table t depends only on tables 0..t-1, so raising ``tables`` appends. The draw
  depends on the whole field, so adding a bot changes it (the config's schedule fingerprint covers the bot
  names in this format).

For round robin and gauntlet the base order is a seeded shuffle of the table, so with k >= 3 no bot sits
systematically before another (cyclic rotations keep neighbours; ``all`` covers every order anyway).

The slot list is deal-major (deal 0 of every table, then deal 1, ...) with the rotations of a deal adjacent.
Under ``restart = "never"`` process instance r of every bot plays only rotation r (:func:`instance_for`; an
SPRT's arms have instances of their own), so no process ever meets the same deal twice.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, TypedDict

import msgspec

from referee.engine.rng import SeededRng, derive_seed
from referee.results.deals import rotation_count as rotation_count

#: Bumped whenever the same config would give different slots; part of the schedule fingerprint.
SCHEDULE_VERSION = 1


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class ScheduleConfig(Protocol):
    """What of a tournament config fixes its schedule (:class:`referee.tournament.config.TournamentConfig` has
    it): declared here so that the schedule does not import the config, which imports :data:`SCHEDULE_VERSION`."""

    @property
    def bots(self) -> Sequence[_Named]: ...
    @property
    def players(self) -> int: ...
    @property
    def format(self) -> str: ...
    @property
    def deals(self) -> int: ...
    @property
    def rotations(self) -> str: ...
    @property
    def series(self) -> int: ...
    @property
    def tables(self) -> int | None: ...
    @property
    def challengers(self) -> Sequence[str]: ...


class Slot(msgspec.Struct, frozen=True, kw_only=True):
    """One series at fixed seats: the unit the runner plays, stores and resumes by ``key``."""

    key: str  # "t:alice,bob|d3|r1": unique in a schedule and stable when the schedule is extended
    table: tuple[str, ...]  # bot names by seat, for this rotation
    table_key: str  # the table's bots, sorted, joined by ","
    deal: int  # deal index within the table
    deal_key: str  # "alice,bob|d3": shared by all rotations of one deal of one table (the rating cluster)
    deal_seed: int
    rotation: int  # 0..R-1
    games: int  # series length
    arm: int = 0  # 0 in a tournament; an SPRT against a field: 0 NEW's arm, 1 BASE's (:mod:`.sprt_schedule`)


class Table(NamedTuple):
    id: str  # table_key, or table_key#n for the n-th draw of the same bots (sampled only)
    key: str  # sorted names joined by ","
    base: tuple[str, ...]  # the seat order of rotation 0


class ScheduleSummary(TypedDict):
    slots: int
    games: int
    tables: int
    deals: int  # distinct deal keys
    games_per_bot: dict[str, int]
    seats_per_bot: dict[str, list[int]]  # games in seat 0..k-1


def seat_order(base: Sequence[str], rotation: int, rotations: str) -> tuple[str, ...]:
    """Rotation r of base order B: ``B[r:] + B[:r]`` (cyclic) or the r-th permutation of B in lexicographic order
    of B's positions (all)."""
    if rotations != "all":
        return (*base[rotation:], *base[:rotation])
    items, order, rest = list(base), [], rotation
    for size in range(len(items), 0, -1):
        index, rest = divmod(rest, math.factorial(size - 1))
        order.append(items.pop(index))
    return tuple(order)


def table_key(names: Iterable[str]) -> str:
    return ",".join(sorted(names))


def tables(config: ScheduleConfig, seed: int) -> list[Table]:
    """The tables of the schedule with their base seat orders, in schedule order."""
    names = sorted(bot.name for bot in config.bots)
    k = config.players
    if not 2 <= k <= len(names):
        raise ValueError(f"tables of {k} players need 2-{len(names)} players")
    if config.format == "sampled":
        if config.tables is None:
            raise ValueError('format "sampled" needs the number of tables')
        drawn = _sampled(names, k, config.tables, seed)
        seen: dict[str, int] = {}
        result = []
        for base in drawn:
            key = table_key(base)
            seen[key] = seen.get(key, 0) + 1
            result.append(Table(key if seen[key] == 1 else f"{key}#{seen[key]}", key, base))
        return result
    if config.format == "gauntlet":
        challengers = sorted(set(config.challengers))
        field = [name for name in names if name not in challengers]
        members = [(challenger, *others) for challenger in challengers
                   for others in itertools.combinations(field, k - 1)]
    else:
        members = list(itertools.combinations(names, k))
    return [_shuffled_table(table, seed) for table in members]


def schedule(config: ScheduleConfig, seed: int) -> list[Slot]:
    """Every slot of the tournament: a pure function of the config and the tournament seed."""
    drawn = tables(config, seed)
    count = rotation_count(config.players, config.rotations)
    slots = []
    for deal in range(config.deals):
        for table in drawn:
            deal_key = f"{table.id}|d{deal}"
            deal_seed = derive_seed(seed, "deal", table.id, deal)
            for rotation in range(count):
                slots.append(Slot(key=f"t:{deal_key}|r{rotation}", table=seat_order(table.base, rotation,
                                  config.rotations), table_key=table.key, deal=deal, deal_key=deal_key,
                                  deal_seed=deal_seed, rotation=rotation, games=config.series))
    return slots


def instance_for(slot: Slot) -> tuple[int, int]:
    """The process instance of every bot at this slot under ``restart = "never"``: its arm and rotation.

    Duplicate-safe: the rotations of a deal are distinct slots, so instance r meets each deal at most once;
    an SPRT's two arms replay a deal with the same field, so each arm has processes of its own.
    """
    return slot.arm, slot.rotation


def schedule_summary(slots: Iterable[Slot]) -> ScheduleSummary:
    """Totals for a schedule (or part of one): games, games per bot and games per bot and seat."""
    count = games = 0
    table_ids: set[str] = set()
    deal_keys: set[str] = set()
    per_bot: dict[str, int] = {}
    seats: dict[str, list[int]] = {}
    for slot in slots:
        count += 1
        games += slot.games
        table_ids.add(slot.deal_key.rpartition("|")[0])
        deal_keys.add(slot.deal_key)
        for seat, name in enumerate(slot.table):
            per_bot[name] = per_bot.get(name, 0) + slot.games
            row = seats.setdefault(name, [0] * len(slot.table))
            row[seat] += slot.games
    return ScheduleSummary(slots=count, games=games, tables=len(table_ids), deals=len(deal_keys),
                           games_per_bot=dict(sorted(per_bot.items())), seats_per_bot=dict(sorted(seats.items())))


def _shuffled_table(members: Iterable[str], seed: int) -> Table:
    key = table_key(members)
    base = sorted(members)
    SeededRng(derive_seed(seed, "seats", key)).shuffle(base)
    return Table(key, key, tuple(base))


def _sampled(names: list[str], k: int, count: int, seed: int) -> list[tuple[str, ...]]:
    """The greedy balanced draw of the module docstring: ``count`` base seat orders of k names."""
    n = len(names)
    rng = SeededRng(derive_seed(seed, "tables"))
    played = [0] * n
    met = [[0] * n for _ in range(n)]  # met[i][j]: tables where i and j sat together
    before = [[0] * n for _ in range(n)]  # before[i][j]: tables where j sat directly after i
    used: set[frozenset[int]] = set()
    drawn = []
    for _ in range(count):
        rank = list(range(n))
        rng.shuffle(rank)  # rank[i]: bot i's random tie-break for this table
        threshold = sorted(played)[k - 1]
        chosen = [i for i in range(n) if played[i] < threshold]
        pool = [i for i in range(n) if played[i] == threshold]
        while len(chosen) < k:
            last = len(chosen) == k - 1  # then avoid completing a table already drawn, if possible
            best = min(pool, key=lambda i: (last and frozenset((*chosen, i)) in used,
                                            sum(met[i][j] for j in chosen), rank[i]))
            pool.remove(best)
            chosen.append(best)
        chosen.sort(key=lambda i: rank[i])
        first, rest = chosen[0], chosen[1:]
        best_order: tuple[int, ...] = ()
        best_score = (math.inf, math.inf)
        for tail in itertools.permutations(rest):
            order = (first, *tail)
            pairs = list(zip(order, (*order[1:], first), strict=True))
            score = (sum(before[i][j] - before[j][i] for i, j in pairs),
                     sum(before[i][j] + before[j][i] for i, j in pairs))
            if score < best_score:
                best_order, best_score = order, score
        used.add(frozenset(chosen))
        for i in chosen:
            played[i] += 1
            for j in chosen:
                if i != j:
                    met[i][j] += 1
        for i, j in zip(best_order, (*best_order[1:], best_order[0]), strict=True):
            before[i][j] += 1
        drawn.append(tuple(names[i] for i in best_order))
    return drawn
