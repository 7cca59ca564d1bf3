"""A simulated league: the matchmaker driven on a simulated clock, with results drawn from known strengths.

Shared by tests/test_league_matchmaker.py and bench/bench_matchmaker.py. The clock plays the daemon's coordinator
(:mod:`referee.tournament.coordinator` over the local executor): ``workers`` games at once, one game a batch; the
course is asked for a group whenever fewer than ``workers`` deals wait that are not in flight, and a worker takes
the first waiting game whose deal is not in flight (two rotations of one deal never run at once). A game lasts
the sum of its seats' ``seconds`` (each version's time per game: its moves times its move time), so a slow
version makes every game it sits in slow. A group is one deal: seat s has a luck ``N(0, luck^2)`` (natural log
units) that adds to the strength of whoever sits there, in every rotation, and each game's fool is drawn with
probability proportional to ``exp(-strength - luck)`` (the board's fool-mode model, as in bench/sprt_model.py);
a version's strength may differ by table size (``at_size``). No game is drawn. Every ``refit_every`` finished
groups the board is refitted with the project's Bradley-Terry fit (:func:`referee.rating.bradley_terry.rate`,
fool mode, pool mean 1500) and the ratings and standard errors go back into the state through :func:`rerate`.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from referee.league.matchmaker import (
    Group,
    LeagueState,
    MatchSettings,
    VersionState,
    finish,
    issue,
    next_group,
    rerate,
    with_versions,
)
from referee.rating.bradley_terry import RatingTable, rate
from referee.rating.outcomes import Outcomes

NAT_PER_ELO = math.log(10.0) / 400.0
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Entrant:
    """A version, its true strength (Elo), joining the league before group ``at`` is issued; ``seconds`` of
    each game it sits in are its own (moves times move time); ``at_size``: Elo added at a table size."""

    version: VersionState
    strength: float
    at: int = 0
    seconds: float = 0.5
    at_size: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Reach:
    """When a version reached ``min_games``: groups issued since it joined, the most games any version already
    in the league at its join had played since then (in groups issued after the join: a group in flight at the
    join was decided before it), and its own games then."""

    groups: int
    older_most: int
    games: int


@dataclass
class LeagueSim:
    settings: MatchSettings
    entrants: list[Entrant]
    seed: int = 0
    workers: int = 2
    refit_every: int = 50
    luck: float = 0.5
    state: LeagueState = field(init=False)
    clock: float = 0.0
    issued: list[tuple[Group, float]] = field(default_factory=list)  # every group and the time it was issued
    reached: dict[str, Reach] = field(default_factory=dict)
    board: RatingTable | None = None
    call_seconds: list[float] = field(default_factory=list)  # every next_group call's wall time
    call_cpu: list[float] = field(default_factory=list)  # and its CPU time (the machine may be shared)
    busy_seconds: float = 0.0  # worker time spent playing

    def __post_init__(self) -> None:
        self.state = LeagueState(seed=self.seed)
        self.rng = np.random.default_rng(self.seed)
        self.waiting_entrants = sorted(self.entrants, key=lambda e: e.at)
        self.index: dict[str, int] = {e.version.id: i for i, e in enumerate(self.entrants)}
        self.strength = np.array([e.strength for e in self.entrants]) * NAT_PER_ELO
        self.joined: dict[str, tuple[int, tuple[str, ...]]] = {}  # id -> (groups issued, the versions before it)
        self.played: dict[str, list[tuple[int, int]]] = {}  # id -> (group number, games) of its finished groups
        self.waiting: deque[tuple[Group, int]] = deque()  # (group, rotation) not started
        self.running: list[tuple[float, int, Group, int]] = []  # (end, tiebreak, group, rotation)
        self.luck_of: dict[int, npt.NDArray[np.float64]] = {}  # group number -> its seats' luck
        self.left: dict[int, int] = {}  # group number -> games not finished
        self.finished = 0
        self.seat_bot: list[npt.NDArray[np.int64]] = []
        self.seat_fool: list[npt.NDArray[np.bool_]] = []
        self.game_deal: list[int] = []  # per game, in the order played: its group's number
        self.game_end: list[float] = []  # per game: when it ended
        self._ticket = itertools.count()

    def run(self, groups: int, drain: bool = True, until: float = math.inf) -> None:
        """Play on until ``groups`` groups have been issued (or the clock passes ``until``), and (``drain``) all
        of them finished; without ``drain`` the league stops as it would have gone on, so that stopping to look
        changes nothing."""
        while True:
            self._top_up(groups)
            self._dispatch()
            done = self.state.issued >= groups or self.clock >= until
            if done and not (drain and (self.running or self.waiting)):
                return
            if not self.running:
                raise RuntimeError(f"the league stalled at group {self.state.issued}")
            self._finish_next()

    def _ready_deals(self) -> int:
        in_flight = {group.number for _, _, group, _ in self.running}
        return len({group.number for group, _ in self.waiting if group.number not in in_flight})

    def _top_up(self, groups: int) -> None:
        while self._ready_deals() < self.workers and self.state.issued < groups:
            self._admit()
            start, cpu = time.perf_counter(), time.thread_time()
            group = next_group(self.state, self.settings)
            self.call_seconds.append(time.perf_counter() - start)
            self.call_cpu.append(time.thread_time() - cpu)
            if group is None:
                return
            self.state = issue(self.state, group, self.clock, self.settings)
            self.issued.append((group, self.clock))
            self.luck_of[group.number] = self.rng.normal(0.0, self.luck, group.size)
            self.left[group.number] = group.size
            self.waiting.extend((group, r) for r in range(group.size))

    def _dispatch(self) -> None:
        while len(self.running) < self.workers:
            in_flight = {group.number for _, _, group, _ in self.running}
            slot = next(((i, g, r) for i, (g, r) in enumerate(self.waiting) if g.number not in in_flight), None)
            if slot is None:
                return
            i, group, rotation = slot
            del self.waiting[i]
            seconds = sum(self.entrants[self.index[v]].seconds for v in group.table)
            self.busy_seconds += seconds
            heapq.heappush(self.running, (self.clock + seconds, next(self._ticket), group, rotation))

    def _admit(self) -> None:
        while self.waiting_entrants and self.waiting_entrants[0].at <= self.state.issued:
            entrant = self.waiting_entrants.pop(0)
            self.joined[entrant.version.id] = (self.state.issued, tuple(v.id for v in self.state.versions))
            self.state = with_versions(self.state, entrant.version)

    def _finish_next(self) -> None:
        self.clock, _, group, rotation = heapq.heappop(self.running)
        self._play(group, rotation)
        self.left[group.number] -= 1
        if self.left[group.number]:
            return
        del self.left[group.number], self.luck_of[group.number]
        self.state = finish(self.state, group)
        self.finished += 1
        for vid in group.table:
            self.played.setdefault(vid, []).append((group.number, group.size))
            self._check_reach(vid)
        if self.finished % self.refit_every == 0:
            self.refit()

    def _play(self, group: Group, rotation: int) -> None:
        k = group.size
        seats = np.roll(np.array([self.index[v] for v in group.table]), -rotation)
        luck = self.luck_of[group.number]
        bonus = np.array([self.entrants[b].at_size.get(k, 0.0) for b in seats]) * NAT_PER_ELO
        fool = int(np.argmax(self.rng.gumbel(size=k) - self.strength[seats] - bonus - luck))
        self.seat_bot.append(seats)
        self.seat_fool.append(np.arange(k) == fool)
        self.game_deal.append(group.number)
        self.game_end.append(self.clock)

    def _check_reach(self, vid: str) -> None:
        if vid in self.reached or vid not in self.joined:
            return
        version = self.state.version(vid)
        if version.games < self.settings.min_games:
            return
        at, before = self.joined[vid]
        most = max((sum(games for number, games in self.played.get(o, ()) if number >= at) for o in before),
                   default=0)
        self.reached[vid] = Reach(self.state.issued - at, most, version.games)

    def outcomes(self, size: int | None = None) -> Outcomes:
        """Every game played so far (of ``size`` players, or all) as the board reads them."""
        keep = [i for i, s in enumerate(self.seat_bot) if size is None or len(s) == size]
        bots = np.concatenate([self.seat_bot[i] for i in keep])
        used = sorted({int(b) for b in np.unique(bots)}, key=lambda b: self.entrants[b].version.id)
        lookup = np.full(len(self.entrants), -1, dtype=np.int64)
        lookup[used] = np.arange(len(used))
        sizes = np.array([len(self.seat_bot[i]) for i in keep], dtype=np.int64)
        fool = np.concatenate([self.seat_fool[i] for i in keep])
        deals, cluster = np.unique(np.array([self.game_deal[i] for i in keep], dtype=np.int64), return_inverse=True)
        return Outcomes(
            bots=tuple(self.entrants[b].version.id for b in used), clusters=tuple(map(str, deals)),
            bot=lookup[bots], place=np.where(fool, np.repeat(sizes, sizes), 1), fool=fool, size=sizes,
            cluster=cluster, drawn=np.zeros(len(sizes), dtype=np.bool_),
        )

    def refit(self, apply: bool = True) -> RatingTable:
        """Fit the board from every game so far and (``apply``) put its ratings into the state."""
        board = rate(self.outcomes())
        if apply:
            self.board = board
            self.state = rerate(self.state, {b.name: (b.elo, b.sd if b.identified else math.inf)
                                             for b in board.bots})
        return board

    def games(self) -> dict[str, int]:
        return {v.id: v.games for v in self.state.versions}


# ---------------------------------------------------------------------------- measures


def strongest(entrants: list[Entrant], top: int) -> set[str]:
    """The ``top`` strongest versions that may share a table: a version sharing a bot or an author with a
    stronger one already taken is passed over (it can never meet it)."""
    taken: list[VersionState] = []
    for entrant in sorted(entrants, key=lambda e: -e.strength):
        v = entrant.version
        if len(taken) < top and all(v.bot != t.bot and v.author != t.author for t in taken):
            taken.append(v)
    return {v.id for v in taken}


def top_meetings(sim: LeagueSim, span: int = 100, top: int = 4) -> list[int]:
    """For each span of ``span`` issued groups: the fewest groups any two of the ``top`` strongest versions
    (true strength, among those in the league when the span began, :func:`strongest`) shared."""
    joined_at = {vid: at for vid, (at, _) in sim.joined.items()}
    fewest = []
    for start in range(0, len(sim.issued) - span + 1, span):
        best = strongest([e for e in sim.entrants if joined_at.get(e.version.id, math.inf) <= start], top)
        met: dict[frozenset[str], int] = {}
        for group, _ in sim.issued[start:start + span]:
            at = sorted(best.intersection(group.table))
            for i, a in enumerate(at):
                for b in at[i + 1:]:
                    met[frozenset((a, b))] = met.get(frozenset((a, b)), 0) + 1
        pairs = top * (top - 1) // 2
        fewest.append(min(met.values()) if len(met) == pairs else 0)
    return fewest


def spearman(board: RatingTable, sim: LeagueSim) -> float:
    """Rank correlation of the board's ratings with the true strengths, over the versions it identifies."""
    rated = [b for b in board.bots if b.identified]
    fitted = np.array([b.elo for b in rated])
    true = np.array([sim.entrants[sim.index[b.name]].strength for b in rated])
    a, b = np.argsort(np.argsort(fitted)), np.argsort(np.argsort(true))
    return float(np.corrcoef(a, b)[0, 1])


