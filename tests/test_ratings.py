"""Bradley-Terry ratings: modes, the fit, error bars, bounds, bootstrap, and a statsmodels cross-check."""

from __future__ import annotations

import itertools
import math
import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.records import ResultRecord
from referee.rating import bradley_terry as ratings
from referee.rating.bradley_terry import (
    ELO_PER_NAT,
    Comparisons,
    ConvergenceError,
    Solver,
    fit,
    likelihood_of_superiority,
    pairwise_outcomes,
    parse_anchor,
    rate,
)


def record(game: str, deal: str, order: list[list[str]], fools: list[str] | None = None,
           players: list[str] | None = None) -> ResultRecord:
    """A result record; by default the fools are the last place group (none if it is the only one)."""
    if fools is None:
        fools = list(order[-1]) if len(order) > 1 else []
    seated = players if players is not None else [p for group in order for p in group]
    return ResultRecord(game=game, deal=deal, variant="podkidnoy", players=seated, order=order,
                        fools=fools, end="fool" if fools else "draw")


def duel(a: str, b: str, wins: int, draws: int, losses: int, *, deal_size: int = 1) -> list[ResultRecord]:
    """Two-player games of ``a`` against ``b``; ``deal_size`` consecutive games share a deal key."""
    outcomes = [([[a], [b]], [b])] * wins + [([[a, b]], [])] * draws + [([[b], [a]], [a])] * losses
    return [record(f"{a}{b}-{k}", f"{a}{b}-deal-{k // deal_size}", order, fools)
            for k, (order, fools) in enumerate(outcomes)]


def as_dict(table: ratings.RatingTable) -> dict[str, ratings.BotRating]:
    return {b.name: b for b in table.bots}


def simulate(true: dict[str, float], n_deals: int, seed: int, *, per_game: int = 4, rotations: int = 4,
             draw_rate: float = 0.05, co_fool_rate: float = 0.05) -> list[ResultRecord]:
    """Plackett-Luce finishing orders from Elo strengths, with a per-seat luck shared within a deal.

    The last player is the fool; some games end as a draw (no fool) and some with two co-fools.
    """
    rng = random.Random(seed)
    names = sorted(true)
    records = []
    for d in range(n_deals):
        seated = rng.sample(names, per_game)
        luck = [rng.gauss(0.0, 150.0) for _ in range(per_game)]
        for rot in range(rotations):
            players = seated[rot:] + seated[:rot]
            weight = {p: 10 ** ((true[p] + luck[s]) / 400) for s, p in enumerate(players)}
            finish: list[str] = []
            left = list(players)
            while left:
                pick = rng.choices(left, weights=[weight[p] for p in left])[0]
                finish.append(pick)
                left.remove(pick)
            order: list[list[str]] = [[p] for p in finish[:-2]]
            roll = rng.random()
            if roll < draw_rate:
                order.append(finish[-2:])
                fools: list[str] = []
            elif roll < draw_rate + co_fool_rate:
                order.append(finish[-2:])
                fools = finish[-2:]
            else:
                order += [[finish[-2]], [finish[-1]]]
                fools = [finish[-1]]
            records.append(record(f"g{d}-{rot}", f"deal{d}", order, fools, players=players))
    return records


TRUE = {"ann": 1700.0, "bob": 1600.0, "cat": 1500.0, "dan": 1400.0, "eve": 1300.0}


@pytest.fixture(scope="module")
def sim() -> list[ResultRecord]:
    return simulate(TRUE, 600, seed=7)


# ---------------------------------------------------------------------------- comparisons


def comparisons_set(comp: Comparisons) -> set[tuple[str, str, float]]:
    """Comparisons as (winner-or-first, other, score) with names, orientation-normalised."""
    out = set()
    for i, j, s in zip(comp.i.tolist(), comp.j.tolist(), comp.score_i.tolist(), strict=True):
        a, b = comp.bots[i], comp.bots[j]
        if s < 0.5 or (s == 0.5 and a > b):
            a, b, s = b, a, 1.0 - s
        out.add((a, b, s))
    return out


def test_fool_mode_compares_non_fools_with_fools_only() -> None:
    comp = pairwise_outcomes([record("g", "d", [["a"], ["b", "c"], ["d"]], ["d"])], "fool")
    assert comparisons_set(comp) == {("a", "d", 1.0), ("b", "d", 1.0), ("c", "d", 1.0)}
    assert len(comp.i) == 3


