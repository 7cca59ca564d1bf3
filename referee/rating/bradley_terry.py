"""Bradley-Terry ratings on the Elo scale, fitted in one batch from result records.

Model
-----
Each game is turned into pairwise comparisons (see :func:`pairwise_outcomes`); a comparison
of bots ``i`` and ``j`` scores 1, 1/2 or 0 for ``i``. Ratings ``r`` are the maximum-likelihood
estimate of the Bradley-Terry model on the Elo scale: ``i`` is expected to score
``1 / (1 + 10 ** (-(r_i - r_j) / 400))`` against ``j``, and a draw counts as half a win for each
side (the usual "ties as half points" likelihood). The estimate depends only on the totals per
pair, never on the order of the games. Two modes, never mixed in one fit:

``fool`` (default)
    every non-fool beats each fool; non-fools are not compared with each other; co-fools draw
    with each other; a drawn game (no fools) is a draw for every pair.
``order``
    an earlier finisher beats a later one; players in the same place group draw.

Fit
---
Newton iterations (with step halving, so the log-likelihood never decreases) on pair totals
aggregated with ``numpy.bincount``; the ratings are kept summing to zero, which removes the
one free shift. A fit that has not converged after ``max_iter`` steps raises
:class:`ConvergenceError` (a ``RuntimeError``).

When the MLE does not exist, and only then
-----------------------------------------
The MLE is finite exactly when the "scored against" graph (an edge ``i -> j`` when ``i`` took
any points from ``j``) is strongly connected: a bot that never scores, never loses, or a group
of bots never compared with the rest pushes the likelihood maximum to infinity. This is
detected from the pair totals before fitting. In that case, and only then, every bot gets
``prior`` (default 1) virtual drawn games against the pool mean: the penalty
``prior * sum_i [log F(r_i - mean r) + log F(mean r - r_i)] / 2`` (``F`` the Elo expectation)
makes the objective strictly concave, so the fit exists and is finite; it is shift-invariant,
so the pool-mean constraint is untouched. When the data identify all ratings the result is the
plain MLE, unaffected by any prior.

Bots that the data alone cannot place are flagged (``identified`` False). Relative to the main
pool (the unique largest strongly connected group; without one, relative to everybody else):

* ``bound == "lower"``: the bot (group) took points from the pool but never lost any to it;
  its true MLE is +infinity and the shown rating is a lower bound ("> 2100");
* ``bound == "upper"``: never took a point from the pool; the rating is an upper bound ("< 900");
* ``bound is None``: no comparison path either way (disconnected) or sandwiched between
  separated groups; the rating is set by the prior and means little.

With ``prior = 1`` a bound sits where the bot's expected lost (or gained) points over all of its
comparisons are about one half, i.e. where its clean sheet stops being surprising.

Error bars
----------
Cluster-robust (sandwich, CR1) covariance with one cluster per deal key:
``V = H^+ (sum_c g_c g_c^T) H^+ * C / (C - 1)``, ``H`` the information matrix at the optimum
(including the prior curvature when the prior is on), ``g_c`` the score contribution of deal
``c`` and ``C`` the number of deals. ``ci95 = 1.96 * sd`` on the Elo scale, for each rating
relative to the anchor (pool mean, or the anchored bot, whose own error bar is then zero). With
``bootstrap=N`` deals are resampled with replacement N times (seeded), every replicate is
refitted, and ``ci95`` is half the 2.5-97.5 percentile range instead. LOS (likelihood of
superiority) of each bot over the next one in rank order always uses the sandwich covariance:
``Phi((r_i - r_j) / sqrt(var_i + var_j - 2 cov_ij))``. Ratings, error bars and LOS of bots that
are not identified are bounds or prior-driven, so ``ci95`` and ``los_next`` are ``None`` for
them (never inf or nan).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from protocol.records import ResultRecord
from referee.rating.outcomes import Outcomes, outcomes_from_records

Mode = Literal["fool", "order"]
Bound = Literal["lower", "upper"]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

MODES: tuple[Mode, ...] = ("fool", "order")
MODEL = "Bradley-Terry MLE, Elo scale"
ELO_PER_NAT = 400.0 / math.log(10.0)
Z95 = 1.96
DEFAULT_ELO = 1500.0
DEFAULT_PRIOR = 1.0
MAX_ITER = 100
TOL = 1e-10


@dataclass(frozen=True)
class Solver:
    """How a fit is solved: ``prior`` virtual draws per bot against the pool mean (used only when the data do
    not identify the MLE), at most ``max_iter`` Newton steps, converged below a step of ``tol`` (natural-log
    units; 1e-10 is about 2e-8 Elo)."""

    prior: float = DEFAULT_PRIOR
    max_iter: int = MAX_ITER
    tol: float = TOL


SOLVER = Solver()
_MEAT_CHUNK = 1 << 22  # cluster-by-bot cells per block of the sandwich "meat"


class ConvergenceError(RuntimeError):
    """The Newton iterations did not converge within ``max_iter`` steps."""


@dataclass(frozen=True)
class Comparisons:
    """Pairwise outcomes: comparison ``k`` scores ``score_i[k]`` for bot ``i[k]`` against ``j[k]``.

    ``bots`` names the bot indices (sorted by name), ``clusters`` the deal keys that
    ``cluster`` indexes.
    """

    i: IntArray
    j: IntArray
    score_i: FloatArray
    cluster: IntArray
    bots: tuple[str, ...]
    clusters: tuple[str, ...]
    mode: Mode
    n_games: int


@dataclass(frozen=True)
class Fit:
    """A fitted rating vector (Elo, anchored) with its covariance (Elo^2, relative to the anchor)."""

    ratings: FloatArray
    covariance: FloatArray
    bound: tuple[Bound | None, ...]
    identified: BoolArray
    prior: float  # virtual draws per bot actually used; 0.0 for the plain MLE
    iterations: int
    n_clusters: int
    errors: str  # how ``covariance`` was obtained

    @property
    def sd(self) -> FloatArray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))


@dataclass(frozen=True)
class BotRating:
    """One bot's line of a :class:`RatingTable`."""

    name: str
    elo: float
    ci95: float | None  # None when the bot is not identified (bound or prior-driven)
    bound: Bound | None
    identified: bool
    sd: float
    los_next: float | None  # P(this bot > the next one in rank order); None for the last
    points: float  # pairwise points over all comparisons
    comparisons: int

    @property
    def score(self) -> float | None:
        return self.points / self.comparisons if self.comparisons else None


