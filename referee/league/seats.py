"""How the seats around an anchor are chosen (:mod:`referee.league.matchmaker` picks the anchor and the size): the
versions within its rating window, widened until the table can be filled, and of the window's cheapest, lowest
standing, the set that met least at the table's size, then at every size. Pure, like the matchmaker."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.engine.rng import SeededRng

if TYPE_CHECKING:
    from referee.league.matchmaker import MatchSettings, VersionState

Pair = tuple[str, str]  # two version ids, the smaller first (:func:`pair`)


def pair(a: str, b: str) -> Pair:
    """The key of ``a`` and ``b`` in :attr:`LeagueState.meetings`, the same either way round."""
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True)
class Seating:
    """What choosing the seats around one anchor at a table of k reads: the meetings, each candidate's standing
    and its cost (games past the lead, whether a group at size k puts it a group over its share)."""

    anchor: VersionState
    k: int
    meetings: Mapping[Pair, int]
    at_k: Mapping[Pair, int]  # meetings at tables of size k
    standings: Mapping[str, int]
    cost: Mapping[str, tuple[int, int]]


def largest_table(versions: Sequence[VersionState]) -> int:
    """The most of ``versions`` that can share a table: no two of one bot or one author. That is a maximum
    matching of bots to authors (Kuhn's augmenting paths); with one author per bot, the number of authors."""
    authors_of: dict[str, set[str]] = {}
    for v in versions:
        authors_of.setdefault(v.bot, set()).add(v.author)
    holder: dict[str, str] = {}  # author -> the bot matched to it

    def augment(bot: str, seen: set[str]) -> bool:
        for author in authors_of[bot]:
            if author not in seen:
                seen.add(author)
                if author not in holder or augment(holder[author], seen):
                    holder[author] = bot
                    return True
        return False

    return sum(augment(bot, set()) for bot in authors_of)


def rating_window(anchor: VersionState, others: Sequence[VersionState], k: int,
            settings: MatchSettings) -> list[VersionState]:
    """The others within the anchor's rating window, widened by whole steps until k-1 of them can sit together.
    ``others`` can fill the table (the caller checked), so the widening ends."""
    sigmas = settings.window_sigmas * anchor.error if settings.window_sigmas else 0.0
    base = max(settings.window_min, sigmas)
    if math.isinf(base):
        return list(others)
    distance = [abs(v.rating - anchor.rating) for v in others]
    order = sorted(range(len(others)), key=distance.__getitem__)
    reach = base
    for end in range(k - 1, len(order) + 1):
        far = distance[order[end - 1]]
        if end < len(order) and distance[order[end]] == far:
            continue  # take every candidate at one distance together
        if largest_table([others[i] for i in order[:end]]) >= k - 1:
            reach = base if far <= base else base + math.ceil((far - base) / settings.widen_step) * settings.widen_step
            break
    return [v for v, d in zip(others, distance, strict=True) if d <= reach]


def _idle_ranks(versions: Sequence[VersionState]) -> list[int]:
    """Each version's idle rank: how many of ``versions`` are idle longer (sat down earlier)."""
    times = sorted(v.last_seated for v in versions)
    return [bisect.bisect_left(times, v.last_seated) for v in versions]


def pool_of(seating: Seating, window: Sequence[VersionState], max_pool: int) -> list[VersionState]:
    """The window's ``max_pool`` cheapest (:func:`_best_set`'s cost: ahead of the lead, over their share of
    size k), lowest standing (ties: those that met the anchor least, then idle longest), more until they can
    fill the table. Gating by standing keeps games even where a window holds many never-met (new) versions."""
    if len(window) <= max_pool:
        return list(window)
    idle = _idle_ranks(window)
    anchor, k, meetings = seating.anchor, seating.k, seating.meetings
    order = sorted(range(len(window)), key=lambda i: (seating.cost[window[i].id], seating.standings[window[i].id],
                                                      meetings.get(pair(anchor.id, window[i].id), 0), idle[i]))
    ranked = [window[i] for i in order]
    size = max(max_pool, k - 1)
    while largest_table(ranked[:size]) < k - 1:
        size += 1
    return ranked[:size]


def best_set(seating: Seating, pool: Sequence[VersionState], rng: SeededRng) -> tuple[VersionState, ...]:
    """The (k-1)-set of ``pool`` with no shared bot or author that minimises (games ahead of the lead, versions
    over their share of size k, meetings over every pair at the table with the anchor, sum of standings, sum of
    idle ranks); ties by the seeded draw."""
    anchor, k, meetings, at_k = seating.anchor, seating.k, seating.meetings, seating.at_k
    met = [[(at_k.get(pair(a.id, b.id), 0), meetings.get(pair(a.id, b.id), 0)) for b in pool] for a in pool]
    with_anchor = [(at_k.get(pair(anchor.id, v.id), 0), meetings.get(pair(anchor.id, v.id), 0)) for v in pool]
    stand = [seating.standings[v.id] for v in pool]
    idle = _idle_ranks(pool)
    ahead = [seating.cost[v.id][0] for v in pool]
    over = [seating.cost[v.id][1] for v in pool]
    best: tuple[int, ...] | None = None
    tied: list[tuple[int, ...]] = []
    for combo in itertools.combinations(range(len(pool)), k - 1):
        if len({pool[i].bot for i in combo}) < k - 1 or len({pool[i].author for i in combo}) < k - 1:
            continue
        pairs = [with_anchor[i] for i in combo] + [met[i][j] for i, j in itertools.combinations(combo, 2)]
        score = (sum(ahead[i] for i in combo), sum(over[i] for i in combo), sum(p[0] for p in pairs),
                 sum(p[1] for p in pairs), sum(stand[i] for i in combo), sum(idle[i] for i in combo))
        if best is None or score < best:
            best, tied = score, [combo]
        elif score == best:
            tied.append(combo)
    chosen = tied[rng.randbelow(len(tied))] if len(tied) > 1 else tied[0]
    return tuple(pool[i] for i in chosen)
