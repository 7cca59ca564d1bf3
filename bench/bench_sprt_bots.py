"""Benchmark: the SPRT's paired design on the real sample bots (issue 15's figures on real games).

Run by hand from the project root (at most about 15 minutes on 2 shared cores with the defaults)::

    python bench/bench_sprt_bots.py                        # 400 deals per pair, 500 bootstrap SPRTs per cell
    python bench/bench_sprt_bots.py --deals 2000 --runs 2000 --workdir /tmp/sprt-bots   # larger; reusable
    python bench/bench_sprt_bots.py --workdir /tmp/sprt-bots --no-cli                    # analysis again only

It plays two head-to-head tournaments with the project's own runner (``python -m referee tournament``, the
config's default sandbox, bwrap, unless ``--sandbox``): the Python heuristic bot against the Python random
bot, and the random bot against a second copy of itself (``random2``: another ``[[bots]]`` entry, same
script), and with ``--heuristic-copies`` the heuristic bot against a copy of itself. Every deal is played in
both seatings. From the stored outcomes, NEW's result (1, 1/2, 0) in each game gives two designs of a
"group" of two games:

* paired: the two seatings of one deal (the pentanomial pair ``durak sprt`` uses);
* unpaired: seating 0 of one deal with seating 1 of another, independent deal (what a test gets when deals
  are not duplicated; the seats stay balanced).

It prints, per pair:

1. the mean group score and its Elo, the variance of the group scores paired and unpaired (unpaired from
   the exact mean over all pairings of different deals, ``(var seat 0 + var seat 1) / 4``, and from one random
   pairing) and their ratio unpaired / paired with a bootstrap 95% interval (deals resampled);
2. games to a decision: ``--runs`` sequential tests (referee.rating.sprt's GSPRT via bench/sprt_model.run_sprt, a
   decision after every group) on groups bootstrap-resampled from these games, paired and unpaired, under a
   few hypotheses (alpha = beta = 0.05): median and mean games, the ratio unpaired / paired of the means, and
   the rates of H0, H1 and truncation (at ``--max-groups``). Heuristic against random is hundreds of Elo,
   so besides [0, 50] (decided in a few groups) it is tested on 100-Elo bands ending at its true value E:
   [E - 100, E] (the truth at E1: H1 should win 95%) and [E, E + 100] (at E0: H0 95%). The resampled
   world's true Elo is the sample's Elo; for the two copies, whose true difference is 0 by symmetry, every
   game is also put in with its mirror (the other copy's result in the other seat), so that the resampled
   world's truth is exactly 0 (``--no-mirror`` leaves it out);
3. unless ``--no-cli``: the real ``python -m referee sprt`` (paired only) on the same config, heuristic
   against random [0, 50] and random2 against random [0, 30] with ``--max-games`` (``--cli-max-games``): its
   last progress line, the games and the exit code (10 H1, 11 H0, 12 truncated).

The sample bots import the ``protocol`` package, so the config gives them ``PYTHONPATH`` = this checkout (the
sandbox shows its ``protocol`` folder): a Python whose durak-referee is installed from another checkout still
runs this one's bots.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.sprt_model import FloatArray, Runs, Sampler, run_sprt  # noqa: E402
from referee.rating.sprt import arm_score, bounds, elo_from_score  # noqa: E402
from referee.results.store import Store  # noqa: E402
from referee.tournament.sprt_run import placing  # noqa: E402

BOTS = {"heuristic": "heuristic_bot.py", "random": "random_bot.py", "random2": "random_bot.py",
        "heuristic2": "heuristic_bot.py"}
PAIRS = (("heuristic", "random"), ("random2", "random"))  # (NEW, BASE)
COPIES = ("heuristic2", "heuristic")  # --heuristic-copies
SLOT = re.compile(r"\|d(\d+)\|r([01])$")


def config_text(name: str, bots: tuple[str, ...], deals: int, sandbox: str) -> str:
    """A 2-player round-robin config of ``bots`` (sample_bots/python scripts), ``deals`` deals."""
    lines = [f'name = "{name}"', "players = 2", f"deals = {deals}", f'sandbox = "{sandbox}"']
    for bot in bots:
        lines += ["", "[[bots]]", f'name = "{bot}"', f'command = ["{{python}}", "{BOTS[bot]}"]',
                  f'dir = "{ROOT / "sample_bots" / "python"}"', f'files = ["{BOTS[bot]}"]',
                  f'env = {{ PYTHONPATH = "{ROOT}", PYTHONDONTWRITEBYTECODE = "1" }}']
    return "\n".join(lines) + "\n"


def play(workdir: Path, pair: tuple[str, str], deals: int, sandbox: str, jobs: int | None) -> tuple[Path, float]:
    """Play (or resume to ``deals``) the pair's tournament; its database and the seconds it took."""
    config = workdir / f"{pair[0]}-{pair[1]}.toml"
    config.write_text(config_text(f"{pair[0]} vs {pair[1]}", pair, deals, sandbox))
    db = config.with_suffix(".db")
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db)]
    if jobs:
        command += ["--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return db, time.perf_counter() - start


def seat_results(db: Path, new: str) -> FloatArray:
    """NEW's result per deal (rows) and seating (columns r0, r1), from the stored outcomes."""
    with Store(db, create=False) as store:
        slots = store.slot_outcomes(store.tournament().id)
    results: dict[int, list[float]] = {}
    for key, outcomes in slots.items():
        match = SLOT.search(key)
        assert match is not None and len(outcomes) == 1, key
        deal, rotation = int(match[1]), int(match[2])
        results.setdefault(deal, [math.nan, math.nan])[rotation] = arm_score([placing(outcomes[0], new)])
    out = np.array([results[d] for d in sorted(results)])
    assert not np.isnan(out).any(), "a deal without both seatings"
    return out


@dataclass(frozen=True)
class Pool:
    """What groups are drawn from: the paired groups' scores, and each seating's single results."""

    paired: FloatArray  # one score per deal: the mean of its two seatings
    seat0: FloatArray
    seat1: FloatArray

    @classmethod
    def of(cls, x: FloatArray, mirror: bool) -> Pool:
        if not mirror:
            return cls(x.mean(axis=1), x[:, 0], x[:, 1])
        # the other copy's results in the other seat: 1 - r1 is a seat-0 result, 1 - r0 a seat-1 one
        return cls(np.concatenate([x.mean(axis=1), 1.0 - x.mean(axis=1)]),
                   np.concatenate([x[:, 0], 1.0 - x[:, 1]]), np.concatenate([x[:, 1], 1.0 - x[:, 0]]))

    @property
    def mean(self) -> float:
        return float(self.paired.mean())

    def sampler(self, rng: np.random.Generator, paired: bool) -> Sampler:
        def sample(n: int, k: int) -> tuple[FloatArray, None]:
            if paired:
                return self.paired[rng.integers(len(self.paired), size=(n, k))], None
            a = self.seat0[rng.integers(len(self.seat0), size=(n, k))]
            b = self.seat1[rng.integers(len(self.seat1), size=(n, k))]
            return 0.5 * (a + b), None
        return sample


def variances(x: FloatArray, rng: np.random.Generator, n_boot: int) -> list[object]:
    """Mean group score, its Elo, the variances paired and unpaired and their ratio with a bootstrap CI."""
    n = len(x)
    paired = x.mean(axis=1)
    v_paired = float(paired.var(ddof=1))
    v_unpaired = float(x[:, 0].var(ddof=1) + x[:, 1].var(ddof=1)) / 4.0
    shift = rng.integers(1, n)  # deal i's seat 0 with deal (i + shift) mod n's seat 1: never the same deal
    v_one = float((0.5 * (x[:, 0] + np.roll(x[:, 1], -shift))).var(ddof=1))
    idx = rng.integers(n, size=(n_boot, n))
    xb = x[idx]  # (boot, deals, seating)
    vb_paired = xb.mean(axis=2).var(axis=1, ddof=1)
    vb_unpaired = (xb[..., 0].var(axis=1, ddof=1) + xb[..., 1].var(axis=1, ddof=1)) / 4.0
    ok = vb_paired > 0  # none for two copies of a deterministic bot: each wins the deal in one seating
    ci = "-"
    if ok.any():
        low, high = np.percentile(vb_unpaired[ok] / vb_paired[ok], [2.5, 97.5])
        ci = f"[{low:.2f}, {high:.2f}]" if ok.all() else f"[{low:.2f}, inf]"
    mean = float(paired.mean())
    elo = elo_from_score(mean)
    cov = float(np.cov(x[:, 0], x[:, 1])[0, 1])
    return [n, 2 * n, f"{mean:.4f}", "-" if elo is None else f"{elo + 0.0:+.0f}", f"{v_paired:.4f}",
            f"{v_unpaired:.4f}", f"{v_one:.4f}", f"{cov:+.4f}",
            f"{v_unpaired / v_paired:.2f}" if v_paired else "inf", ci]


def games_row(runs: Runs) -> tuple[float, float, list[str]]:
    games = 2 * runs.groups
    return (float(np.median(games)), float(games.mean()),
            [f"{runs.rate('H0'):.3f}", f"{runs.rate('H1'):.3f}", f"{runs.rate('truncated'):.3f}"])


def decisions(label: str, pool: Pool, hypotheses: list[tuple[float, float]], n_runs: int, max_groups: int,
              seed: int) -> list[list[object]]:
    lower, upper = bounds(0.05, 0.05)
    rows: list[list[object]] = []
    for k, (elo0, elo1) in enumerate(hypotheses):
        out = []
        for paired in (True, False):
            rng = np.random.default_rng([seed, k, int(paired)])
            out.append(games_row(run_sprt(pool.sampler(rng, paired), n_runs, max_groups, elo0, elo1, lower, upper)))
        (med_p, mean_p, rates_p), (med_u, mean_u, rates_u) = out
        rows.append([label, f"[{elo0:+.0f}, {elo1:+.0f}]", f"{med_p:.0f}", f"{mean_p:.0f}", f"{med_u:.0f}",
                     f"{mean_u:.0f}", f"{mean_u / mean_p:.2f}", " / ".join(rates_p), " / ".join(rates_u)])
    return rows


def cli_sprt(workdir: Path, new: str, base: str, elo0: float, elo1: float, max_games: int | None,
             sandbox: str, jobs: int | None) -> list[object]:
    """One real ``python -m referee sprt`` run on a fresh database: its last progress line and exit code."""
    config = workdir / "sprt.toml"
    config.write_text(config_text("sprt sample bots", tuple(BOTS), 1, sandbox))
    db = workdir / f"sprt-{new}-{base}.db"
    for stale in workdir.glob(f"{db.name}*"):
        stale.unlink()
    command = [sys.executable, "-m", "referee", "sprt", str(config), new, base, "--elo0", f"{elo0:g}",
               "--elo1", f"{elo1:g}", "--db", str(db)]
    if max_games:
        command += ["--max-games", str(max_games)]
    if jobs:
        command += ["--jobs", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    text = (done.stdout + done.stderr).replace("\r", "\n")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    with Store(db, create=False) as store:
        stored = store.count_games(store.tournament().id)
    print(f"$ {' '.join(command[1:])}\n  exit {done.returncode}; last lines:")
    for line in lines[-4:]:
        print(f"    {line}")
    return [f"{new} vs {base}", f"[{elo0:g}, {elo1:g}]", max_games or "-", stored, done.returncode, f"{seconds:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=400, help="deals per pair, each in both seatings (default 400)")
    parser.add_argument("--runs", type=int, default=500, help="bootstrap SPRTs per line and design (default 500)")
    parser.add_argument("--boot", type=int, default=2000, help="bootstrap resamples of the variance ratio")
    parser.add_argument("--max-groups", type=int, default=4000, help="an SPRT run's cap (default 4000 groups)")
    parser.add_argument("--seed", type=int, default=0, help="of the bootstrap (the games' seed is the runner's)")
    parser.add_argument("--workdir", type=Path, help="keep configs and databases here (default: a temporary "
                        "folder); a stored tournament is resumed, or extended to more --deals")
    parser.add_argument("--sandbox", default="bwrap", choices=("bwrap", "process", "none"))
    parser.add_argument("--jobs", type=int, help="games in parallel (default: the runner's, one per core)")
    parser.add_argument("--heuristic-copies", action="store_true", help="also heuristic2 against heuristic")
    parser.add_argument("--no-mirror", action="store_true", help="do not add the copies' mirrored games")
    parser.add_argument("--no-cli", action="store_true", help="skip the real durak sprt runs")
    parser.add_argument("--cli-max-games", type=int, default=2000, help="of the random2 vs random run")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-sprt-bots-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results: dict[tuple[str, str], FloatArray] = {}
        for pair in PAIRS + ((COPIES,) if args.heuristic_copies else ()):
            db, seconds = play(workdir, pair, args.deals, args.sandbox, args.jobs)
            results[pair] = seat_results(db, pair[0])[: args.deals]
            print(f"{pair[0]} vs {pair[1]}: {2 * len(results[pair])} games in {db} ({seconds:.0f} s to play or "
                  f"resume, sandbox {args.sandbox})")

        rng = np.random.default_rng(args.seed)
        print("\n1. group scores (NEW's point of view), paired (one deal's two seatings) and unpaired (two deals)")
        print(tabulate([[f"{new} vs {base}", *variances(x, rng, args.boot)] for (new, base), x in results.items()],
                       headers=["NEW vs BASE", "deals", "games", "mean", "Elo", "var paired", "var unpaired",
                                "(one pairing)", "cov(seat0, seat1)", "ratio u/p", "95% CI (bootstrap)"]))

        print(f"\n2. games to a decision, {args.runs} SPRTs per cell on resampled groups, alpha = beta = 0.05, "
              f"cap {2 * args.max_groups} games; rates H0 / H1 / truncated")
        rows = []
        for k, ((new, base), x) in enumerate(results.items()):
            mirror = new in ("random2", "heuristic2") and not args.no_mirror
            pool = Pool.of(x, mirror)
            elo = elo_from_score(pool.mean)
            assert elo is not None
            if new == "heuristic":  # hundreds of Elo: [0, 50] is trivial; 100-Elo bands ending at the truth
                hypotheses = [(0.0, 50.0), (elo - 100.0, elo), (elo, elo + 100.0)]
            else:  # mirrored, the world is symmetric: [-30, 0] would be [0, 30] again
                hypotheses = [(0.0, 30.0), (0.0, 20.0)]
            label = f"{new} vs {base} (true {elo + 0.0:+.1f}{', mirrored' if mirror else ''})"
            rows += decisions(label, pool, hypotheses, args.runs, args.max_groups, args.seed + 100 * k)
        print(tabulate(rows, headers=["NEW vs BASE", "[E0, E1]", "paired median", "mean", "unpaired median", "mean",
                                      "ratio u/p (means)", "paired H0/H1/trunc", "unpaired H0/H1/trunc"]))

        if not args.no_cli:
            print("\n3. the real durak sprt (paired), fresh databases")
            cli = [cli_sprt(workdir, "heuristic", "random", 0.0, 50.0, None, args.sandbox, args.jobs),
                   cli_sprt(workdir, "random2", "random", 0.0, 30.0, args.cli_max_games, args.sandbox, args.jobs)]
            print(tabulate(cli, headers=["NEW vs BASE", "[E0, E1]", "--max-games", "games stored", "exit code", "s"]))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
