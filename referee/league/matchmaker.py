"""The league's matchmaker: the next deal group as a pure function of the league's state and settings.

A *deal group* is one deal played at every cyclic rotation of one table: k games for k seats, every version in
every seat once, so the luck of the cards cancels. :func:`next_group` forms one from a :class:`LeagueState`:

1. *Eligible*: active versions in fewer than ``max_in_flight`` groups in flight (default 1, so a version plays
   one group at a time and a newcomer does not pile up groups before its first games are rated).
2. *Anchor*: while any eligible version has fewer than ``min_games`` rated games (30), the one with the fewest
   (ties: idle longest); otherwise the one idle longest (``last_seated``: when its latest group was issued;
   never is idle longest). Remaining ties go to the seeded draw.
   An anchor with whom no size can be filled gives way to the next in that order.
3. *Size*: k is drawn uniformly from ``sizes`` (repeat a size to weight it) among the sizes that can be filled
   around the anchor: k-1 eligible others, no two versions of one bot nor two bots of one author at the table
   (versions that know each other by name could collude).
4. *Window*: the others whose rating lies within ``max(window_min, window_sigmas * error)`` Elo of the anchor's
   (100 Elo, 2.0; ``error`` is the anchor's standard error, infinite before it is rated, so a newcomer's
   window holds everyone), widened by ``widen_step`` (50) Elo at a time until a table of k can be filled.
5. *Seats*: the window's ``max_pool`` (8) longest idle candidates (ties: those that met the anchor least; more
   if they cannot fill the table) are searched exhaustively: of their fillable (k-1)-sets, the one with the
   fewest meetings summed over every pair at the table (one meeting per group, counted when the group is
   issued), then the longest idle (the lowest sum of idle ranks), then a seeded draw. At most C(8, 4) = 70
   sets of up to 15 pairs; with the sort and one bot-author matching per widening step a call costs
   O(n log n) plus O(n) per step for n versions (bench/bench_matchmaker.py, 20-200 versions: 0.24 ms CPU on
   average). Cut by meetings instead, a league growing to 200 versions overplays its newest versions, which
   have met the fewest: games over the last 1,000 of 10,000 groups 0.30-6.55 x the mean, against 0.67-2.36
   (the rest is sparse rating regions, where each anchoring seats the same few neighbours).
6. *Seeds*: the group's ``number`` counts every group issued; its deal seed is
   ``derive_seed(seed, "league", "deal", number)`` (SHA-256, :mod:`referee.engine.rng`) and every draw above,
   and the seat order of rotation 0 (a shuffle), comes from ``derive_seed(seed, "league", "draw", number)``.
   A state gives the same group on every machine; the number only grows and :func:`issue` refuses a stale
   group, so no deal seed is issued twice and the k rotations of a deal are always issued, and in flight,
   together.

Ratings are on one scale: each version's rating and error come from one board (all sizes fitted together, or
the main size's). Boards per size are the leaderboard's business; the matchmaker only needs who is near whom,
and ``min_games`` counts a version's rated games of every size. :func:`issue`, :func:`finish`, :func:`rerate`
and :func:`with_versions` are the one way the simulation and the daemon change the state.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from protocol.rules import MAX_PLAYERS, MIN_PLAYERS
from referee.engine.rng import SeededRng, derive_seed

Pair = tuple[str, str]  # two version ids, the smaller first (:func:`pair`)
NEVER = -math.inf  # ``last_seated`` of a version never seated: idle longer than any other


def pair(a: str, b: str) -> Pair:
    """The key of ``a`` and ``b`` in :attr:`LeagueState.meetings`, the same either way round."""
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True)
class VersionState:
    """One version of one bot as the matchmaker sees it."""

    id: str  # unique in the league, e.g. "alice/shark@3"
    bot: str  # the bot it is a version of: no two versions of one bot share a table
    author: str  # no two bots of one author share a table
    rating: float = 1500.0  # Elo on the league's board
    error: float = math.inf  # the rating's standard error in Elo (the board's sd); infinite while unrated
    games: int = 0  # rated games, of every table size
    last_seated: float = NEVER  # when its latest group was issued: a time or a sequence number, never falling
    active: bool = True  # retired versions keep their record but are never seated


@dataclass(frozen=True)
class MatchSettings:
    """How groups are formed (module docstring)."""

    sizes: tuple[int, ...] = (2, 3, 4, 5, 6)  # table sizes to draw from; a repeated size is drawn more often
    min_games: int = 30  # rated games a version plays as the anchor's first claim
    window_min: float = 100.0  # Elo: the narrowest window around the anchor's rating
    window_sigmas: float = 2.0  # the window is at least this many of the anchor's standard errors
    widen_step: float = 50.0  # Elo added to the window until it can fill the table
    max_in_flight: int = 1  # groups in flight a version may sit in at once
    max_pool: int = 8  # the window's longest idle candidates searched for the seats

    def __post_init__(self) -> None:
        if not self.sizes or not all(MIN_PLAYERS <= k <= MAX_PLAYERS for k in self.sizes):
            raise ValueError(f"table sizes must be {MIN_PLAYERS}-{MAX_PLAYERS}, not {self.sizes}")
        if self.min_games < 0 or self.window_min < 0 or self.window_sigmas < 0 or self.widen_step <= 0:
            raise ValueError("min_games, window_min and window_sigmas must be >= 0 and widen_step > 0")
        if self.max_in_flight < 1 or self.max_pool < 1:
            raise ValueError("max_in_flight and max_pool must be >= 1")


@dataclass(frozen=True)
class Group:
    """One deal at every cyclic rotation of one table: what the league plays, issued whole."""

    number: int  # the league's groups issued before this one
    table: tuple[str, ...]  # version ids in seat order for rotation 0
    deal_seed: int
    anchor: str  # the version the table was formed around (logs say why a table was drawn)

    @property
    def size(self) -> int:
        return len(self.table)

    def seats(self, rotation: int) -> tuple[str, ...]:
        """Seat order of rotation r, ``table[r:] + table[:r]``: over the k rotations each version sits once in
        each seat."""
        return (*self.table[rotation:], *self.table[:rotation])

    def pairs(self) -> Iterator[Pair]:
        return (pair(a, b) for a, b in itertools.combinations(self.table, 2))


@dataclass(frozen=True)
class LeagueState:
    """Everything the matchmaker reads. Change it only through :func:`issue`, :func:`finish`, :func:`rerate`
    and :func:`with_versions`, which return a new state (``meetings`` is never changed in place)."""

    seed: int  # the league's seed: deal seeds and draws derive from it
    versions: tuple[VersionState, ...] = ()
    meetings: Mapping[Pair, int] = field(default_factory=dict)  # groups issued with both at the table
    in_flight: tuple[Group, ...] = ()  # issued, not finished
    issued: int = 0  # groups issued so far: the next group's number

    def __post_init__(self) -> None:
        ids = [v.id for v in self.versions]
        if len(set(ids)) != len(ids):
            raise ValueError(f"version ids repeat: {sorted(i for i, n in Counter(ids).items() if n > 1)}")

    def version(self, version_id: str) -> VersionState:
        for v in self.versions:
            if v.id == version_id:
                return v
        raise KeyError(version_id)


# ---------------------------------------------------------------------------- the next group


def next_group(state: LeagueState, settings: MatchSettings) -> Group | None:
    """The next deal group of the league, or None when no configured size can be filled now (every eligible
    version shares a bot or an author with the rest, or too many are in flight: wait for a group to finish)."""
    rng = SeededRng(derive_seed(state.seed, "league", "draw", state.issued))
    busy = Counter(v for group in state.in_flight for v in group.table)
    eligible = [v for v in state.versions if v.active and busy[v.id] < settings.max_in_flight]
    for anchor in _anchors(eligible, settings.min_games, rng):
        others = [v for v in eligible if v.bot != anchor.bot and v.author != anchor.author]
        most = _largest_table(others) + 1
        sizes = [k for k in settings.sizes if k <= most]
        if not sizes:
            continue
        k = sizes[rng.randbelow(len(sizes))]
        window = _window(anchor, others, k, settings)
        pool = _pool(anchor, window, k, state.meetings, settings.max_pool)
        table = [anchor.id, *(v.id for v in _best_set(anchor, pool, k, state.meetings, rng))]
        rng.shuffle(table)
        deal_seed = derive_seed(state.seed, "league", "deal", state.issued)
        return Group(state.issued, tuple(table), deal_seed, anchor.id)
    return None


def _anchors(eligible: Sequence[VersionState], min_games: int, rng: SeededRng) -> Iterator[VersionState]:
    """Eligible versions in anchor order: fewest rated games first while any is under ``min_games``, else idle
    longest first; ties by the seeded draw."""
    if any(v.games < min_games for v in eligible):
        key: Callable[[VersionState], tuple[float, ...]] = lambda v: (v.games, v.last_seated)  # noqa: E731
    else:
        key = lambda v: (v.last_seated,)  # noqa: E731
    rest = list(eligible)
    while rest:
        best = min(key(v) for v in rest)
        tied = [v for v in rest if key(v) == best]
        chosen = tied[rng.randbelow(len(tied))] if len(tied) > 1 else tied[0]
        yield chosen
        rest.remove(chosen)


def _largest_table(versions: Sequence[VersionState]) -> int:
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


def _window(anchor: VersionState, others: Sequence[VersionState], k: int,
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
        if _largest_table([others[i] for i in order[:end]]) >= k - 1:
            reach = base if far <= base else base + math.ceil((far - base) / settings.widen_step) * settings.widen_step
            break
    return [v for v, d in zip(others, distance, strict=True) if d <= reach]


def _idle_ranks(versions: Sequence[VersionState]) -> list[int]:
    """Each version's idle rank: how many of ``versions`` are idle longer (sat down earlier)."""
    times = sorted(v.last_seated for v in versions)
    return [bisect.bisect_left(times, v.last_seated) for v in versions]


