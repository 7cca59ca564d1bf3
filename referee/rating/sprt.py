"""Sequential probability ratio test of NEW against BASE on duplicate deals: the statistics, as pure functions.

The unit of evidence is a *deal group*: one deal played in every seat rotation by arm NEW and again by arm
BASE (same seats, same opponents). Each group gives one score in [0, 1] from NEW's point of view, and the
test is over the sequence of group scores, never over single games, so the luck of the deal that both arms
share cancels out of it.

Group scores
------------
An arm's *score* in a set of games is the leaderboard's pairwise score of the arm's bot against the other
seats (:func:`arm_score`): its points over its comparisons, pooled over the games, under the rating mode
(``fool``: every non-fool beats each fool, co-fools draw, two non-fools are not compared, a drawn game is a
draw with everybody; ``order``: an earlier finisher beats a later one, a shared place is a draw).

* head to head (2 players, NEW against BASE): the deal is played in both seatings, so a group is two games
  and its score is NEW's arm score over them: the mean of NEW's two results in {0, 1/2, 1}, a pentanomial
  score in {0, 1/4, 1/2, 3/4, 1}. Both modes agree at two seats.
* against a field (any table size): NEW's arm plays the deal's rotations against the field, BASE's arm the
  same rotations in the same seats; the group score is ``1/2 + (score_new - score_base) / 2``
  (:func:`field_group`). In ``fool`` mode an arm has at least one comparison in every game; in ``order``
  mode exactly ``players - 1``.

Elo scale (the leaderboard's: logistic, 400 points for a factor of ten in the odds)
------------------------------------------------------------------------------------
``L(e) = 1 / (1 + 10 ** (-e / 400))``.

* head to head: the expected group score is the expected score per game, so ``s(E) = L(E)``, exact.
* field: the leaderboard expects a comparison of a bot rated ``r`` with a field bot ``f`` to score
  ``L(r - r_f)``. Treating the field as one rating (its comparison-weighted mean), the maximum-likelihood
  rating of an arm with pooled score ``S`` against the field is exactly ``r_f + Elo(S)``, ``Elo = L^-1``. So
  with BASE's score ``b`` against the field, NEW ``E`` points stronger is expected to score ``L(Elo(b) + E)``
  and the expected group score is ``s(E) = 1/2 + (L(Elo(b) + E) - b) / 2``. Approximations: the field is
  taken as one rating (a spread-out field shrinks the scale slightly, by Jensen); the mean of per-group
  pooled scores stands for the overall pooled score; and ``b``, a nuisance, is replaced by its estimate, the
  mean of BASE's group scores, which does not depend on NEW's strength. ``s(0) = 1/2`` exactly, whatever ``b``.
  ``order`` mode maps the same way: its comparisons are place against place, ``players - 1`` per game, and the
  leaderboard's ``order`` ratings are on the same logistic scale.

The test (generalized SPRT)
---------------------------
H0: mean group score ``s0 = s(E0)`` against H1: ``s1 = s(E1)``, over the empirical distribution of the
group scores. As in fishtest's pentanomial GSPRT (Michel Van den Bergh, official-stockfish/fishtest
``server/fishtest/stats/LLRcalc.py``, ``MLE_expected``/``secular``, and ``stats/sprt.py``), each hypothesis
gets the maximum-likelihood distribution on the observed values with the mean fixed: with observed
frequencies ``w_i`` at values ``a_i``, ``p_i = w_i / (1 + x (a_i - s))``, where the Lagrange multiplier ``x``
is the root of ``sum_i w_i (a_i - s) / (1 + x (a_i - s)) = 0`` in ``(-1 / (1 - s), 1 / s)``. The
log-likelihood ratio is ``LLR = sum over the groups of log(p1(g) / p0(g))``. So that a root exists the
support always holds 0 and 1; an end value never observed gets the weight ``EPSILON`` groups there (fishtest
regularises its empty cells the same way) which enters the MLE only, not the sum. This is the exact
constrained-MLE LLR; fishtest's ``stats/sprt.py`` keeps the same Wald bounds but by default takes the LLR
from a mean-variance approximation (``LLR_drift_variance_alt2``), and no overshoot correction is made here.
cutechess (``projects/lib/src/sprt.cpp``) is the simple version on single games: win/draw/loss under a
BayesElo model whose draw rate is estimated from the sample. Here the values are any group scores in [0, 1],
so one formula serves the pentanomial pairs and the field groups.

Bounds are Wald's: ``lower = log(beta / (1 - alpha))``, ``upper = log((1 - beta) / alpha)``; H1 is accepted at
``LLR >= upper``, H0 at ``LLR <= lower``, and otherwise the test is truncated once ``max_games`` are played.
A decision is a function of the completed groups in schedule order only (:func:`sprt_state`), so a resumed
run reproduces it.

The Elo estimate is ``s^-1`` of the mean group score, its 95% interval ``s^-1`` of ``mean +- 1.96 se``
(``se`` the standard error of the mean of the group scores; for a field the uncertainty of ``b`` is left
out: it moves the scale, not the sign). When every group scored 1 the interval's low end is ``s^-1`` of
``0.025 ** (1 / n)`` (a score in [0, 1] of mean ``m`` is 1 with chance at most ``m``), and the mirror for 0.
Values without a finite Elo (a mean at 0 or 1) are ``None``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from referee.rating.bradley_terry import MODES, Z95, Mode

FloatArray = npt.NDArray[np.float64]
Decision = Literal["H0", "H1", "continue", "truncated"]

DECISIONS: tuple[Decision, ...] = ("H0", "H1", "continue", "truncated")
EPSILON = 1e-3  # virtual groups at an end value (0 or 1) never observed; fishtest uses the same
BASE_SCORE_MIN = 1e-3  # BASE's field score is kept in [min, 1 - min] so that Elo(b) stays finite
_MAX_STEPS = 200  # of the multiplier's root finder: Newton's steps take about ten, 200 halvings exhaust a float
_TOL = 1e-14
_STALL = 1e-6  # |f| / sqrt(-f') above which a tiny Newton step is a stall next to a pole, not a root


# ---------------------------------------------------------------------------- group scores


@dataclass(frozen=True)
class Placing:
    """One game as an arm saw it: every seat's place (1 = first out; tied seats share a place, the fools
    have the last one), whether the game was drawn (no fool), and the arm's seat."""

    places: tuple[int, ...]
    drawn: bool
    seat: int


