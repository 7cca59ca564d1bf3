"""Benchmark: the SPRT's error rates and games to a decision, simulated (issue 15's figures).

Run by hand from the project root::

    python bench/bench_sprt.py                 # 2000 runs per line, seed 0
    python bench/bench_sprt.py --runs 500 --seed 3

Three tables, every line ``--runs`` simulated SPRTs (bench/sprt_model.py: the seat's luck of a deal is shared
by the two arms of a group when paired and drawn afresh per game when not):

1. head to head, paired: type I error (true difference E0: H1 accepted) and type II error (true difference
   E1: H0 accepted) with their binomial standard errors, at a few (E0, E1, alpha, beta), and the mean games
   to a decision under each;
2. paired against unpaired, head to head and against a 3-player field, for a "strong vs weak" difference
   (300 Elo) and for "two copies of one bot" (0 Elo), tested as E0 = 0, E1 = 30: mean games to a decision
   and the ratio, the variance of the group scores and its ratio;
3. against a field (3 and 4 players, equal field bots, heavy seat luck): type I error at E0 = 0 (exact: the
   expected group score of two copies is 1/2), and the rate of H1 at a true E1, which shows the field
   mapping's approximation (the seat luck flattens the leaderboard's scale), with the mean group score seen
   against the s(E1) the test assumes, and the Elo difference that mean maps back to ("E1 as seen": what a
   leaderboard fit against this field would report for the model's E1); then the model's difference that the
   leaderboard sees as E1 (bench/sprt_model.py ``field_model_elo``) and the type II error there: the error rate
   the test promises, on the leaderboard's scale.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.sprt_model import (
    Runs,
    field_groups,
    field_model_elo,
    field_sampler,
    head_to_head_groups,
    head_to_head_sampler,
    run_sprt,
)
from referee.rating.sprt import bounds, elo_from_group_score, expected_score, group_expected_score

DRAW = 0.04
LUCK_SHARE = 0.8  # of the room the head-to-head model leaves around p for the seat's luck
FIELD_LUCK = 1.0  # sd of a seat's luck against a field, natural log-odds units (174 Elo)
MAX_GROUPS = 5000


def head_luck(p: float) -> float:
    """The head-to-head luck half-width: ``LUCK_SHARE`` of what ``p`` leaves after the draws."""
    return LUCK_SHARE * (min(p, 1.0 - p) - DRAW / 2)


def rate_se(runs: Runs, decision: str) -> str:
    rate = runs.rate(decision)  # type: ignore[arg-type]
    return f"{rate:.4f} +- {math.sqrt(rate * (1 - rate) / len(runs.decisions)):.4f}"


def error_rates(n_runs: int, seed: int) -> list[list[object]]:
    rows: list[list[object]] = []
    for elo0, elo1, alpha, beta in ((0.0, 30.0, 0.05, 0.05), (0.0, 60.0, 0.1, 0.1), (-10.0, 30.0, 0.05, 0.1),
                                    (0.0, 20.0, 0.05, 0.05)):
        lower, upper = bounds(alpha, beta)
        out = []
        for k, true in enumerate((elo0, elo1)):
            p = expected_score(true)
            rng = np.random.default_rng([seed, int(elo1), k])
            out.append(run_sprt(head_to_head_sampler(rng, p, luck=head_luck(p), draw=DRAW), n_runs, MAX_GROUPS,
                                elo0, elo1, lower, upper))
        h0, h1 = out
        rows.append([f"[{elo0:g}, {elo1:g}]", alpha, beta, rate_se(h0, "H1"), rate_se(h1, "H0"),
                     f"{2 * h0.groups.mean():.0f}", f"{2 * h1.groups.mean():.0f}",
                     f"{h0.rate('truncated') + h1.rate('truncated'):.4f}"])
    return rows


def pairing(n_runs: int, seed: int) -> list[list[object]]:
    rows: list[list[object]] = []
    lower, upper = bounds(0.05, 0.05)
    for label, true in (("strong vs weak", 300.0), ("two copies", 0.0)):
        p = expected_score(true)
        for design, games_per_group in (("head to head", 2), ("3-player field", 6)):
            asn, var = [], []
            for paired in (True, False):
                rng = np.random.default_rng([seed, int(true), games_per_group, paired])
                if games_per_group == 2:
                    sample = head_to_head_sampler(rng, p, luck=head_luck(p), draw=DRAW, paired=paired)
                    scores = head_to_head_groups(rng, 200, 500, p, luck=head_luck(p), draw=DRAW, paired=paired)
                else:
                    sample = field_sampler(rng, true, luck=FIELD_LUCK, paired=paired)
                    scores = field_groups(rng, 200, 500, true, luck=FIELD_LUCK, paired=paired)[0]
                runs = run_sprt(sample, n_runs, MAX_GROUPS, 0.0, 30.0, lower, upper)
                asn.append(games_per_group * runs.groups.mean())
                var.append(float(scores.var()))
            rows.append([label, design, f"{asn[0]:.0f}", f"{asn[1]:.0f}", f"{asn[0] / asn[1]:.2f}",
                         f"{var[0]:.4f}", f"{var[1]:.4f}", f"{var[0] / var[1]:.2f}"])
    return rows


def field(n_runs: int, seed: int) -> list[list[object]]:
    rows: list[list[object]] = []
    elo0, elo1, alpha, beta = 0.0, 60.0, 0.05, 0.05
    lower, upper = bounds(alpha, beta)
    for players in (3, 4):
        calibrated = field_model_elo(elo1, players=players, seed=seed, luck=FIELD_LUCK)
        out = []
        for k, true in enumerate((elo0, elo1, calibrated)):
            rng = np.random.default_rng([seed, players, k])
            out.append(run_sprt(field_sampler(rng, true, players=players, luck=FIELD_LUCK), n_runs, MAX_GROUPS,
                                elo0, elo1, lower, upper))
        scores, base = field_groups(np.random.default_rng([seed, players, 9]), 200, 500, elo1, players=players,
                                    luck=FIELD_LUCK)
        assumed = group_expected_score(elo1, float(base.mean()))
        seen = elo_from_group_score(float(scores.mean()), float(base.mean()))
        h0, h1, at_calibrated = out
        rows.append([players, f"[{elo0:g}, {elo1:g}]", alpha, beta, rate_se(h0, "H1"), rate_se(h1, "H0"),
                     f"{scores.mean():.4f} / {assumed:.4f}", f"{seen:.1f}" if seen is not None else "-",
                     f"{calibrated:.1f}", rate_se(at_calibrated, "H0"),
                     f"{2 * players * h0.groups.mean():.0f}",
                     f"{2 * players * at_calibrated.groups.mean():.0f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated SPRTs per line (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"runs per line {args.runs}, seed {args.seed}, draws {DRAW:g}, at most {MAX_GROUPS} groups a run\n")
    print("1. head to head, paired (pentanomial groups), seat luck", LUCK_SHARE, "of the room around p")
    print(tabulate(error_rates(args.runs, args.seed), headers=[
        "[E0, E1]", "alpha", "beta", "type I (true E0)", "type II (true E1)", "games @E0", "games @E1",
        "truncated"]))
    print("\n2. paired against unpaired, SPRT [0, 30], alpha = beta = 0.05; group-score variance from 100,000 groups")
    print(tabulate(pairing(args.runs, args.seed), headers=[
        "case", "design", "games paired", "games unpaired", "ratio", "var paired", "var unpaired", "ratio"]))
    print(f"\n3. against a field of equal bots, fool mode, seat luck sd {FIELD_LUCK:g} (natural units)")
    print(tabulate(field(args.runs, args.seed), headers=[
        "players", "[E0, E1]", "alpha", "beta", "type I (true E0)", "H0 at model E1", "mean g / s(E1)", "E1 as seen",
        "model E for E1 seen", "type II there", "games @E0", "games @E1 seen"]))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