def _pool(anchor: VersionState, window: Sequence[VersionState], k: int, meetings: Mapping[Pair, int],
          max_pool: int) -> list[VersionState]:
    """The window's ``max_pool`` longest idle (ties: those that met the anchor least), more until they can fill
    the table. Gating by idleness keeps games even where a window holds many never-met (new) versions."""
    if len(window) <= max_pool:
        return list(window)
    idle = _idle_ranks(window)
    order = sorted(range(len(window)), key=lambda i: (idle[i], meetings.get(pair(anchor.id, window[i].id), 0)))
    ranked = [window[i] for i in order]
    size = max(max_pool, k - 1)
    while _largest_table(ranked[:size]) < k - 1:
        size += 1
    return ranked[:size]


def _best_set(anchor: VersionState, pool: Sequence[VersionState], k: int, meetings: Mapping[Pair, int],
              rng: SeededRng) -> tuple[VersionState, ...]:
    """The (k-1)-set of ``pool`` with no shared bot or author that minimises (meetings over every pair at the
    table with the anchor, sum of idle ranks); ties by the seeded draw."""
    met = [[meetings.get(pair(a.id, b.id), 0) for b in pool] for a in pool]
    with_anchor = [meetings.get(pair(anchor.id, v.id), 0) for v in pool]
    idle = _idle_ranks(pool)
    best: tuple[int, int] | None = None
    tied: list[tuple[int, ...]] = []
    for combo in itertools.combinations(range(len(pool)), k - 1):
        if len({pool[i].bot for i in combo}) < k - 1 or len({pool[i].author for i in combo}) < k - 1:
            continue
        score = (sum(with_anchor[i] for i in combo) + sum(met[i][j] for i, j in itertools.combinations(combo, 2)),
                 sum(idle[i] for i in combo))
        if best is None or score < best:
            best, tied = score, [combo]
        elif score == best:
            tied.append(combo)
    chosen = tied[rng.randbelow(len(tied))] if len(tied) > 1 else tied[0]
    return tuple(pool[i] for i in chosen)