@dataclass(frozen=True)
class RatingTable:
    """Ratings in rank order (best first) plus what a leaderboard footer needs.

    ``covariance``, ``h2h_points`` and ``h2h_comparisons`` are indexed in the same rank order;
    ``h2h_points[a, b]`` is what ``bots[a]`` scored against ``bots[b]``.
    """

    bots: tuple[BotRating, ...]
    mode: Mode
    anchor: str
    n_games: int
    n_clusters: int
    errors: str
    prior: float
    covariance: FloatArray
    h2h_points: FloatArray
    h2h_comparisons: FloatArray
    model: str = MODEL


# ---------------------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class _Seats:
    """Every seat of every game, flat: bot index and level (lower is better) per seat."""

    bot: IntArray
    level: IntArray
    size: IntArray  # players per game
    cluster: IntArray  # deal index per game
    bots: tuple[str, ...]
    clusters: tuple[str, ...]


def pairwise_outcomes(source: Iterable[ResultRecord] | Outcomes, mode: Mode = "fool") -> Comparisons:
    """Turn games (result records, or their outcomes in columns) into pairwise comparisons under ``mode``
    (see the module docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown rating mode {mode!r}; expected one of {', '.join(MODES)}")
    outcomes = source if isinstance(source, Outcomes) else outcomes_from_records(source)
    seats = _seats(outcomes, mode)
    i, j, score, cluster = _pairs_from_seats(seats, mode)
    return Comparisons(i, j, score, cluster, seats.bots, seats.clusters, mode, len(seats.size))


def _seats(outcomes: Outcomes, mode: Mode) -> _Seats:
    """Each seat's level, lower is better: in ``fool`` mode 1 for a fool and for everyone in a drawn game,
    else 0; in ``order`` mode the place."""
    level = outcomes.place
    if mode == "fool":
        level = (outcomes.fool | np.repeat(outcomes.drawn, outcomes.size)).astype(np.int64)
    return _Seats(bot=outcomes.bot, level=level, size=outcomes.size, cluster=outcomes.cluster,
                  bots=outcomes.bots, clusters=outcomes.clusters)


def _pairs_from_seats(seats: _Seats, mode: Mode) -> tuple[IntArray, IntArray, FloatArray, IntArray]:
    """All seat pairs of all games, vectorised per game size, filtered by the mode's rule."""
    starts = np.concatenate(([0], np.cumsum(seats.size)[:-1])).astype(np.int64)
    parts: list[tuple[IntArray, IntArray, FloatArray, IntArray]] = []
    for k in np.unique(seats.size).tolist():
        games = np.flatnonzero(seats.size == k)
        seat = starts[games] + np.arange(k)[:, None]  # one row per seat position
        bot, level, cluster = seats.bot[seat], seats.level[seat], seats.cluster[games]
        for a, b in itertools.combinations(range(k), 2):
            la, lb = level[a], level[b]
            score = 0.5 + 0.5 * np.sign(lb - la).astype(np.float64)
            if mode == "fool":
                keep = np.flatnonzero((la != lb) | (la == 1))
                parts.append((bot[a].take(keep), bot[b].take(keep), score.take(keep), cluster.take(keep)))
            else:
                parts.append((bot[a], bot[b], score, cluster))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy(), np.zeros(0), empty.copy()
    i, j, score, cluster = (np.concatenate(col) for col in zip(*parts, strict=True))
    if np.any(i == j):
        raise ValueError("a bot appears more than once in one game")
    return i, j, score.astype(np.float64), cluster