@dataclass(frozen=True)
class FieldGroup:
    """A deal group against a field: the group score and each arm's score against the field."""

    score: float
    new: float
    base: float


def _arm_points(game: Placing, mode: Mode) -> tuple[float, int]:
    """The arm's points and comparisons against the other seats of one game."""
    places, me = game.places, game.seat
    if not 0 <= me < len(places):
        raise ValueError(f"seat {me} is not a seat of a {len(places)}-player game")
    if mode == "order":
        level = list(places)
    else:  # as ratings._seats: 1 for a fool and for everyone in a drawn game, else 0
        last = max(places)
        level = [int(game.drawn or place == last) for place in places]
    points, comparisons = 0.0, 0
    for other, theirs in enumerate(level):
        if other == me or (mode == "fool" and theirs == level[me] == 0):
            continue
        points += 0.5 + 0.5 * float(np.sign(theirs - level[me]))
        comparisons += 1
    return points, comparisons


def arm_score(games: Sequence[Placing], mode: Mode = "fool") -> float:
    """An arm's pooled pairwise score against the other seats of ``games``: points over comparisons."""
    if mode not in MODES:
        raise ValueError(f"unknown rating mode {mode!r}; expected one of {', '.join(MODES)}")
    totals = [_arm_points(game, mode) for game in games]
    comparisons = sum(c for _, c in totals)
    if not comparisons:
        raise ValueError("an arm needs at least one comparison to have a score")
    return sum(p for p, _ in totals) / comparisons


def head_to_head_score(games: Sequence[Placing], mode: Mode = "fool") -> float:
    """A 2-player group: NEW's games (NEW's seat in each) of one deal in both seatings; its arm score."""
    if len(games) != 2 or any(len(game.places) != 2 for game in games):
        raise ValueError("a head-to-head group is one deal played twice by two players, once in each seating")
    return arm_score(games, mode)