def test_order_mode_compares_every_pair_by_place() -> None:
    comp = pairwise_outcomes([record("g", "d", [["a"], ["b", "c"], ["d"]], ["d"])], "order")
    assert comparisons_set(comp) == {
        ("a", "b", 1.0), ("a", "c", 1.0), ("a", "d", 1.0),
        ("b", "c", 0.5), ("b", "d", 1.0), ("c", "d", 1.0),
    }
    assert len(comp.i) == 6


def test_fool_mode_co_fools_draw_and_drawn_game_is_all_draws() -> None:
    co = pairwise_outcomes([record("g", "d", [["a"], ["b"], ["c", "d"]], ["c", "d"])], "fool")
    assert comparisons_set(co) == {
        ("a", "c", 1.0), ("a", "d", 1.0), ("b", "c", 1.0), ("b", "d", 1.0), ("c", "d", 0.5),
    }
    drawn = pairwise_outcomes([record("g", "d", [["a"], ["b"], ["c", "d"]], [])], "fool")
    pairs = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert comparisons_set(drawn) == {(a, b, 0.5) for a, b in pairs}


def test_comparisons_carry_deal_clusters_and_game_count() -> None:
    recs = [record("g1", "x", [["a"], ["b"]]), record("g2", "y", [["b"], ["a"]]),
            record("g3", "x", [["a"], ["b"]])]
    comp = pairwise_outcomes(recs)
    assert comp.n_games == 3
    assert comp.clusters == ("x", "y")
    assert comp.cluster.tolist() == [0, 1, 0]


def test_bad_records_are_rejected() -> None:
    with pytest.raises(ValueError, match="mode"):
        pairwise_outcomes([], "elo")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more than once"):
        pairwise_outcomes([record("g", "d", [["a"], ["a"]])], "fool")
    with pytest.raises(ValueError, match="not one of the players"):
        pairwise_outcomes([record("g", "d", [["a"], ["b"]], ["z"])], "fool")
    with pytest.raises(ValueError, match="every player"):
        pairwise_outcomes([record("g", "d", [["a"]], [], players=["a", "b"])], "order")


# ---------------------------------------------------------------------------- fit


@pytest.mark.parametrize(("wins", "draws", "losses"), [(300, 0, 100), (250, 100, 50), (30, 0, 370)])
def test_two_players_match_the_analytic_difference(wins: int, draws: int, losses: int) -> None:
    table = as_dict(rate(duel("A", "B", wins, draws, losses)))
    s = (wins + draws / 2) / (wins + draws + losses)
    assert table["A"].elo - table["B"].elo == pytest.approx(400 * math.log10(s / (1 - s)), abs=1e-7)
    assert table["A"].elo + table["B"].elo == pytest.approx(3000.0, abs=1e-9)
    assert table["A"].identified and table["A"].bound is None


def test_two_players_sandwich_matches_the_clustered_binomial_formula() -> None:
    # deals of 4 identical games: the cluster-robust variance of the logit is C/(C-1) * sum(g_c^2) / I^2
    recs = duel("A", "B", 240, 0, 160, deal_size=4)
    table = as_dict(rate(recs))
    s, n, c = 0.6, 400, 100
    info = n * s * (1 - s)
    meat = 60 * (4 * (1 - s)) ** 2 + 40 * (4 * s) ** 2
    var_diff = c / (c - 1) * meat / info**2 * ELO_PER_NAT**2
    # each rating relative to the pool mean is +-diff/2
    assert table["A"].sd == pytest.approx(math.sqrt(var_diff) / 2, rel=1e-9)
    assert table["A"].ci95 == pytest.approx(1.96 * table["A"].sd, rel=1e-12)


def test_fit_is_independent_of_game_order(sim: list[ResultRecord]) -> None:
    shuffled = list(sim)
    random.Random(3).shuffle(shuffled)
    a, b = as_dict(rate(sim)), as_dict(rate(shuffled))
    for name in TRUE:
        assert b[name].elo == pytest.approx(a[name].elo, abs=1e-8)
        assert b[name].ci95 == pytest.approx(a[name].ci95, rel=1e-8)


def test_fit_is_independent_of_bot_names(sim: list[ResultRecord]) -> None:
    rename = {"ann": "zed", "bob": "yan", "cat": "xia", "dan": "wes", "eve": "val"}  # reverses sort order

    def renamed(rec: ResultRecord) -> ResultRecord:
        return record(rec.game, rec.deal, [[rename[p] for p in g] for g in rec.order],
                      [rename[p] for p in rec.fools], players=[rename[p] for p in rec.players])

    a, b = as_dict(rate(sim)), as_dict(rate([renamed(r) for r in sim]))
    for old, new in rename.items():
        assert b[new].elo == pytest.approx(a[old].elo, abs=1e-8)
        assert b[new].ci95 == pytest.approx(a[old].ci95, rel=1e-8)
        assert b[new].los_next == pytest.approx(a[old].los_next, abs=1e-10)


