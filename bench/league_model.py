"""A simulated league: the matchmaker driven on a simulated clock, with results drawn from known strengths.

Shared by tests/test_league_matchmaker.py (20 versions, 1,000 groups) and bench/bench_matchmaker.py (up to 200
versions, 10,000 groups). Versions play at one speed: a group of k takes k time units (k games), and
``workers`` groups are in flight at once. A group is one deal: seat s has a luck ``N(0, luck^2)`` (natural
log units) that adds to the strength of whoever sits there, in every rotation, and each game's fool is drawn
with probability proportional to ``exp(-strength - luck)`` (the board's fool-mode model, as in
bench/sprt_model.py). No game is drawn. Every ``refit_every`` finished groups the board is refitted with the
project's Bradley-Terry fit (:func:`referee.rating.bradley_terry.rate`, fool mode, pool mean 1500) and the
ratings and standard errors go back into the state through :func:`rerate`.
"""

from __future__ import annotations

import heapq
import math
import time
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
    """A version and its true strength (Elo), joining the league before group ``at`` is issued."""

    version: VersionState
    strength: float
    at: int = 0


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

    def __post_init__(self) -> None:
        self.state = LeagueState(seed=self.seed)
        self.rng = np.random.default_rng(self.seed)
        self.waiting = sorted(self.entrants, key=lambda e: e.at)
        self.index: dict[str, int] = {e.version.id: i for i, e in enumerate(self.entrants)}
        self.strength = np.array([e.strength for e in self.entrants]) * NAT_PER_ELO
        self.joined: dict[str, tuple[int, tuple[str, ...]]] = {}  # id -> (groups issued, the versions before it)
        self.played: dict[str, list[tuple[int, int]]] = {}  # id -> (group number, games) of its finished groups
        self.running: list[tuple[float, int, Group]] = []
        self.finished = 0
        self.seat_bot: list[npt.NDArray[np.int64]] = []
        self.seat_fool: list[npt.NDArray[np.bool_]] = []
        self.game_deal: list[int] = []  # per game, in the order played: its group's number

    def run(self, groups: int, drain: bool = True) -> None:
        """Play on until ``groups`` groups have been issued, and (``drain``) all of them finished; without
        ``drain`` the league stops as it would have gone on, so that stopping to look changes nothing."""
        while True:
            self._issue_ready(groups)
            if self.state.issued >= groups and not (drain and self.running):
                return
            if not self.running:
                raise RuntimeError(f"the league stalled at group {self.state.issued}")
            self._finish_next()

    def _issue_ready(self, groups: int) -> None:
        while len(self.running) < self.workers and self.state.issued < groups:
            self._admit()
            start, cpu = time.perf_counter(), time.thread_time()
            group = next_group(self.state, self.settings)
            self.call_seconds.append(time.perf_counter() - start)
            self.call_cpu.append(time.thread_time() - cpu)
            if group is None:
                return
            self.state = issue(self.state, group, self.clock)
            self.issued.append((group, self.clock))
            heapq.heappush(self.running, (self.clock + group.size, group.number, group))

    def _admit(self) -> None:
        while self.waiting and self.waiting[0].at <= self.state.issued:
            entrant = self.waiting.pop(0)
            self.joined[entrant.version.id] = (self.state.issued, tuple(v.id for v in self.state.versions))
            self.state = with_versions(self.state, entrant.version)

    def _finish_next(self) -> None:
        self.clock, _, group = heapq.heappop(self.running)
        self._play(group)
        self.state = finish(self.state, group)
        self.finished += 1
        for vid in group.table:
            self.played.setdefault(vid, []).append((group.number, group.size))
            self._check_reach(vid)
        if self.finished % self.refit_every == 0:
            self.refit()

    def _play(self, group: Group) -> None:
        k = group.size
        base = np.array([self.index[v] for v in group.table])
        luck = self.rng.normal(0.0, self.luck, k)
        for r in range(k):
            seats = np.roll(base, -r)
            fool = int(np.argmax(self.rng.gumbel(size=k) - self.strength[seats] - luck))
            self.seat_bot.append(seats)
            self.seat_fool.append(np.arange(k) == fool)
            self.game_deal.append(group.number)

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

    def refit(self, apply: bool = True) -> RatingTable:
        """Fit the board from every game so far and (``apply``) put its ratings into the state."""
        bots = np.concatenate(self.seat_bot)
        used = sorted({int(b) for b in np.unique(bots)}, key=lambda b: self.entrants[b].version.id)
        lookup = np.full(len(self.entrants), -1, dtype=np.int64)
        lookup[used] = np.arange(len(used))
        sizes = np.array([len(s) for s in self.seat_bot], dtype=np.int64)
        fool = np.concatenate(self.seat_fool)
        deals, cluster = np.unique(np.array(self.game_deal, dtype=np.int64), return_inverse=True)
        outcomes = Outcomes(
            bots=tuple(self.entrants[b].version.id for b in used), clusters=tuple(map(str, deals)),
            bot=lookup[bots], place=np.where(fool, np.repeat(sizes, sizes), 1), fool=fool, size=sizes,
            cluster=cluster, drawn=np.zeros(len(sizes), dtype=np.bool_),
        )
        board = rate(outcomes)
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


def spread(counts: list[float]) -> tuple[float, float, float]:
    """(min / mean, max / mean, coefficient of variation) of ``counts``."""
    values = np.array(counts, dtype=np.float64)
    mean = float(values.mean())
    return float(values.min()) / mean, float(values.max()) / mean, float(values.std()) / mean