def field_group(new: Sequence[Placing], base: Sequence[Placing], mode: Mode = "fool") -> FieldGroup:
    """A group against a field: NEW's arm's games and BASE's arm's games of one deal, rotation by rotation."""
    if len(new) != len(base) or [g.seat for g in new] != [g.seat for g in base]:
        raise ValueError("both arms must play the same rotations in the same seats")
    score_new, score_base = arm_score(new, mode), arm_score(base, mode)
    return FieldGroup(0.5 + 0.5 * (score_new - score_base), score_new, score_base)


# ---------------------------------------------------------------------------- Elo scale


def expected_score(elo: float) -> float:
    """``L(elo)``: the leaderboard's expected score of a bot ``elo`` points stronger."""
    return 0.5 * (1.0 + math.tanh(elo * math.log(10.0) / 800.0))  # = 1 / (1 + 10 ** (-elo / 400)), no overflow


def elo_from_score(score: float) -> float | None:
    """``L^-1(score)``; ``None`` outside (0, 1), where no finite Elo difference gives that score."""
    if not 0.0 < score < 1.0:
        return None
    return -400.0 * math.log10(1.0 / score - 1.0)


def _clip_base(base: float) -> float:
    return min(max(base, BASE_SCORE_MIN), 1.0 - BASE_SCORE_MIN)


def group_expected_score(elo: float, base_score: float | None = None) -> float:
    """``s(elo)``: the expected group score when NEW is ``elo`` points stronger than BASE; head to head
    without ``base_score``, else against a field where BASE scores ``base_score``."""
    if base_score is None:
        return expected_score(elo)
    b = _clip_base(base_score)
    base_elo = elo_from_score(b)
    assert base_elo is not None
    return 0.5 + 0.5 * (expected_score(base_elo + elo) - b)


def elo_from_group_score(score: float, base_score: float | None = None) -> float | None:
    """``s^-1(score)``, the inverse of :func:`group_expected_score`; ``None`` where it is not finite."""
    if base_score is None:
        return elo_from_score(score)
    b = _clip_base(base_score)
    new_elo, base_elo = elo_from_score(b + 2.0 * (score - 0.5)), elo_from_score(b)
    return None if new_elo is None or base_elo is None else new_elo - base_elo


# ---------------------------------------------------------------------------- GSPRT


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"alpha and beta must be in (0, 1) with alpha + beta < 1, not {alpha:g} and {beta:g}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _support(values: FloatArray, counts: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Check a histogram's values (ascending, first 0, last 1) and give the end cells their EPSILON."""
    if values.ndim != 1 or len(values) < 2 or values[0] != 0.0 or values[-1] != 1.0 or np.any(np.diff(values) <= 0):
        raise ValueError("the values must ascend from 0 to 1")
    if counts.shape[-1] != len(values) or np.any(counts < 0):
        raise ValueError("counts must be >= 0, one per value")
    weights = counts.astype(np.float64, copy=True)
    for end in (0, -1):
        weights[..., end] = np.where(weights[..., end] > 0, weights[..., end], EPSILON)
    return values, weights


def lagrange_multiplier(values: FloatArray, counts: FloatArray, mean: FloatArray | float) -> FloatArray:
    """The multiplier ``x`` of the MLE with a fixed mean, per histogram (row of ``counts``).

    ``values`` ascend from 0 to 1; ``counts`` has one row per histogram (or is one histogram); ``mean``, in
    (0, 1), one per row or one for all. The secular function ``f(x)`` falls strictly on its bracket, so
    Newton steps that stay inside the shrinking bracket, and halvings where they would not, find its root.
    """
    a, weights = _support(np.asarray(values, dtype=np.float64), np.asarray(counts, dtype=np.float64))
    w = np.atleast_2d(weights)
    w = w / w.sum(axis=1, keepdims=True)
    s = np.broadcast_to(np.asarray(mean, dtype=np.float64), w.shape[:1])
    if np.any((s <= 0.0) | (s >= 1.0)):
        raise ValueError("the constrained mean must be strictly between 0 and 1")
    d = a[None, :] - s[:, None]
    lo, hi = -1.0 / (1.0 - s), 1.0 / s
    x = np.zeros_like(s)  # f(0) = observed mean - s
    todo = np.arange(len(s))  # rows not converged yet
    for _ in range(_MAX_STEPS):
        dt, xt = d[todo], x[todo]
        t = dt / (1.0 + xt[:, None] * dt)
        f, slope = np.sum(w[todo] * t, axis=1), -np.sum(w[todo] * t * t, axis=1)
        lo[todo] = np.where(f > 0.0, xt, lo[todo])
        hi[todo] = np.where(f > 0.0, hi[todo], xt)
        newton = xt - f / slope
        # Next to a pole f and its slope both explode and Newton's step shrinks to the distance from the pole,
        # which looks like convergence: a tiny step where f is not near 0 (on the scale of its slope; about
        # sqrt(weight) at a pole, 1e-10 or less at a root) halves the bracket instead. (A first Newton step from
        # 0 landed a rounding error inside the pole at x = -1/(1 - s) for counts [0, 33, 1, 3, 3] at s = 0.5.)
        stalled = (np.abs(newton - xt) <= _TOL * (1.0 + np.abs(xt))) & (np.abs(f) > _STALL * np.sqrt(-slope))
        # strictly inside: the bracket's first ends are poles of f; newton == x is convergence
        inside = (((newton > lo[todo]) & (newton < hi[todo])) | (newton == xt)) & ~stalled
        step = np.where(f == 0.0, xt, np.where(inside, newton, 0.5 * (lo[todo] + hi[todo])))
        x[todo] = step
        todo = todo[np.abs(step - xt) > _TOL * (1.0 + np.abs(xt))]
        if not len(todo):
            break
    out: FloatArray = np.reshape(x, np.shape(weights)[:-1])
    return out