# ---------------------------------------------------------------------------- pair totals


@dataclass(frozen=True)
class PairTotals:
    """Comparisons aggregated per unordered pair ``lo < hi``: count and points of ``lo``."""

    lo: IntArray
    hi: IntArray
    games: FloatArray
    points: FloatArray
    n: int


def _canonical(comp: Comparisons, n: int) -> tuple[IntArray, FloatArray]:
    """Per comparison: the unordered pair key ``lo * n + hi`` and the points of ``lo``."""
    swap = comp.i > comp.j
    lo = np.where(swap, comp.j, comp.i)
    hi = np.where(swap, comp.i, comp.j)
    return lo * n + hi, np.where(swap, 1.0 - comp.score_i, comp.score_i)


def _bincount(index: IntArray, weights: FloatArray | None, size: int) -> FloatArray:
    """``np.bincount`` with a fixed length, always as float64."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64, copy=False)


def _totals(key: IntArray, points: FloatArray, weight: FloatArray | None, n: int) -> PairTotals:
    games = _bincount(key, weight, n * n)
    won = _bincount(key, points if weight is None else points * weight, n * n)
    nz = np.flatnonzero(games > 0)
    return PairTotals(nz // n, nz % n, games[nz], won[nz], n)


# ---------------------------------------------------------------------------- separation


def _edges(totals: PairTotals) -> BoolArray:
    """``edge[a, b]``: bot ``a`` took points from bot ``b`` (or ``a == b``)."""
    edge = np.eye(totals.n, dtype=np.bool_)
    edge[totals.lo[totals.points > 0], totals.hi[totals.points > 0]] = True
    lost = totals.games - totals.points > 0
    edge[totals.hi[lost], totals.lo[lost]] = True
    return edge


def _strongly_connected(edge: BoolArray) -> bool:
    """Whether every bot reaches bot 0 and bot 0 every bot: a search each way, O(n^2) a step, where the closure of
    :func:`_reachability` costs a dense product a step (the common case, every bot placed, in ~1/50 of the time)."""
    for forward in (edge, edge.T):
        seen = np.zeros(len(edge), dtype=np.bool_)
        seen[0] = True
        while True:
            grown = seen | forward[seen].any(axis=0)
            if np.array_equal(grown, seen):
                break
            seen = grown
        if not seen.all():
            return False
    return True


def _reachability(totals: PairTotals) -> BoolArray:
    """``reach[a, b]``: a chain of "took points from" leads from bot ``a`` to bot ``b``."""
    reach = _edges(totals)
    if _strongly_connected(reach):
        return np.ones_like(reach)
    while True:
        step = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
        if np.array_equal(step, reach):
            return reach
        reach = step


def _separation(totals: PairTotals) -> tuple[tuple[Bound | None, ...], BoolArray]:
    """Which bots the data alone cannot place, and which side their rating is a bound on."""
    n = totals.n
    reach = _reachability(totals)
    if reach.all():
        return (None,) * n, np.ones(n, dtype=np.bool_)
    same = reach & reach.T
    label = np.argmax(same, axis=1)  # lowest member of each strongly connected group
    sizes = np.bincount(label, minlength=n)
    main = _main_group(sizes)
    bounds: list[Bound | None] = []
    for a in range(n):
        if main is not None:
            inside = label == main
            gives, takes = bool(reach[a, inside].any()), bool(reach[inside, a].any())
            if label[a] == main:
                gives = takes = False
        else:
            outside = label != label[a]
            gives, takes = bool(reach[a, outside].any()), bool(reach[outside, a].any())
        bounds.append("lower" if gives and not takes else "upper" if takes and not gives else None)
    identified = label == main if main is not None else np.zeros(n, dtype=np.bool_)
    return tuple(bounds), identified


def _main_group(sizes: IntArray) -> int | None:
    """The label of the unique largest strongly connected group, if there is one."""
    largest = int(sizes.max())
    winners = np.flatnonzero(sizes == largest)
    return int(winners[0]) if len(winners) == 1 and largest > 1 else None


# ---------------------------------------------------------------------------- Newton fit


def _expected(d: FloatArray) -> FloatArray:
    """Logistic function, overflow-free."""
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * d))
    return out


def _objective(theta: FloatArray, t: PairTotals, prior: float) -> float:
    d = theta[t.lo] - theta[t.hi]
    ll = -float(np.sum(t.points * np.logaddexp(0.0, -d) + (t.games - t.points) * np.logaddexp(0.0, d)))
    if prior:
        u = theta - theta.mean()
        ll -= 0.5 * prior * float(np.sum(np.logaddexp(0.0, -u) + np.logaddexp(0.0, u)))
    return ll


def _gradient_information(theta: FloatArray, t: PairTotals, prior: float) -> tuple[FloatArray, FloatArray]:
    """Gradient and information (minus Hessian) of the objective, both in natural log units."""
    n = t.n
    p = _expected(theta[t.lo] - theta[t.hi])
    resid = t.points - t.games * p
    grad = _bincount(t.lo, resid, n) - _bincount(t.hi, resid, n)
    weight = _bincount(t.lo * n + t.hi, t.games * p * (1.0 - p), n * n).reshape(n, n)
    weight = weight + weight.T
    info = np.diag(weight.sum(axis=1)) - weight
    if prior:
        q = _expected(theta - theta.mean())
        slope = prior * (0.5 - q)
        grad = grad + slope - slope.mean()
        curve = prior * q * (1.0 - q)
        # C diag(curve) C with C = I - J/n, in O(n^2): two dense products per Newton step cost ~0.1 s at 1,000 bots
        info = info + np.diag(curve) - (curve[:, None] + curve[None, :]) / n + curve.sum() / (n * n)
    return grad, info


def _newton(t: PairTotals, prior: float, max_iter: int, tol: float,
            start: FloatArray | None = None) -> tuple[FloatArray, FloatArray, int]:
    """Maximise the objective over ratings summing to zero, from ``start`` (a warm start: the last fit's ratings)
    or zero; return theta, information, steps."""
    n = t.n
    # Centred: a Newton step keeps the sum of the ratings (the gradient sums to zero), so the start sets it.
    theta = np.zeros(n) if start is None else start - start.mean()
    current = _objective(theta, t, prior)
    slack = 1e-12 * (1.0 + abs(current))
    for iteration in range(1, max_iter + 1):
        grad, info = _gradient_information(theta, t, prior)
        step = np.linalg.solve(info + 1.0 / n, grad)  # + J/n fixes the free shift
        scale = 1.0
        trial = _objective(theta + step, t, prior)
        while trial < current - slack and scale > 1e-9:
            scale *= 0.5
            trial = _objective(theta + scale * step, t, prior)
        theta = theta + scale * step
        current = trial
        size = float(np.max(np.abs(step), initial=0.0))  # the full Newton step, before halving
        if size < tol:
            return theta, _gradient_information(theta, t, prior)[1], iteration
    raise ConvergenceError(
        f"Bradley-Terry fit did not converge in {max_iter} Newton steps (last step {size:.3g} nats)"
    )


# ---------------------------------------------------------------------------- covariance


def _pseudo_inverse(info: FloatArray) -> FloatArray:
    """Inverse on the sum-zero subspace of an information matrix whose null space is the ones."""
    n = len(info)
    inv = np.linalg.inv(info + 1.0 / n).astype(np.float64)
    return inv - 1.0 / n


def _meat(theta: FloatArray, comp: Comparisons, n: int) -> FloatArray:
    """Sum over deals of g_c g_c^T, g_c the deal's score contribution (natural log units)."""
    resid = comp.score_i - _expected(theta[comp.i] - theta[comp.j])
    n_clusters = len(comp.clusters)
    block = max(1, _MEAT_CHUNK // max(n, 1))  # deals per block, to bound memory
    if n_clusters <= block:
        return _cluster_outer(comp.i, comp.j, comp.cluster, resid, n_clusters, n)
    order = np.argsort(comp.cluster, kind="stable")
    edges = np.searchsorted(comp.cluster[order], np.arange(0, n_clusters + block, block))
    meat = np.zeros((n, n))
    for start, a, b in zip(range(0, n_clusters, block), edges[:-1], edges[1:], strict=False):
        sl = order[a:b]
        meat += _cluster_outer(comp.i[sl], comp.j[sl], comp.cluster[sl] - start, resid[sl], block, n)
    return meat


def _cluster_outer(
    i: IntArray, j: IntArray, cluster: IntArray, resid: FloatArray, n_clusters: int, n: int
) -> FloatArray:
    cells = n_clusters * n
    g = (_bincount(cluster * n + i, resid, cells) - _bincount(cluster * n + j, resid, cells)).reshape(-1, n)
    # einsum rather than g.T @ g: a tall-skinny BLAS product can stall on busy machines
    outer: FloatArray = np.einsum("ca,cb->ab", g, g)
    return outer


def _sandwich(theta: FloatArray, info: FloatArray, meat: Callable[[FloatArray], FloatArray],
              n_clusters: int) -> tuple[FloatArray, str]:
    bread = _pseudo_inverse(info)
    if n_clusters < 2:
        return bread, "model-based (fewer than 2 deals)"
    cov = bread @ meat(theta) @ bread * (n_clusters / (n_clusters - 1))
    return cov, "cluster-robust sandwich by deal"


def _anchor_matrix(n: int, anchor_bot: int | None) -> FloatArray:
    """Maps free ratings to anchored ones: minus the pool mean, or minus the anchored bot."""
    if anchor_bot is None:
        return np.eye(n) - 1.0 / n
    shift = np.zeros((n, n))
    shift[:, anchor_bot] = 1.0
    return np.eye(n) - shift


# ---------------------------------------------------------------------------- public fit


def fit(
    comparisons: Comparisons,
    n_bots: int | None = None,
    *,
    anchor_bot: int | None = None,
    anchor_elo: float = DEFAULT_ELO,
    solver: Solver = SOLVER,
) -> Fit:
    """Fit Bradley-Terry ratings with cluster-robust covariance.

    ``anchor_bot`` (an index into ``comparisons.bots``) gets ``anchor_elo``; without it the pool
    mean does. ``solver`` holds the prior used only when the data do not identify the MLE (module
    docstring) and the Newton iteration's limits. Raises :class:`ConvergenceError` after
    ``solver.max_iter`` Newton steps without convergence.
    """
    n = len(comparisons.bots) if n_bots is None else n_bots
    if n == 0:
        empty = np.zeros(0)
        return Fit(empty, np.zeros((0, 0)), (), np.zeros(0, dtype=np.bool_), 0.0, 0,
                   len(comparisons.clusters), "none")
    if anchor_bot is not None and not 0 <= anchor_bot < n:
        raise ValueError(f"anchor bot index {anchor_bot} out of range for {n} bots")
    if solver.prior <= 0:
        raise ValueError("prior must be positive (it is used only when the MLE does not exist)")
    key, points = _canonical(comparisons, n)
    totals = _totals(key, points, None, n)
    return fit_totals(totals, len(comparisons.clusters), lambda theta: _meat(theta, comparisons, n),
                      anchor=(anchor_bot, anchor_elo), solver=solver)


def fit_totals(
    totals: PairTotals,
    n_clusters: int,
    meat: Callable[[FloatArray], FloatArray],
    *,
    anchor: tuple[int | None, float] = (None, DEFAULT_ELO),
    solver: Solver = SOLVER,
    start: FloatArray | None = None,
) -> Fit:
    """:func:`fit` from what it needs of the games: the pair totals (the point estimate, its bounds and the
    information), the number of deals and ``meat(theta)``, the sum over deals of ``g_c g_c^T`` at ``theta`` (the
    sandwich's middle). ``anchor``: a bot index (or None: the pool mean) and its rating; ``start``: ratings to
    start Newton's iterations from (natural log units; a warm start converges to the same optimum)."""
    n = totals.n
    anchor_bot, anchor_elo = anchor
    bound, identified = _separation(totals)
    used = 0.0 if identified.all() else solver.prior
    try:
        theta, info, steps = _newton(totals, used, solver.max_iter, solver.tol, start)
    except (ConvergenceError, np.linalg.LinAlgError):
        if start is None:
            raise
        # A start far off (ratings many nats apart saturate the win chances: the information vanishes) is only a
        # shortcut: the fit from zero is the same optimum.
        theta, info, steps = _newton(totals, used, solver.max_iter, solver.tol, None)
    cov, errors = _sandwich(theta, info, meat, n_clusters)
    to_anchor = _anchor_matrix(n, anchor_bot) * ELO_PER_NAT
    # relative to the pool mean, cov is already centred (the bread's rows sum to zero): no dense products needed
    covariance = cov * ELO_PER_NAT**2 if anchor_bot is None else to_anchor @ cov @ to_anchor.T
    return Fit(
        ratings=to_anchor @ theta + anchor_elo,
        covariance=0.5 * (covariance + covariance.T),
        bound=bound,
        identified=identified,
        prior=used,
        iterations=steps,
        n_clusters=n_clusters,
        errors=errors,
    )


def bootstrap_ci95(
    comparisons: Comparisons,
    replicates: int,
    seed: int = 0,
    *,
    anchor_bot: int | None = None,
    solver: Solver = SOLVER,
) -> FloatArray:
    """Half the 2.5-97.5 percentile range of the anchored ratings over deal-bootstrap refits."""
    n = len(comparisons.bots)
    n_clusters = len(comparisons.clusters)
    key, points = _canonical(comparisons, n)
    # aggregate once per (deal, pair) so that each replicate is one weighted bincount
    cell, inverse = np.unique(comparisons.cluster * (n * n) + key, return_inverse=True)
    cell_games = _bincount(inverse, None, len(cell))
    cell_points = _bincount(inverse, points, len(cell))
    cell_deal, cell_pair = cell // (n * n), cell % (n * n)
    to_anchor = _anchor_matrix(n, anchor_bot) * ELO_PER_NAT
    rng = np.random.default_rng(seed)
    samples = np.empty((replicates, n))
    for b in range(replicates):
        weight = np.bincount(rng.integers(0, n_clusters, n_clusters), minlength=n_clusters)[cell_deal]
        totals = _totals(cell_pair, cell_points / cell_games, cell_games * weight, n)
        used = 0.0 if _separation(totals)[1].all() else solver.prior
        samples[b] = to_anchor @ _newton(totals, used, solver.max_iter, solver.tol)[0]
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    half: FloatArray = 0.5 * (high - low)
    return half


# ---------------------------------------------------------------------------- rate


class AnchorError(ValueError):
    """An ``--anchor`` that is not BOT=ELO or a number, or names a bot without games."""


def parse_anchor(anchor: str | None, bots: tuple[str, ...]) -> tuple[int | None, float]:
    """``None`` -> pool mean 1500; ``"1600"`` -> pool mean 1600; ``"BOT=ELO"`` -> BOT fixed at ELO."""
    if anchor is None:
        return None, DEFAULT_ELO
    name, sep, value = anchor.rpartition("=")
    try:
        elo = float(value)
    except ValueError:
        raise AnchorError(f"bad anchor {anchor!r}: expected BOT=ELO or a number") from None
    if not math.isfinite(elo):
        raise AnchorError(f"bad anchor {anchor!r}: the rating must be finite")
    if not sep:
        return None, elo
    if name not in bots:
        raise AnchorError(f"anchor bot {name!r} has no rated games")
    return bots.index(name), elo


def likelihood_of_superiority(diff: float, var: float) -> float:
    """Phi(diff / sqrt(var)): probability that a rating ``diff`` ahead is truly ahead."""
    if var <= 0.0:
        return 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
    return 0.5 * (1.0 + math.erf(diff / math.sqrt(2.0 * var)))


def rate(
    records: Iterable[ResultRecord] | Outcomes,
    mode: Mode = "fool",
    anchor: str | None = None,
    bootstrap: int = 0,
    seed: int = 0,
    *,
    solver: Solver = SOLVER,
) -> RatingTable:
    """Rate the bots of ``records``: ratings, error bars, bounds and LOS, in rank order."""
    if bootstrap < 0:
        raise ValueError("bootstrap must be a number of resamples >= 0")
    comp = pairwise_outcomes(records, mode)
    anchor_bot, anchor_elo = parse_anchor(anchor, comp.bots)
    result = fit(comp, anchor_bot=anchor_bot, anchor_elo=anchor_elo, solver=solver)
    if bootstrap and result.n_clusters >= 2:
        ci95 = bootstrap_ci95(comp, bootstrap, seed, anchor_bot=anchor_bot, solver=solver)
        errors = f"deal bootstrap, {bootstrap} resamples (seed {seed}), 2.5-97.5% half-width"
    else:  # a bootstrap over fewer than two deals would report a zero width
        ci95 = Z95 * result.sd
        errors = f"{result.errors}, 1.96 sd" if comp.n_games else "no games"
    anchored = "pool mean" if anchor_bot is None else comp.bots[anchor_bot]
    anchor_text = f"{anchored} = {anchor_elo:g}"
    return _table(comp, result, ci95, anchor_text, errors)


def _table(comp: Comparisons, result: Fit, ci95: FloatArray, anchor: str, errors: str) -> RatingTable:
    head_to_head = _head_to_head(comp, len(comp.bots))
    return rating_table(comp.bots, (comp.mode, comp.n_games), head_to_head, result, (ci95, anchor, errors))


def rating_table(bots: tuple[str, ...], games: tuple[Mode, int], head_to_head: tuple[FloatArray, FloatArray],
                 result: Fit, shown: tuple[FloatArray, str, str]) -> RatingTable:
    """The table of a fit of ``bots`` (sorted names): ``games``, the mode and number of games rated;
    ``head_to_head``, each bot's points and comparisons against each other (``[a, b]``: ``a``'s against ``b``);
    ``shown``, the error bars (``ci95``) and the footer's anchor and errors texts."""
    n = len(bots)
    ci95, anchor, errors = shown
    rank = sorted(range(n), key=lambda b: (-result.ratings[b], bots[b]))
    points, counts = head_to_head
    cov, sd = result.covariance, result.sd
    rows = []
    for pos, b in enumerate(rank):
        ok = bool(result.identified[b])
        los = None
        if pos + 1 < n and ok and result.identified[rank[pos + 1]]:
            c = rank[pos + 1]
            var = cov[b, b] + cov[c, c] - 2.0 * cov[b, c]
            los = likelihood_of_superiority(float(result.ratings[b] - result.ratings[c]), float(var))
        rows.append(BotRating(
            name=bots[b],
            elo=float(result.ratings[b]),
            ci95=float(ci95[b]) if ok else None,
            bound=result.bound[b],
            identified=ok,
            sd=float(sd[b]),
            los_next=los,
            points=float(points[b].sum()),
            comparisons=int(counts[b].sum()),
        ))
    idx = np.asarray(rank, dtype=np.int64)
    return RatingTable(
        bots=tuple(rows),
        mode=games[0],
        anchor=anchor,
        n_games=games[1],
        n_clusters=result.n_clusters,
        errors=errors,
        prior=result.prior,
        covariance=cov[np.ix_(idx, idx)],
        h2h_points=points[np.ix_(idx, idx)],
        h2h_comparisons=counts[np.ix_(idx, idx)],
    )


def _head_to_head(comp: Comparisons, n: int) -> tuple[FloatArray, FloatArray]:
    """``points[a, b]``: points of ``a`` against ``b``; ``counts[a, b]``: their comparisons."""
    key_ab, key_ba = comp.i * n + comp.j, comp.j * n + comp.i
    points = _bincount(key_ab, comp.score_i, n * n) + _bincount(key_ba, 1.0 - comp.score_i, n * n)
    counts = _bincount(key_ab, None, n * n) + _bincount(key_ba, None, n * n)
    return points.reshape(n, n), counts.reshape(n, n)
