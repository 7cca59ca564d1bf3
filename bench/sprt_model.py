"""Simulated deal groups of known strength difference, and the SPRT run over many of them at once.

Shared by tests/test_sprt.py (small, seeded) and bench/bench_sprt.py (large). Two models of a deal's luck,
each shared by the two arms of a group when the design is paired and drawn afresh for every game when not:

* head to head: NEW at seat 0 of a deal scores ``p + u`` in expectation, at seat 1 ``p - u``, the seat's
  luck ``u ~ U(-luck, luck)``; a game is drawn with probability ``draw``, else won or lost. The expected score
  per game is exactly ``p``, so with ``p = L(E)`` NEW is exactly ``E`` Elo stronger on the leaderboard's scale.
  Paired, a group's two games share ``u``, which cancels from their mean.
* against a field of equal bots (strength 0): every seat of a deal has a luck ``N(0, luck^2)`` that adds to
  the strength of the bot sitting there; the fool is drawn with probability proportional to
  ``exp(-strength - luck)`` (so a comparison of two seats, given that it happens, is a logistic one: the
  leaderboard's model), and a game is drawn (no fool) with probability ``draw``. Paired, both arms meet the
  same seat lucks in each rotation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.rating.sprt import Decision, decide, elo_from_group_score, group_expected_score, llr

FloatArray = npt.NDArray[np.float64]
NAT_PER_ELO = math.log(10.0) / 400.0


def head_to_head_groups(rng: np.random.Generator, runs: int, groups: int, p: float, *, luck: float = 0.3,
                        draw: float = 0.04, paired: bool = True) -> FloatArray:
    """Group scores ``(runs, groups)`` of a pair of games each: NEW's mean result in the two seatings."""
    if not (p - luck - draw / 2 >= 0.0 and p + luck + draw / 2 <= 1.0):
        raise ValueError("p +- luck must leave room for the draws")
    u = rng.uniform(-luck, luck, size=(runs, groups, 1 if paired else 2))
    expected = p + np.broadcast_to(u, (runs, groups, 2)) * np.array([1.0, -1.0])
    roll = rng.random((runs, groups, 2))
    result = np.where(roll < draw, 0.5, (roll - draw < expected - draw / 2).astype(np.float64))
    out: FloatArray = result.mean(axis=2)
    return out


def field_groups(rng: np.random.Generator, runs: int, groups: int, elo: float, *, players: int = 3,
                 base_elo: float = 0.0, luck: float = 1.0, draw: float = 0.02,
                 paired: bool = True) -> tuple[FloatArray, FloatArray]:
    """Group scores and BASE's field scores ``(runs, groups)``: ``players`` rotations per arm, fool mode."""
    strength = np.array([base_elo + elo, base_elo]) * NAT_PER_ELO  # NEW's arm, BASE's arm
    luck_shape = (runs, groups, 1 if paired else 2, players, players)  # rotation x seat
    seat_luck = np.broadcast_to(rng.normal(0.0, luck, size=luck_shape), (runs, groups, 2, players, players))
    arm_seat = np.eye(players, dtype=np.bool_)  # rotation r puts the arm at seat r
    theta = seat_luck + np.where(arm_seat, strength[:, None, None], 0.0)
    fool = _argmax_last(rng.gumbel(size=theta.shape) - theta)  # P(fool = seat) proportional to exp(-theta)
    drawn = rng.random(theta.shape[:-1]) < draw
    arm_fool = fool == np.arange(players)
    # fool mode, one fool: the arm beats it (1 point, 1 comparison) or loses to everyone (0, players - 1)
    points = np.where(drawn, (players - 1) / 2, np.where(arm_fool, 0.0, 1.0))
    comparisons = np.where(drawn | arm_fool, players - 1, 1)
    score = points.sum(axis=-1) / comparisons.sum(axis=-1)  # (runs, groups, arm)
    return 0.5 + 0.5 * (score[..., 0] - score[..., 1]), score[..., 1]