def constrained_mle(values: FloatArray, counts: FloatArray, mean: FloatArray | float) -> FloatArray:
    """The maximum-likelihood distribution on ``values`` given ``counts`` with its mean fixed at ``mean``."""
    a, weights = _support(np.asarray(values, dtype=np.float64), np.asarray(counts, dtype=np.float64))
    x = lagrange_multiplier(a, counts, mean)
    w = weights / weights.sum(axis=-1, keepdims=True)
    p = w / (1.0 + np.asarray(x)[..., None] * (a - np.asarray(mean)[..., None]))
    out: FloatArray = p / p.sum(axis=-1, keepdims=True)  # the sum is 1 at the root, but for bisection dust
    return out


def llr(values: FloatArray, counts: FloatArray, s0: FloatArray | float, s1: FloatArray | float) -> FloatArray:
    """GSPRT log-likelihood ratio of mean ``s1`` against ``s0`` for each histogram (row of ``counts``)."""
    a = np.asarray(values, dtype=np.float64)
    n = np.asarray(counts, dtype=np.float64)
    s0_, s1_ = np.asarray(s0, dtype=np.float64), np.asarray(s1, dtype=np.float64)
    x0, x1 = lagrange_multiplier(a, n, s0_), lagrange_multiplier(a, n, s1_)
    # p1 / p0 = (1 + x0 (a - s0)) / (1 + x1 (a - s1)): the observed frequencies cancel
    ratio = np.log1p(x0[..., None] * (a - s0_[..., None])) - np.log1p(x1[..., None] * (a - s1_[..., None]))
    out: FloatArray = np.sum(np.where(n > 0, n * ratio, 0.0), axis=-1)
    return out


def decide(llr_value: float, lower: float, upper: float, games: int, max_games: int | None = None) -> Decision:
    """H1 at ``llr >= upper``, H0 at ``llr <= lower``, else truncated once ``max_games`` are played."""
    if llr_value >= upper:
        return "H1"
    if llr_value <= lower:
        return "H0"
    if max_games is not None and games >= max_games:
        return "truncated"
    return "continue"


# ---------------------------------------------------------------------------- state


@dataclass(frozen=True)
class SprtState:
    """The test after the completed groups so far (see the module docstring)."""

    groups: int
    games: int
    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    alpha: float
    beta: float
    score: float | None  # mean group score; None before the first group
    elo: float | None  # estimated Elo difference NEW - BASE; None when not finite (or no groups)
    elo_low: float | None  # 95% interval; None where it is unbounded
    elo_high: float | None
    decision: Decision