@pytest.mark.parametrize("mode", ["fool", "order"])
def test_expected_score_equals_observed_score_at_the_optimum(sim: list[ResultRecord], mode: str) -> None:
    comp = pairwise_outcomes(sim, mode)  # type: ignore[arg-type]
    result = fit(comp)
    d = (result.ratings[comp.i] - result.ratings[comp.j]) / ELO_PER_NAT
    expected_i = 1 / (1 + np.exp(-d))
    n = len(comp.bots)
    observed = np.bincount(comp.i, comp.score_i, n) + np.bincount(comp.j, 1 - comp.score_i, n)
    expected = np.bincount(comp.i, expected_i, n) + np.bincount(comp.j, 1 - expected_i, n)
    np.testing.assert_allclose(expected, observed, rtol=0, atol=1e-8)
    assert result.prior == 0.0 and result.identified.all()


def test_ratings_recover_the_simulated_truth(sim: list[ResultRecord]) -> None:
    # fool-mode pairwise scores are not exactly Bradley-Terry, so only the ranking and rough
    # spacing are checked here; exactness is checked against statsmodels below
    table = rate(sim, mode="order")
    assert [b.name for b in table.bots] == ["ann", "bob", "cat", "dan", "eve"]
    elo = as_dict(table)
    assert 250 < elo["ann"].elo - elo["eve"].elo < 550


def test_pool_mean_anchor_and_bot_anchor(sim: list[ResultRecord]) -> None:
    pool = as_dict(rate(sim))
    assert sum(b.elo for b in pool.values()) / len(pool) == pytest.approx(1500.0, abs=1e-9)
    fixed = as_dict(rate(sim, anchor="cat=2000"))
    assert fixed["cat"].elo == pytest.approx(2000.0, abs=1e-9)
    assert fixed["cat"].ci95 == pytest.approx(0.0, abs=1e-9)
    for name in TRUE:
        assert fixed[name].elo - fixed["cat"].elo == pytest.approx(pool[name].elo - pool["cat"].elo, abs=1e-8)
    shifted = as_dict(rate(sim, anchor="1600"))
    assert shifted["ann"].elo == pytest.approx(pool["ann"].elo + 100, abs=1e-8)


def test_parse_anchor() -> None:
    bots = ("a=b", "c")
    assert parse_anchor(None, bots) == (None, 1500.0)
    assert parse_anchor("a=b=1234.5", bots) == (0, 1234.5)  # the last '=' splits
    assert parse_anchor("1700", bots) == (None, 1700.0)
    with pytest.raises(ValueError, match="no rated games"):
        parse_anchor("zz=1500", bots)
    with pytest.raises(ValueError, match="BOT=ELO"):
        parse_anchor("c=high", bots)
    with pytest.raises(ValueError, match="finite"):
        parse_anchor("c=nan", bots)


def test_los_uses_the_covariance_of_neighbours(sim: list[ResultRecord]) -> None:
    table = rate(sim)
    cov = table.covariance
    for k in range(len(table.bots) - 1):
        a, b = table.bots[k], table.bots[k + 1]
        z = (a.elo - b.elo) / math.sqrt(cov[k, k] + cov[k + 1, k + 1] - 2 * cov[k, k + 1])
        assert a.los_next is not None
        assert a.los_next == pytest.approx(0.5 * (1 + math.erf(z / math.sqrt(2))), abs=1e-12)
        assert 0.5 <= a.los_next <= 1.0
    assert table.bots[-1].los_next is None
    assert likelihood_of_superiority(10.0, 0.0) == 1.0
    assert likelihood_of_superiority(0.0, 0.0) == 0.5


def test_non_convergence_raises_a_clear_error(sim: list[ResultRecord]) -> None:
    with pytest.raises(ConvergenceError, match="did not converge in 1 Newton steps"):
        rate(sim, solver=Solver(max_iter=1))
    assert issubclass(ConvergenceError, RuntimeError)