def field_model_elo(leaderboard_elo: float, *, players: int = 3, groups: int = 50_000, seed: int = 0,
                    **model: Any) -> float:
    """The model's strength difference whose games put NEW ``leaderboard_elo`` (> 0) above BASE on the
    leaderboard's scale (the field taken as one rating, as the SPRT's mapping takes it).

    The seat luck of :func:`field_groups` is a logistic-normal mixture, flatter than the logistic it is drawn
    around, so a model difference shows up smaller on the leaderboard; a test of the SPRT's error rates at a
    leaderboard difference E1 must play the model at this value. Found by the secant method on the Elo that
    the mean group score maps to, with common random numbers (every try replays the groups of ``seed``), so
    that the function it solves is smooth.
    """
    if leaderboard_elo <= 0.0:
        raise ValueError("calibrates a positive difference")

    def miss(model_elo: float) -> float:
        scores, base = field_groups(np.random.default_rng(seed), 1, groups, model_elo, players=players, **model)
        elo = elo_from_group_score(float(scores.mean()), float(base.mean()))
        assert elo is not None, "a strength difference too large to calibrate"
        return elo - leaderboard_elo

    x0, x1 = leaderboard_elo, 1.3 * leaderboard_elo
    f0, f1 = miss(x0), miss(x1)
    for _ in range(10):
        if abs(f1) < 0.05 or f1 == f0:
            break
        x0, x1, f0 = x1, x1 - f1 * (x1 - x0) / (f1 - f0), f1
        f1 = miss(x1)
    return x1


def _argmax_last(z: FloatArray) -> npt.NDArray[np.int64]:
    """``np.argmax(z, axis=-1)`` for a short last axis, seat by seat (several times faster here)."""
    best, index = z[..., 0].copy(), np.zeros(z.shape[:-1], dtype=np.int64)
    for seat in range(1, z.shape[-1]):
        better = z[..., seat] > best
        index[better], best[better] = seat, z[..., seat][better]
    return index


Sampler = Callable[[int, int], tuple[FloatArray, FloatArray | None]]


def head_to_head_sampler(rng: np.random.Generator, p: float, **model: Any) -> Sampler:
    """:func:`head_to_head_groups` as a :data:`Sampler` (``model``: its keywords)."""
    return lambda n, k: (head_to_head_groups(rng, n, k, p, **model), None)


def field_sampler(rng: np.random.Generator, elo: float, **model: Any) -> Sampler:
    """:func:`field_groups` as a :data:`Sampler` (``model``: its keywords)."""
    return lambda n, k: field_groups(rng, n, k, elo, **model)


@dataclass(frozen=True)
class Runs:
    """How each simulated SPRT ended: decision and the groups it took."""

    decisions: tuple[Decision, ...]
    groups: npt.NDArray[np.int64]

    def rate(self, decision: Decision) -> float:
        return sum(d == decision for d in self.decisions) / len(self.decisions)


def run_sprt(sample: Sampler, runs: int, max_groups: int, elo0: float, elo1: float, lower: float,
             upper: float, *, block: int = 20) -> Runs:
    """Run ``runs`` SPRTs, deciding after every group with :func:`referee.rating.sprt.llr` and
    :func:`referee.rating.sprt.decide`; a run still undecided after ``max_groups`` is truncated.

    ``sample(n, k)`` gives the next ``k`` group scores of ``n`` runs still going, ``(n, k)``, and BASE's field
    scores (for the field design's plug-in mean so far) or ``None`` head to head. Groups are drawn ``block``
    at a time for the runs still going, so a run costs about the groups it takes.
    """
    values = np.array([0.0, 1.0])
    counts = np.zeros((runs, 2))
    base_sum = np.zeros(runs)
    active = np.arange(runs)
    decided: list[Decision] = ["truncated"] * runs
    taken = np.full(runs, max_groups, dtype=np.int64)
    for first in range(0, max_groups, block):
        scores, base = sample(len(active), min(block, max_groups - first))
        values, counts = _widen(values, counts, scores)
        column = np.searchsorted(values, scores)
        for k in range(scores.shape[1]):
            t = first + k + 1
            counts[active, column[:, k]] += 1.0  # row j of the block is run active[j]
            s0: FloatArray | float = group_expected_score(elo0)
            s1: FloatArray | float = group_expected_score(elo1)
            if base is not None:
                base_sum[active] += base[:, k]
                s0 = np.array([group_expected_score(elo0, b) for b in base_sum[active] / t])
                s1 = np.array([group_expected_score(elo1, b) for b in base_sum[active] / t])
            value = llr(values, counts[active], s0, s1)
            keep = []
            for j, run in enumerate(active.tolist()):
                decision = decide(float(value[j]), lower, upper, t)
                if decision == "continue":
                    keep.append(j)
                else:
                    decided[run], taken[run] = decision, t
            active, column = active[keep], column[keep]
            base = None if base is None else base[keep]
            if not len(active):
                return Runs(tuple(decided), taken)
    return Runs(tuple(decided), taken)


def _widen(values: FloatArray, counts: FloatArray, scores: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Add the new values of ``scores`` to the ascending support, moving the count columns along."""
    wider = np.union1d(values, scores)
    if len(wider) == len(values):
        return values, counts
    moved = np.zeros((len(counts), len(wider)))
    moved[:, np.searchsorted(wider, values)] = counts
    return wider, moved
