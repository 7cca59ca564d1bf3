"""SPRT statistics: group scores, the Elo mapping, the GSPRT against hand-derived values, its properties,
and simulations of known strength difference (error rates, paired against unpaired)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bench.sprt_model import (
    field_groups,
    field_model_elo,
    field_sampler,
    head_to_head_groups,
    head_to_head_sampler,
    run_sprt,
)
from protocol.records import ResultRecord
from referee.rating.bradley_terry import pairwise_outcomes
from referee.rating.sprt import (
    Hypotheses,
    Placing,
    ScoreTally,
    arm_score,
    bounds,
    constrained_mle,
    decide,
    elo_from_group_score,
    elo_from_score,
    expected_score,
    field_group,
    group_expected_score,
    head_to_head_score,
    llr,
    sprt_state,
)

PENTANOMIAL = np.array([0.0, 0.25, 0.5, 0.75, 1.0])

# ---------------------------------------------------------------------------- group scores


def test_head_to_head_group_is_the_mean_of_news_two_results() -> None:
    won_at_seat_0 = Placing(places=(1, 2), drawn=False, seat=0)
    drawn_at_seat_1 = Placing(places=(1, 1), drawn=True, seat=1)
    lost_at_seat_1 = Placing(places=(1, 2), drawn=False, seat=1)
    assert head_to_head_score([won_at_seat_0, drawn_at_seat_1]) == 0.75
    assert head_to_head_score([won_at_seat_0, lost_at_seat_1]) == 0.5
    assert head_to_head_score([won_at_seat_0, lost_at_seat_1], "order") == 0.5
    with pytest.raises(ValueError, match="head-to-head"):
        head_to_head_score([won_at_seat_0])


def test_field_group_pools_each_arms_fool_mode_points_over_its_comparisons() -> None:
    # NEW: not the fool (beats the 1 fool: 1/1), the fool (loses to 2: 0/2), a draw (1/2 + 1/2 of 2)
    new = [Placing((1, 2, 3), False, 0), Placing((1, 3, 2), False, 1), Placing((1, 1, 1), True, 2)]
    base = [Placing((1, 2, 3), False, 0), Placing((1, 2, 3), False, 1), Placing((2, 3, 1), False, 2)]
    group = field_group(new, base)
    assert group.new == pytest.approx(2 / 5)
    assert group.base == 1.0  # never the fool: 3 points from 3 comparisons
    assert group.score == pytest.approx(0.5 + (2 / 5 - 1.0) / 2)
    with pytest.raises(ValueError, match="same rotations"):
        field_group(new, base[::-1])


def test_arm_score_co_fools_draw_and_order_mode_compares_everyone() -> None:
    co_fool = Placing((1, 2, 3, 3), False, 2)  # loses to two non-fools, draws with the other fool
    assert arm_score([co_fool]) == pytest.approx(0.5 / 3)
    middle = Placing((1, 2, 3), False, 1)
    assert arm_score([middle]) == 1.0  # fool mode: beats the fool, not compared with the winner
    assert arm_score([middle], "order") == 0.5  # beats seat 2, loses to seat 0
    with pytest.raises(ValueError, match="unknown rating mode"):
        arm_score([middle], "elo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seat 3"):
        arm_score([Placing((1, 2, 3), False, 3)])


@st.composite
def games(draw: st.DrawFn) -> tuple[list[int], bool, int]:
    size = draw(st.integers(2, 5))
    rank = draw(st.lists(st.integers(0, size - 1), min_size=size, max_size=size))
    places = [1 + sum(r < mine for r in rank) for mine in rank]
    return places, draw(st.booleans()), draw(st.integers(0, size - 1))


@settings(max_examples=150, deadline=None)
@given(st.lists(games(), min_size=1, max_size=4), st.sampled_from(["fool", "order"]))
def test_arm_score_agrees_with_the_leaderboards_pairwise_outcomes(
        played: list[tuple[list[int], bool, int]], mode: str) -> None:
    records = []
    for k, (places, drawn, seat) in enumerate(played):
        names = [f"p{s}" if s != seat else "arm" for s in range(len(places))]
        order = [[n for n, p in zip(names, places, strict=True) if p == level] for level in sorted(set(places))]
        records.append(ResultRecord(game=f"g{k}", deal="d", variant="podkidnoy", players=names, order=order,
                                    fools=[] if drawn else order[-1], end="draw" if drawn else "fool"))
    comp = pairwise_outcomes(records, mode)  # type: ignore[arg-type]
    arm = comp.bots.index("arm")
    points = comp.score_i[comp.i == arm].sum() + (1.0 - comp.score_i[comp.j == arm]).sum()
    count = int((comp.i == arm).sum() + (comp.j == arm).sum())
    placings = [Placing(tuple(places), drawn, seat) for places, drawn, seat in played]
    assert arm_score(placings, mode) == pytest.approx(points / count)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- Elo scale


def test_elo_mapping_head_to_head() -> None:
    assert expected_score(0.0) == 0.5
    assert expected_score(400.0) == pytest.approx(10 / 11)
    assert expected_score(-400.0) == pytest.approx(1 / 11)
    assert expected_score(1e6) == 1.0  # no overflow
    assert elo_from_score(10 / 11) == pytest.approx(400.0)
    assert elo_from_score(0.0) is None and elo_from_score(1.0) is None
    assert group_expected_score(35.0) == expected_score(35.0)


def test_elo_mapping_against_a_field() -> None:
    # BASE level with the field (b = 1/2): s(E) = 1/2 + (L(E) - 1/2) / 2
    assert group_expected_score(400.0, 0.5) == pytest.approx(0.5 + (10 / 11 - 0.5) / 2)
    # BASE at +400 against the field (b = 10/11), NEW 400 stronger still: L(800) = 100/101
    assert group_expected_score(400.0, 10 / 11) == pytest.approx(0.5 + (100 / 101 - 10 / 11) / 2)
    for b in (0.1, 0.5, 0.8):
        assert group_expected_score(0.0, b) == pytest.approx(0.5)
        for elo in (-120.0, 7.0, 250.0):
            back = elo_from_group_score(group_expected_score(elo, b), b)
            assert back is not None and back == pytest.approx(elo)
    assert elo_from_group_score(0.99, 0.9) is None  # NEW would have to score 1.88 against the field


# ---------------------------------------------------------------------------- GSPRT by hand


def test_two_valued_groups_give_the_binomial_sprt() -> None:
    """Groups only 0 or 1: the constrained MLE puts mass s on 1, so LLR = k log(s1/s0) + (n-k) log((1-s1)/(1-s0))."""
    scores = [1.0] * 13 + [0.0] * 7
    s0, s1 = expected_score(-10.0), expected_score(30.0)
    expected = 13 * math.log(s1 / s0) + 7 * math.log((1 - s1) / (1 - s0))
    assert sprt_state(scores, Hypotheses(-10.0, 30.0)).llr == pytest.approx(expected, rel=1e-12)
    assert sprt_state([1.0] * 20, Hypotheses(0.0, 10.0)).llr == pytest.approx(20 * math.log(expected_score(10.0) / 0.5))


def test_llr_stays_finite_when_a_hypothesis_is_far_from_the_data() -> None:
    """The MLE under H0 then piles mass on an end cell and its multiplier sits next to a pole of f."""
    strong = [0.0] + [0.5] * 6 + [0.75] * 8 + [1.0] * 24  # once hit a pole when Newton landed on the bracket end
    with np.errstate(all="raise"):
        assert math.isfinite(sprt_state(strong, Hypotheses(0.0, 30.0)).llr)
        p = constrained_mle(PENTANOMIAL, np.array([1.0, 0.0, 6.0, 8.0, 24.0]), 0.5)
        assert p.sum() == pytest.approx(1.0) and float(p @ PENTANOMIAL) == pytest.approx(0.5)
        gain = 5000 * math.log(expected_score(30.0) / 0.5)
        assert sprt_state([1.0] * 5000, Hypotheses(0.0, 30.0)).llr == pytest.approx(gain)
        loss = 5000 * math.log(0.5 / expected_score(30.0))
        assert sprt_state([0.0] * 5000, Hypotheses(-30.0, 0.0)).llr == pytest.approx(loss)


def _max_loglik_three_point(counts: tuple[int, int, int], s: float) -> float:
    """max of sum n_i log p_i over p on {0, 1/2, 1} with mean s: one free parameter t = p(1), p(1/2) = 2(s - t),
    p(0) = 1 - 2s + t; the log-likelihood is concave in t, so a golden-section search finds the maximum."""
    def loglik(t: float) -> float:
        p = (1 - 2 * s + t, 2 * (s - t), t)
        return sum(n * math.log(q) for n, q in zip(counts, p, strict=True))
    lo, hi = max(0.0, 2 * s - 1) + 1e-15, s - 1e-15
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        lo, hi = (lo, b) if loglik(a) > loglik(b) else (a, hi)
    return loglik(0.5 * (lo + hi))


def test_llr_matches_a_brute_force_maximisation() -> None:
    counts = (3, 9, 5)  # groups scoring 0, 1/2, 1
    scores = [0.0] * 3 + [0.5] * 9 + [1.0] * 5
    elo0, elo1 = 0.0, 40.0
    expected = (_max_loglik_three_point(counts, expected_score(elo1))
                - _max_loglik_three_point(counts, expected_score(elo0)))
    assert sprt_state(scores, Hypotheses(elo0, elo1)).llr == pytest.approx(expected, rel=1e-9)


def test_constrained_mle_by_hand() -> None:
    """Counts (3, 9, 5) at (0, 1/2, 1) and mean 1/2: the secular equation 3/17 (-1/2) / (1 - x/2) +
    5/17 (1/2) / (1 + x/2) = 0 gives x = 1/2, so p = (3/17 / (3/4), 9/17, 5/17 / (5/4)) = (4, 9, 4) / 17."""
    p = constrained_mle(np.array([0.0, 0.5, 1.0]), np.array([3.0, 9.0, 5.0]), 0.5)
    assert p == pytest.approx(np.array([4.0, 9.0, 4.0]) / 17, abs=1e-12)
    expected = 3 * math.log((3 / 17) / (4 / 17)) + 5 * math.log((5 / 17) / (4 / 17))  # vs the free MLE
    values, counts = np.array([0.0, 0.5, 1.0]), np.array([3.0, 9.0, 5.0])
    free = (3 * 0 + 9 * 0.5 + 5 * 1) / 17  # the unconstrained MLE is the sample's own distribution
    assert float(llr(values, counts, 0.5, free)) == pytest.approx(expected, abs=1e-9)


def test_bounds_are_walds() -> None:
    assert bounds(0.05, 0.05) == pytest.approx((-math.log(19), math.log(19)))
    assert bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))
    for alpha, beta in ((0.0, 0.05), (0.05, 1.0), (0.6, 0.5)):
        with pytest.raises(ValueError, match="alpha and beta"):
            bounds(alpha, beta)


def test_decide_inclusive_bounds_and_truncation() -> None:
    assert decide(2.94, -2.94, 2.94, games=10) == "H1"
    assert decide(-2.94, -2.94, 2.94, games=10) == "H0"
    assert decide(0.0, -2.94, 2.94, games=10) == "continue"
    assert decide(0.0, -2.94, 2.94, games=10, max_games=10) == "truncated"
    assert decide(3.0, -2.94, 2.94, games=10, max_games=10) == "H1"  # a decision beats truncation
    assert decide(0.0, -2.94, 2.94, games=9, max_games=10) == "continue"


def test_state_elo_estimate_and_interval_by_hand() -> None:
    state = sprt_state([1.0, 0.5, 0.75, 0.25], Hypotheses(-5.0, 5.0), games_per_group=2)
    # mean 0.625; sd (ddof 1) sqrt(0.3125 / 3); se = sd / 2 = 0.161374; 1.96 se = 0.316294
    assert (state.groups, state.games, state.score) == (4, 8, 0.625)
    assert state.elo == pytest.approx(-400 * math.log10(1 / 0.625 - 1))  # 88.74
    half = 1.96 * math.sqrt(0.3125 / 3) / 2
    assert half == pytest.approx(0.316294, abs=1e-6)
    assert state.elo_low == pytest.approx(-400 * math.log10(1 / (0.625 - half) - 1))
    assert state.elo_high == pytest.approx(-400 * math.log10(1 / (0.625 + half) - 1))
    assert state.elo_low == pytest.approx(-140.05, abs=0.01) and state.elo_high == pytest.approx(482.0, abs=0.1)
    assert state.decision == "continue"


def test_state_edges_and_bad_input() -> None:
    empty = sprt_state([], Hypotheses(0.0, 5.0))
    assert (empty.llr, empty.decision, empty.elo, empty.elo_low) == (0.0, "continue", None, None)
    perfect = sprt_state([1.0] * 5, Hypotheses(0.0, 5.0))
    assert perfect.elo is None and perfect.elo_high is None  # no finite Elo for a perfect score
    # five ones in a row: the mean is at least 0.025 ** (1/5) = 0.4782 (97.5%), not certainly 1
    assert perfect.elo_low == pytest.approx(-400 * math.log10(1 / 0.025 ** 0.2 - 1))
    hopeless = sprt_state([0.0] * 5, Hypotheses(0.0, 5.0))
    assert hopeless.elo_low is None and hopeless.elo_high == pytest.approx(-perfect.elo_low)
    one_group = sprt_state([1.0], Hypotheses(0.0, 5.0))
    assert one_group.elo_low == pytest.approx(-400 * math.log10(1 / 0.025 - 1))
    assert sprt_state([0.5] * 3, Hypotheses(0.0, 5.0), games_per_group=6, max_games=18).decision == "truncated"
    with pytest.raises(ValueError, match="elo0 must be below"):
        sprt_state([0.5], Hypotheses(5.0, 5.0))
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        sprt_state([1.5], Hypotheses(0.0, 5.0))


def test_a_decision_is_the_first_prefix_that_crosses_a_bound() -> None:
    """What a resumed run recomputes: the state after n completed groups depends on those n alone, and the
    batched simulation (which adds a group at a time) stops where the prefixes first cross a bound."""
    rng = np.random.default_rng(7)
    scores = head_to_head_groups(rng, 6, 300, expected_score(60.0))
    lower, upper = bounds(0.1, 0.1)
    runs = run_sprt(lambda n, k: (scores, None), 6, 300, 0.0, 60.0, lower, upper, block=300)
    for row, decision, taken in zip(scores, runs.decisions, runs.groups, strict=True):
        states = (sprt_state(row[:n].tolist(), Hypotheses(0.0, 60.0, 0.1, 0.1)) for n in range(1, len(row) + 1))
        first = next((s for s in states if s.decision != "continue"), None)
        assert first is not None and (first.decision, first.groups) == (decision, taken)


# ---------------------------------------------------------------------------- properties


score_lists = st.lists(st.sampled_from(PENTANOMIAL.tolist()), min_size=1, max_size=40)
elo_pairs = st.tuples(st.floats(-200, 200), st.floats(1, 100)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=5, max_size=5), st.floats(0.01, 0.99))
@example([0, 33, 1, 3, 3], 0.5)  # Newton's first step from 0 landed a rounding error inside a pole
def test_constrained_mle_is_a_distribution_with_the_given_mean(counts: list[int], s: float) -> None:
    with np.errstate(all="raise"):
        p = constrained_mle(PENTANOMIAL, np.array(counts, dtype=np.float64), s)
    assert np.all(p >= 0.0) and p.sum() == pytest.approx(1.0)
    assert float(p @ PENTANOMIAL) == pytest.approx(s, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(score_lists, elo_pairs, st.randoms(use_true_random=False))
def test_llr_ignores_order_and_flips_with_the_hypotheses_or_the_mirror(
        scores: list[float], elos: tuple[float, float], rnd: random.Random) -> None:
    elo0, elo1 = elos
    value = sprt_state(scores, Hypotheses(elo0, elo1)).llr
    shuffled = list(scores)
    rnd.shuffle(shuffled)
    assert sprt_state(shuffled, Hypotheses(elo0, elo1)).llr == pytest.approx(value, abs=1e-9)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    values, counts = np.unique(np.concatenate(([0.0, 1.0], scores)), return_counts=True)
    counts = counts - np.isin(values, (0.0, 1.0))
    assert float(llr(values, counts.astype(np.float64), s1, s0)) == pytest.approx(-value, abs=1e-9)
    # the mirror image: NEW's losses are BASE's wins, L(-E) = 1 - L(E)
    mirrored = sprt_state([1.0 - g for g in scores], Hypotheses(-elo1, -elo0)).llr
    assert mirrored == pytest.approx(-value, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(score_lists, elo_pairs)
def test_llr_doubles_with_the_same_sample_twice(scores: list[float], elos: tuple[float, float]) -> None:
    sample = [0.0, 1.0, *scores]  # both ends observed, so no EPSILON cell changes weight
    once = sprt_state(sample, Hypotheses(*elos)).llr
    assert sprt_state(sample * 2, Hypotheses(*elos)).llr == pytest.approx(2 * once, rel=1e-9, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(score_lists, st.sampled_from(PENTANOMIAL.tolist()), st.sampled_from(PENTANOMIAL.tolist()))
def test_the_elo_interval_holds_the_estimate(scores: list[float], a: float, b: float) -> None:
    state = sprt_state([a, b, *scores], Hypotheses(0.0, 5.0))
    if state.elo is not None:
        assert state.elo_low is None or state.elo_low <= state.elo
        assert state.elo_high is None or state.elo <= state.elo_high


# ---------------------------------------------------------------------------- simulation


def _at_most(rate: float, nominal: float, runs: int) -> bool:
    """``rate`` within three binomial standard errors (of ``runs`` runs) of ``nominal`` or below it."""
    return rate <= nominal + 3.0 * math.sqrt(nominal * (1.0 - nominal) / runs)


def test_error_rates_head_to_head_within_alpha_and_beta() -> None:
    runs, alpha, beta, elo0, elo1 = 500, 0.1, 0.1, 0.0, 60.0
    lower, upper = bounds(alpha, beta)
    rng = np.random.default_rng(15)
    at_h0 = run_sprt(head_to_head_sampler(rng, expected_score(elo0)), runs, 600, elo0, elo1, lower, upper)
    at_h1 = run_sprt(head_to_head_sampler(rng, expected_score(elo1)), runs, 600, elo0, elo1, lower, upper)
    assert at_h0.rate("truncated") + at_h1.rate("truncated") <= 0.01
    assert _at_most(at_h0.rate("H1"), alpha, runs), at_h0.rate("H1")  # type I
    assert _at_most(at_h1.rate("H0"), beta, runs), at_h1.rate("H0")  # type II
    assert at_h0.rate("H0") >= 0.8 and at_h1.rate("H1") >= 0.8  # and it does decide, the right way


def test_type_one_error_against_a_field_when_new_is_base() -> None:
    """With NEW = BASE the expected group score is 1/2 exactly, whatever the field, so E0 = 0 is exact."""
    runs, alpha = 400, 0.1
    lower, upper = bounds(alpha, 0.1)
    sample = field_sampler(np.random.default_rng(16), 0.0, players=3)
    at_h0 = run_sprt(sample, runs, 500, 0.0, 60.0, lower, upper)
    assert at_h0.rate("truncated") <= 0.02
    assert _at_most(at_h0.rate("H1"), alpha, runs), at_h0.rate("H1")
    assert at_h0.rate("H0") >= 0.8


def test_type_two_error_against_a_field_at_the_leaderboards_difference() -> None:
    """NEW E1 stronger on the leaderboard's scale (the model played at the strength that shows as E1 there):
    the test accepts H0 at most beta of the time."""
    runs, beta, elo1 = 400, 0.1, 60.0
    lower, upper = bounds(0.1, beta)
    model_elo = field_model_elo(elo1, players=3, groups=20_000, seed=18)
    assert model_elo > elo1 + 5  # the model's luck flattens its scale: the calibration matters
    at_h1 = run_sprt(field_sampler(np.random.default_rng(19), model_elo, players=3), runs, 500, 0.0, elo1,
                     lower, upper)
    assert at_h1.rate("truncated") <= 0.02
    assert _at_most(at_h1.rate("H0"), beta, runs), at_h1.rate("H0")
    assert at_h1.rate("H1") >= 0.8


def test_pairing_lowers_the_group_variance_and_the_games_to_a_decision() -> None:
    """The seat's luck u ~ U(-c, c) cancels from a pair's mean: Var(paired) / Var(unpaired) =
    1 - E[u^2] / (p (1 - p) - draw / 4), with E[u^2] = c^2 / 3; fewer groups then reach a decision."""
    p, c, d = expected_score(60.0), 0.38, 0.04
    rng = np.random.default_rng(17)
    paired = head_to_head_groups(rng, 200, 250, p, luck=c, draw=d)
    unpaired = head_to_head_groups(rng, 200, 250, p, luck=c, draw=d, paired=False)
    ratio = paired.var() / unpaired.var()
    assert ratio == pytest.approx(1 - (c * c / 3) / (p * (1 - p) - d / 4), abs=0.02)  # 0.79
    lower, upper = bounds(0.1, 0.1)
    asn = [run_sprt(head_to_head_sampler(rng, p, luck=c, draw=d, paired=pairing), 400, 800, 0.0, 60.0,
                    lower, upper).groups.mean() for pairing in (True, False)]
    asn_paired, asn_unpaired = asn
    assert asn_paired < 0.9 * asn_unpaired, (asn_paired, asn_unpaired)
    field_paired, _ = field_groups(rng, 50, 100, 60.0)
    field_unpaired, _ = field_groups(rng, 50, 100, 60.0, paired=False)
    assert field_paired.var() < 0.9 * field_unpaired.var()


def test_a_tally_kept_group_by_group_gives_the_state_of_its_scores() -> None:
    rng = np.random.default_rng(11)
    scores = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=300, p=[0.1, 0.2, 0.3, 0.25, 0.15]).tolist()
    tally = ScoreTally()
    for n, score in enumerate(scores, 1):
        tally.add(score)
        if n in (1, 2, 50, 300):
            values, counts = np.unique(np.concatenate(([0.0, 1.0], scores[:n])), return_counts=True)
            counts[[0, -1]] -= 1  # the ends were added only to be in the support
            kept = sprt_state(tally, Hypotheses(-10.0, 10.0))
            assert kept.groups == n and kept.games == 2 * n
            assert kept.llr == pytest.approx(float(llr(values, counts, expected_score(-10.0), expected_score(10.0))))
    mean, sd = tally.mean_and_sd()
    assert mean == pytest.approx(float(np.mean(scores))) and sd == pytest.approx(float(np.std(scores, ddof=1)))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        tally.add(float("nan"))