def spread(counts: Sequence[float]) -> tuple[float, float, float]:
    """(min / mean, max / mean, coefficient of variation) of ``counts``."""
    values = np.array(counts, dtype=np.float64)
    mean = float(values.mean())
    return float(values.min()) / mean, float(values.max()) / mean, float(values.std()) / mean


# ---------------------------------------------------------------------------- fairness over windows


@dataclass(frozen=True)
class Played:
    """One group as a measure sees it: its number, its table, when it was issued (and, per game, when each
    ended: a real league's stored games, or the simulation's)."""

    number: int
    table: tuple[str, ...]
    issued: float


@dataclass(frozen=True)
class WindowSpread:
    """The worst window: games per version, over the versions past their entry when it began, max/min and
    min/mean, and the window's mean games per version."""

    windows: int
    max_over_min: float
    min_over_mean: float
    max_over_mean: float
    mean: float


def window_spread(events: list[tuple[float, str, int]], entered: dict[str, float], span: float, step: float,
                  start: float, end: float) -> WindowSpread | None:
    """Games per version over every window [t, t + span) stepped by ``step`` from ``start`` to ``end``:
    ``events`` are (when, version, games), a version counts in a window that begins after it is ``entered``
    (past its entry: a time or a group number). The worst max/min, min/mean and max/mean of any window."""
    times = np.array([e[0] for e in events])
    order = np.argsort(times, kind="stable")
    worst: list[tuple[float, float, float, float]] = []
    t = start
    while t + span <= end + 1e-9:
        lo, hi = np.searchsorted(times[order], [t, t + span])
        counts = {vid: 0 for vid, at in entered.items() if at <= t}
        for i in order[lo:hi]:
            _, vid, games = events[i]
            if vid in counts:
                counts[vid] += games
        if len(counts) >= 2 and min(counts.values()) > 0:
            values = np.array(list(counts.values()), dtype=np.float64)
            mean = float(values.mean())
            worst.append((float(values.max() / values.min()), float(values.min()) / mean,
                          float(values.max()) / mean, mean))
        elif len(counts) >= 2:
            worst.append((math.inf, 0.0, math.inf, float(np.mean(list(counts.values())))))
        t += step
    if not worst:
        return None
    return WindowSpread(len(worst), max(w[0] for w in worst), min(w[1] for w in worst), max(w[2] for w in worst),
                        min(w[3] for w in worst))