def test_chunked_sandwich_equals_the_direct_one(
    sim: list[ResultRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    comp = pairwise_outcomes(sim)
    direct = fit(comp).covariance
    monkeypatch.setattr(ratings, "_MEAT_CHUNK", 37)  # blocks of 7 deals (5 bots)
    np.testing.assert_allclose(fit(comp).covariance, direct, rtol=1e-10, atol=1e-10)


def test_a_single_deal_falls_back_to_model_based_errors() -> None:
    recs = [record(f"g{k}", "one", [["A"], ["B"]] if k % 3 else [["B"], ["A"]]) for k in range(30)]
    for table in (rate(recs), rate(recs, bootstrap=10)):
        assert table.errors == "model-based (fewer than 2 deals), 1.96 sd"
        a = as_dict(table)["A"]
        # inverse information of the difference is 1 / (n p (1 - p)); each rating carries half of it
        assert a.sd == pytest.approx(ELO_PER_NAT * math.sqrt(1 / (30 * 2 / 9)) / 2, rel=1e-9)


def test_no_records_rate_to_an_empty_table() -> None:
    table = rate([])
    assert table.bots == () and table.n_games == 0 and table.errors == "no games"


# ---------------------------------------------------------------------------- separation and bounds


def finite_table(table: ratings.RatingTable) -> None:
    for b in table.bots:
        assert math.isfinite(b.elo) and math.isfinite(b.sd)
        assert b.ci95 is None or math.isfinite(b.ci95)
        assert b.los_next is None or 0.0 <= b.los_next <= 1.0
    assert np.isfinite(table.covariance).all()


def strict_rate(records: list[ResultRecord], **kw: object) -> ratings.RatingTable:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return rate(records, **kw)  # type: ignore[arg-type]


def test_a_bot_that_never_loses_is_a_lower_bound(sim: list[ResultRecord]) -> None:
    champion = [record(f"c{k}", f"cd{k}", [["champ"], ["ann", "bob"][k % 2 : k % 2 + 1]]) for k in range(40)]
    table = strict_rate(sim + champion)
    finite_table(table)
    top = table.bots[0]
    assert (top.name, top.bound, top.identified, top.ci95) == ("champ", "lower", False, None)
    assert top.los_next is None
    assert table.prior == 1.0
    others = list(table.bots[1:])
    assert all(b.identified and b.bound is None and b.ci95 is not None for b in others)
    # the rest stays ranked and almost where the plain MLE puts it
    plain = as_dict(rate(sim))
    assert [b.name for b in others] == [b.name for b in rate(sim).bots]
    gaps = [a.elo - b.elo for a, b in itertools.pairwise(others)]
    plain_gaps = [plain[a.name].elo - plain[b.name].elo for a, b in itertools.pairwise(others)]
    np.testing.assert_allclose(gaps, plain_gaps, atol=5.0)


def test_a_bot_that_never_scores_is_an_upper_bound(sim: list[ResultRecord]) -> None:
    loser = [record(f"l{k}", f"ld{k}", [["cat"], ["dan"], ["mug"]]) for k in range(25)]
    table = strict_rate(sim + loser)
    finite_table(table)
    last = table.bots[-1]
    assert (last.name, last.bound, last.identified, last.ci95) == ("mug", "upper", False, None)
    assert table.bots[-2].los_next is None


def test_perfect_two_player_record_gives_two_bounds() -> None:
    table = strict_rate(duel("A", "B", 50, 0, 0))
    finite_table(table)
    a, b = as_dict(table)["A"], as_dict(table)["B"]
    assert (a.bound, b.bound) == ("lower", "upper")
    assert a.elo > 1500 > b.elo
    assert a.elo + b.elo == pytest.approx(3000.0, abs=1e-9)
    # with one virtual draw each against the pool mean, A = +t and B = -t solve
    # n * (1 - F(2t)) = (F(t) - 1/2), F the logistic function: B's expected points are ~1/2
    for n in (50, 500):
        top = as_dict(strict_rate(duel("A", "B", n, 0, 0)))["A"]
        lo, hi = 0.0, 50.0
        for _ in range(200):
            t = (lo + hi) / 2
            b_points = n * (1 - 1 / (1 + math.exp(-2 * t)))
            lo, hi = (t, hi) if b_points > 1 / (1 + math.exp(-t)) - 0.5 else (lo, t)
        assert top.elo - 1500 == pytest.approx(t * ELO_PER_NAT, abs=1e-6)


def test_disconnected_groups_are_flagged_without_bounds() -> None:
    recs = duel("A", "B", 30, 5, 20) + duel("C", "D", 10, 0, 12)
    table = strict_rate(recs)
    finite_table(table)
    by = as_dict(table)
    assert all(not b.identified and b.bound is None for b in by.values())
    # within each group the prior barely moves the difference
    assert by["A"].elo - by["B"].elo == pytest.approx(400 * math.log10(32.5 / 22.5), abs=2.0)


def test_main_group_defines_bounds_of_a_separated_pair() -> None:
    main = duel("A", "B", 30, 5, 20) + duel("B", "C", 25, 0, 25) + duel("A", "C", 10, 0, 10)
    above = duel("X", "A", 8, 0, 0) + duel("X", "Y", 3, 0, 2)
    table = strict_rate(main + above)
    by = as_dict(table)
    assert by["X"].bound == "lower" and by["Y"].bound == "lower"
    assert all(by[n].identified for n in "ABC")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.permutations(["p", "q", "r", "s"]), st.integers(1, 3), st.booleans()),
                min_size=1, max_size=12), st.sampled_from(["fool", "order"]))