# ---------------------------------------------------------------------------- changing the state


def issue(state: LeagueState, group: Group, now: float) -> LeagueState:
    """The state once ``group`` is issued at ``now`` (a time or a sequence number, never falling): its versions
    were last seated now, every pair at its table met once more, it is in flight and the counter moves on.

    :raises ValueError: ``group`` is not the state's next group (stale or from another state: issuing it would
        repeat a deal seed), or names a version the league does not hold.
    """
    if group.number != state.issued:
        raise ValueError(f"group {group.number} is stale: the league has issued {state.issued} groups")
    seated = set(group.table)
    missing = seated - {v.id for v in state.versions}
    if missing:
        raise ValueError(f"group {group.number} seats unknown versions {sorted(missing)}")
    meetings = dict(state.meetings)
    for key in group.pairs():
        meetings[key] = meetings.get(key, 0) + 1
    versions = tuple(replace(v, last_seated=now) if v.id in seated else v for v in state.versions)
    return replace(state, versions=versions, meetings=meetings, in_flight=(*state.in_flight, group),
                   issued=group.number + 1)


def finish(state: LeagueState, group: Group, games: int | None = None) -> LeagueState:
    """The state once ``group`` has been played: no longer in flight, and each of its versions has ``games``
    more rated games (default: all k; pass fewer when games were void).

    :raises ValueError: ``group`` is not in flight.
    """
    if group not in state.in_flight:
        raise ValueError(f"group {group.number} is not in flight")
    played = group.size if games is None else games
    seated = set(group.table)
    versions = tuple(replace(v, games=v.games + played) if v.id in seated else v for v in state.versions)
    return replace(state, versions=versions, in_flight=tuple(g for g in state.in_flight if g != group))


def rerate(state: LeagueState, board: Mapping[str, tuple[float, float]]) -> LeagueState:
    """The state with the board's ``{version id: (rating, standard error)}``; versions not on it keep theirs."""
    versions = tuple(replace(v, rating=board[v.id][0], error=board[v.id][1]) if v.id in board else v
                     for v in state.versions)
    return replace(state, versions=versions)


def with_versions(state: LeagueState, *versions: VersionState) -> LeagueState:
    """The state with ``versions`` added, or replacing the versions of the same id (to retire one, say)."""
    new = {v.id: v for v in versions}
    kept = tuple(new.pop(v.id, v) for v in state.versions)
    return replace(state, versions=(*kept, *new.values()))