def size_shares(groups: list[Played]) -> dict[str, dict[int, float]]:
    """Each version's share of its groups at each table size."""
    counts: dict[str, dict[int, int]] = {}
    for group in groups:
        for vid in group.table:
            per = counts.setdefault(vid, {})
            per[len(group.table)] = per.get(len(group.table), 0) + 1
    return {vid: {k: n / sum(per.values()) for k, n in sorted(per.items())} for vid, per in counts.items()}


def first_meetings(groups: list[Played], present: dict[str, float]) -> dict[tuple[str, str], float | None]:
    """For every pair of versions: how long after both were present they were first issued a group together
    (None: never)."""
    first: dict[tuple[str, str], float] = {}
    for group in groups:
        for a, b in itertools.combinations(sorted(group.table), 2):
            first.setdefault((a, b), group.issued)
    ids = sorted(present)
    return {(a, b): (first[(a, b)] - max(present[a], present[b]) if (a, b) in first else None)
            for a, b in itertools.combinations(ids, 2)}


def sim_played(sim: LeagueSim) -> list[Played]:
    return [Played(g.number, g.table, at) for g, at in sim.issued]


def sim_entered(sim: LeagueSim) -> tuple[dict[str, float], dict[str, float]]:
    """When each version of a simulation passed its entry (its ``min_games``-th issued game), by group number
    and by clock."""
    issued: dict[str, int] = {}
    by_group: dict[str, float] = {}
    by_time: dict[str, float] = {}
    for group, at in sim.issued:
        for vid in group.table:
            issued[vid] = issued.get(vid, 0) + group.size
            if issued[vid] >= sim.settings.min_games and vid not in by_group:
                by_group[vid], by_time[vid] = group.number + 1, at
    return by_group, by_time