def test_any_small_data_set_gives_finite_output(games: list[tuple[list[str], int, bool]], mode: str) -> None:
    recs = []
    for k, (seats, size, drawn) in enumerate(games):
        players = seats[: size + 1]
        order = [[p] for p in players[:-2]] + ([players[-2:]] if drawn else [[players[-2]], [players[-1]]])
        recs.append(record(f"g{k}", f"d{k // 2}", order, [] if drawn else [players[-1]], players=players))
    finite_table(strict_rate(recs, mode=mode))


# ---------------------------------------------------------------------------- bootstrap


def test_bootstrap_is_seeded(sim: list[ResultRecord]) -> None:
    a = rate(sim[:800], bootstrap=40, seed=11)
    b = rate(sim[:800], bootstrap=40, seed=11)
    c = rate(sim[:800], bootstrap=40, seed=12)
    assert [x.ci95 for x in a.bots] == [x.ci95 for x in b.bots]
    assert [x.ci95 for x in a.bots] != [x.ci95 for x in c.bots]
    assert "bootstrap" in a.errors and "40" in a.errors
    # the ratings themselves are the full-data fit either way
    assert [x.elo for x in a.bots] == [x.elo for x in rate(sim[:800]).bots]


def test_bootstrap_width_is_close_to_the_sandwich(sim: list[ResultRecord]) -> None:
    boot, sandwich = as_dict(rate(sim, bootstrap=200, seed=1)), as_dict(rate(sim))
    for name in TRUE:
        ratio = boot[name].ci95 / sandwich[name].ci95  # type: ignore[operator]
        assert 0.7 < ratio < 1.3


def test_bootstrap_with_a_bot_anchor_pins_that_bot(sim: list[ResultRecord]) -> None:
    table = as_dict(rate(sim[:400], anchor="ann=1500", bootstrap=20, seed=0))
    assert table["ann"].ci95 == pytest.approx(0.0, abs=1e-9)


# ---------------------------------------------------------------------------- statsmodels cross-check


@pytest.mark.parametrize("mode", ["fool", "order"])
def test_agrees_with_statsmodels_clustered_logistic_glm(sim: list[ResultRecord], mode: str) -> None:
    sm = pytest.importorskip("statsmodels.api")
    comp = pairwise_outcomes(sim, mode)  # type: ignore[arg-type]
    n = len(comp.bots)
    design = np.zeros((len(comp.i), n))
    rows = np.arange(len(comp.i))
    design[rows, comp.i] += 1.0
    design[rows, comp.j] -= 1.0
    # bot 0 is the reference (column dropped); draws are fractional responses, whose Binomial
    # quasi-score x * (y - p) is exactly the Bradley-Terry "half a win" score
    glm = sm.GLM(comp.score_i, design[:, 1:], family=sm.families.Binomial())
    res = glm.fit(cov_type="cluster", cov_kwds={"groups": comp.cluster}, tol=1e-12)

    ours = fit(comp, anchor_bot=0, anchor_elo=0.0)
    np.testing.assert_allclose(ours.ratings[1:], res.params * ELO_PER_NAT, rtol=0, atol=1e-6)
    # statsmodels' CR1 factor also has (N - 1) / (N - K) for N observations and K parameters
    nobs, k = design.shape[0], n - 1
    se = ours.sd[1:] * math.sqrt((nobs - 1) / (nobs - k))
    np.testing.assert_allclose(se, res.bse * ELO_PER_NAT, rtol=1e-6)
    cov = ours.covariance[1:, 1:] * (nobs - 1) / (nobs - k)
    np.testing.assert_allclose(cov, res.cov_params() * ELO_PER_NAT**2, rtol=1e-6)
