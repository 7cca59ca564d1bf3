"""Benchmark: rate 1,000,000 synthetic 4-player games between 20 bots and print the leaderboard.

Run by hand from the project root::

    python bench/bench_ratings.py                  # 1,000,000 games, fool mode
    python bench/bench_ratings.py --mode order --decode --bootstrap 20

Building the records (and, with ``--decode``, a JSON-lines round trip through msgspec) is timed
separately from rating them. Target: ``rate`` from records in under 5 s.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import msgspec
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.records import ResultRecord
from referee.rating.bradley_terry import fit, pairwise_outcomes, rate
from referee.rating.leaderboard import build_meta, build_rows, format_table


def synthetic(n_games: int, n_bots: int = 20, players: int = 4, seed: int = 0,
              draw_rate: float = 0.02) -> list[ResultRecord]:
    """Plackett-Luce finishing orders (Gumbel trick) from spread-out ratings; one fool per game,
    ``draw_rate`` of the games drawn (the last two tie, no fool). Each deal is played in
    ``players`` seat rotations."""
    rng = np.random.default_rng(seed)
    names = [f"bot{k:02d}" for k in range(n_bots)]
    true = np.linspace(1200, 1800, n_bots) / 400 * np.log(10)
    seats = np.argsort(rng.random((n_games // players + 1, n_bots)), axis=1)[:, :players]
    seats = np.repeat(seats, players, axis=0)[:n_games]
    rotation = (np.arange(players) - np.arange(n_games)[:, None] % players) % players
    seats = np.take_along_axis(seats, rotation, axis=1)
    finish = np.argsort(-(true[seats] + rng.gumbel(size=seats.shape)), axis=1)
    ranked = np.take_along_axis(seats, finish, axis=1).tolist()
    drawn = (rng.random(n_games) < draw_rate).tolist()
    records = []
    for k, (seated, order, is_draw) in enumerate(zip(seats.tolist(), ranked, drawn, strict=True)):
        last = [names[order[-2]], names[order[-1]]] if is_draw else [names[order[-1]]]
        head = order[:-2] if is_draw else order[:-1]
        records.append(ResultRecord(
            game=f"g{k}", deal=f"d{k // players}", variant="podkidnoy",
            players=[names[s] for s in seated],
            order=[[names[s]] for s in head] + [last],
            fools=[] if is_draw else last,
            end="draw" if is_draw else "fool",
        ))
    return records


def timed(label: str, start: float) -> float:
    now = time.perf_counter()
    print(f"{label:<40} {now - start:7.3f} s")
    return now


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--mode", choices=("fool", "order"), default="fool")
    parser.add_argument("--bootstrap", type=int, default=0)
    parser.add_argument("--decode", action="store_true", help="also time a JSON-lines round trip")
    args = parser.parse_args()

    # The cyclic GC rescans every live record on each full collection: building (or decoding)
    # a million records with it enabled costs 10x more. Loaders should pause it (gc.disable /
    # gc.freeze); afterwards the records are long-lived and rating does not trigger full scans.
    gc.disable()
    t = time.perf_counter()
    records = synthetic(args.games, args.bots)
    t = timed(f"build {len(records):,} records (excluded)", t)
    if args.decode:
        blob = b"\n".join(msgspec.json.encode(r) for r in records)
        t = timed("encode JSON lines (excluded)", t)
        decoder = msgspec.json.Decoder(ResultRecord)
        records = [decoder.decode(line) for line in blob.split(b"\n")]
        t = timed("decode JSON lines, GC paused (separate)", t)
    gc.enable()
    gc.collect()
    t = timed("gc.collect of the records (excluded)", t)

    print("breakdown:")
    comp = pairwise_outcomes(records, args.mode)
    t = timed(f"  pairwise_outcomes ({len(comp.i):,} comparisons)", t)
    fit(comp)
    t = timed("  fit (Newton + cluster sandwich)", t)

    start = t
    rating = rate(records, args.mode, bootstrap=args.bootstrap)
    t = timed("rate: records -> RatingTable", t)
    rows = build_rows(records, rating)
    table = format_table(rows, build_meta(rating))
    t = timed("build_rows + format_table", t)
    print(f"{'rate + table, total':<40} {t - start:7.3f} s\n")
    print(table)


if __name__ == "__main__":
    main()