class ScoreTally:
    """Group scores as a histogram, kept as they come: a test's state costs the same after 10 groups or 10,000."""

    def __init__(self, scores: Iterable[float] = ()) -> None:
        self.counts: dict[float, int] = {}
        self.groups = 0
        for score in scores:
            self.add(score)

    def add(self, score: float) -> None:
        """Count one group score.  :raises ValueError: a score outside [0, 1]."""
        if not 0.0 <= score <= 1.0:  # also refuses NaN
            raise ValueError("group scores must lie in [0, 1]")
        self.counts[score] = self.counts.get(score, 0) + 1
        self.groups += 1

    def histogram(self) -> tuple[FloatArray, FloatArray]:
        """Ascending values from 0 to 1 (both ends always there, for the root to exist) and their counts."""
        counts = {0.0: 0, 1.0: 0, **self.counts}
        values = sorted(counts)
        return np.array(values, dtype=np.float64), np.array([counts[v] for v in values], dtype=np.float64)

    def mean_and_sd(self) -> tuple[float, float]:
        """The mean group score and the sample standard deviation (ddof 1); needs two groups for the latter."""
        values, counts = self.histogram()
        mean = float(np.dot(values, counts)) / self.groups
        sd = math.sqrt(float(np.dot(counts, (values - mean) ** 2)) / (self.groups - 1)) if self.groups > 1 else 0.0
        return mean, sd


@dataclass(frozen=True)
class Hypotheses:
    """H1 "NEW is at least ``elo1`` stronger" against H0 "at most ``elo0``", with the error rates ``alpha``
    (accepting H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds)."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05


def sprt_state(
    scores: Sequence[float] | ScoreTally,
    hypotheses: Hypotheses,
    *,
    base_score: float | None = None,
    games_per_group: int = 2,
    max_games: int | None = None,
) -> SprtState:
    """The SPRT of ``hypotheses`` ("NEW is >= ``elo1`` stronger" against "<= ``elo0``") over group ``scores`` in
    schedule order.

    Args:
        scores: completed group scores in [0, 1], NEW's point of view (or their :class:`ScoreTally`, which a
            running test keeps so that each new group costs the same).
        base_score: ``None`` for head-to-head groups; against a field, BASE's mean score against the field
            over the same groups (the mean of :attr:`FieldGroup.base`).
        games_per_group: games a group holds (2 head to head; 2 x rotations against a field), for
            ``games`` and the ``max_games`` truncation.
    :raises ValueError: ``elo0 >= elo1``, bad ``alpha``/``beta``, or a score outside [0, 1].
    """
    elo0, elo1, alpha, beta = hypotheses.elo0, hypotheses.elo1, hypotheses.alpha, hypotheses.beta
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, not {elo0:g} >= {elo1:g}")
    if games_per_group < 1 or (max_games is not None and max_games < 1):
        raise ValueError("games_per_group and max_games must be positive")
    lower, upper = bounds(alpha, beta)
    tally = scores if isinstance(scores, ScoreTally) else ScoreTally(scores)
    s0, s1 = group_expected_score(elo0, base_score), group_expected_score(elo1, base_score)
    value = float(llr(*tally.histogram(), s0, s1)) if tally.groups else 0.0
    games = tally.groups * games_per_group
    mean, low, high = _estimate(tally, base_score)
    return SprtState(
        groups=tally.groups, games=games, llr=value, lower=lower, upper=upper, elo0=elo0, elo1=elo1, alpha=alpha,
        beta=beta, score=mean, elo=None if mean is None else elo_from_group_score(mean, base_score),
        elo_low=low, elo_high=high, decision=decide(value, lower, upper, games, max_games),
    )


def _estimate(tally: ScoreTally, base_score: float | None) -> tuple[float | None, float | None, float | None]:
    """Mean group score and the 95% Elo interval from ``mean +- 1.96 se`` (None without two groups)."""
    if not tally.groups:
        return None, None, None
    mean, sd = tally.mean_and_sd()
    if mean in (0.0, 1.0):
        # every group at one end, where mean +- 1.96 se has no width: a score in [0, 1] with mean m is 1 with
        # chance at most m, so n ones in a row put m at least 0.025 ** (1 / n) with 97.5% confidence
        edge = 0.025 ** (1.0 / tally.groups)
        if mean == 1.0:
            return mean, elo_from_group_score(edge, base_score), None
        return mean, None, elo_from_group_score(1.0 - edge, base_score)
    if tally.groups < 2:
        return mean, None, None
    half = Z95 * sd / math.sqrt(tally.groups)
    return mean, elo_from_group_score(mean - half, base_score), elo_from_group_score(mean + half, base_score)
