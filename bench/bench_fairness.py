"""Benchmark: is the league fair to slow and fast bots alike? Games per version, table sizes, pairs, the board.

Run by hand from the project root (the real runs take the CPU: wrap them in ``flock /tmp/durak-cpu.lock``)::

    python bench/bench_fairness.py real --minutes 6 --tournament-minutes 3      # mix (a): a real league
    python bench/bench_fairness.py model --mix a|b|c [--groups N] [--seed S]     # the simulated clock
    python bench/bench_fairness.py copies [--leagues 200] [--groups 400]          # identical code, separated?

Mixes: (a) 6 versions, 2 workers, sizes [2, 3]: the search bot at 30, 300 and 3000 playouts (about 3, 30 and
300 ms a decision) and the random, heuristic and C sample bots (0.1-0.3 ms); (b) the same speeds and strengths
spread over 20 versions; (c) a league of 20 versions growing to 200 (one every 50 groups), sizes 2-6, each
version's time per game drawn log-uniform from the mix's range. ``real`` runs ``durak league run`` on mix (a)
for ``--minutes``, stops it with SIGTERM, then ``durak tournament`` with the same bots (2 players, then 3, half of
``--tournament-minutes`` each) and reads both databases; ``model`` runs bench/league_model.py's coordinator clock
with per-version game times measured in a real run. Reported for each: games per version over every window
(max/min and min/mean, the versions past their entry when the window began), each version's share of its groups
at each size, the time from both being present to the first group of every pair, the board's order against the
true order, and (real) the league's games/s against the tournament's.
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_league import PYTHON, bots_folder, query, start_daemon  # noqa: E402
from bench.league_model import (  # noqa: E402
    Entrant,
    LeagueSim,
    Played,
    first_meetings,
    sim_entered,
    sim_played,
    size_shares,
    spearman,
    top_meetings,
    window_spread,
)
from referee.league.matchmaker import MatchSettings, VersionState  # noqa: E402
from referee.rating.bradley_terry import RatingTable, likelihood_of_superiority, rate  # noqa: E402

#: Mix (a): name -> (command, strength in Elo for the model (a real league's board of these bots), seconds of
#: each game a version sits in: its moves times its move time, as measured in a real run by ``real``).
MIX_A = {
    "search3000": ("{python} search_bot.py --playouts 3000", 2000.0, 12.6),
    "search300": ("{python} search_bot.py --playouts 300", 1850.0, 1.28),
    "search30": ("{python} search_bot.py --playouts 30", 1650.0, 0.136),
    "heuristic": ("{python} heuristic_bot.py", 1700.0, 0.006),
    "c": ("./cbot", 900.0, 0.004),
    "random": ("{python} random_bot.py", 950.0, 0.006),
}


# ---------------------------------------------------------------------------- reports


def report_windows(label: str, events: list[tuple[float, str, int]], entered: dict[str, float], spans: list[float],
                   start: float, end: float, unit: str) -> None:
    for span in spans:
        result = window_spread(events, entered, span, max(span / 10, 1e-9), start, end)
        if result is None:
            print(f"  {label}, windows of {span:g} {unit}: none")
            continue
        print(f"  {label}, every window of {span:g} {unit} ({result.windows}): max/min {result.max_over_min:.2f}, "
              f"min/mean {result.min_over_mean:.2f}, max/mean {result.max_over_mean:.2f} (fewest mean games a "
              f"version {result.mean:.1f})")


def report_sizes(groups: list[Played], sizes: tuple[int, ...]) -> None:
    shares = size_shares(groups)
    for k in sorted(set(sizes)):
        target = sizes.count(k) / len(sizes)
        values = [per.get(k, 0.0) for per in shares.values()]
        print(f"  share of a version's groups at {k} players: {100 * min(values):.1f}-{100 * max(values):.1f}% "
              f"(configured {100 * target:.1f}%) over {len(values)} versions")


def report_pairs(groups: list[Played], present: dict[str, float], unit: str) -> None:
    met = first_meetings(groups, present)
    times = [t for t in met.values() if t is not None]
    never = sum(1 for t in met.values() if t is None)
    if times:
        print(f"  first group of every pair ({len(met)} pairs): median {statistics.median(times):.1f} {unit}, max "
              f"{max(times):.1f} {unit}; never met: {never}")


# ---------------------------------------------------------------------------- the model


def mix_entrants(mix: str, seed: int) -> tuple[list[Entrant], tuple[int, ...], int]:
    """A mix's versions, its table sizes and how many groups to run by default."""
    rng = np.random.default_rng(seed)
    if mix in ("a", "b"):
        count = 6 if mix == "a" else 20
        names = list(MIX_A)
        field = []
        for i in range(count):
            name = names[i % len(names)]
            _, strength, seconds = MIX_A[name]
            vid = name if count == 6 else f"{name}-{i // len(names)}"
            field.append(Entrant(VersionState(vid, vid, vid), strength + (0 if count == 6 else rng.normal(0, 30)),
                                 seconds=seconds))
        return field, (2, 3), 3000
    field = []
    for i in range(200):
        seconds = float(np.exp(rng.uniform(np.log(0.008), np.log(4.2))))
        field.append(Entrant(VersionState(f"v{i:03d}", f"bot{i:03d}", f"author{i:03d}"),
                             float(rng.normal(1500, 200)), at=0 if i < 20 else (i - 19) * 50, seconds=seconds))
    return field, (2, 3, 4, 5, 6), 20_000


def bench_model(mix: str, groups: int | None, seed: int, workers: int, settings: MatchSettings) -> None:
    field, sizes, default = mix_entrants(mix, seed)
    settings = MatchSettings(**{**settings.__dict__, "sizes": sizes})
    groups = groups or default
    sim = LeagueSim(settings, field, seed=seed, workers=workers, refit_every=50)
    began = time.perf_counter()
    sim.run(groups)
    played = sim_played(sim)
    by_group, by_time = sim_entered(sim)
    print(f"mix ({mix}): {len(field)} versions, {workers} workers, sizes {list(sizes)}, {groups} groups, "
          f"{len(sim.game_end)} games, {sim.clock:.0f} s simulated ({time.perf_counter() - began:.1f} s), {settings}")
    seat_events = [(float(g.number), vid, len(g.table)) for g in played for vid in g.table]
    spans = [100.0, 1000.0] if mix == "c" else [50.0, 200.0, 1000.0]
    report_windows("games issued", seat_events, by_group, spans, 0.0, float(groups), "groups")
    game_events = [(end, sim.entrants[int(b)].version.id, 1) for end, seats in zip(sim.game_end, sim.seat_bot,
                                                                                     strict=True) for b in seats]
    minute_spans = {"a": [60.0, 300.0], "b": [300.0, 1800.0], "c": [3600.0]}[mix]
    report_windows("games played", game_events, by_time, minute_spans, 0.0, sim.clock, "s")
    report_sizes(played, sizes)
    present = {e.version.id: t for e in field for g, t in sim.issued[:1] if True}
    joined = {vid: float(at) for vid, (at, _) in sim.joined.items()}
    if mix == "c":
        fewest = top_meetings(sim, span=100, top=4)
        for span in (100, 200, 500):
            fewest = top_meetings(sim, span=span, top=4)
            every = sum(1 for f in fewest if f >= 1)
            print(f"  true top 4: all six pairs met in {every} of {len(fewest)} spans of {span} groups "
                  f"({100.0 * every / len(fewest):.0f}%)")
    else:
        report_pairs(played, {vid: 0.0 for vid in present}, "s")
        strength = {e.version.id: e.strength for e in field}
        near = {key: t for key, t in first_meetings(played, {vid: 0.0 for vid in present}).items()
                if abs(strength[key[0]] - strength[key[1]]) <= settings.window_min}
        met = [t for t in near.values() if t is not None]
        print(f"  the {len(near)} pairs within window_min of each other (true strength): first group within "
              f"{max(met):.1f} s; never met: {sum(t is None for t in near.values())}")
        busy = sim.busy_seconds / (workers * sim.clock)
        print(f"  games/s {len(sim.game_end) / sim.clock:.3f}; workers busy {100 * busy:.0f}% of the time")
    board = sim.refit(apply=False)
    true = [e.version.id for e in sorted(field, key=lambda e: -e.strength) if e.version.id in joined]
    rated = [b for b in board.bots if b.identified]
    print(f"  board against the true order: Spearman {spearman(board, sim):.3f} over {len(rated)} rated; "
          f"true top 4 {true[:4]}, board top 4 {[b.name for b in board.bots[:4]]}")


def copy_los(board: RatingTable, a: str, b: str) -> tuple[float, float]:
    """The board's rating difference of ``a`` over ``b`` and its variance (the sandwich covariance)."""
    names = [bot.name for bot in board.bots]
    i, j = names.index(a), names.index(b)
    var = board.covariance[i, i] + board.covariance[j, j] - 2 * board.covariance[i, j]
    return board.bots[i].elo - board.bots[j].elo, float(var)


def copies_los(leagues: int, groups: int, seed: int, settings: MatchSettings, effect: float) -> None:
    """Two versions of identical code ("copy", "twin": 1600 Elo, ``effect`` Elo stronger at 3 players) among mix (a)'s
    bots but the slowest, the random and C bots ``effect`` Elo weaker at 3 players and the search bots ``effect``
    stronger: over ``leagues`` leagues of ``groups`` groups (sizes [2, 3]), how often the LOS of one copy over the
    other reaches 0.95, on one board pooling both sizes and on a board per size (the two sizes' differences
    averaged, as the configured shares weigh them)."""
    rng = np.random.default_rng(seed)
    pooled: list[float] = []
    per_size: list[float] = []
    shares: list[float] = []
    for _ in range(leagues):
        field = [Entrant(VersionState(name, name, name), strength, seconds=seconds, at_size={
            3: -effect if name in ("random", "c") else effect if "search" in name else 0.0})
            for name, (_, strength, seconds) in MIX_A.items() if name != "search3000"]
        field += [Entrant(VersionState(name, name, name), 1600.0, seconds=0.05, at_size={3: effect})
                  for name in ("copy", "twin")]
        sim = LeagueSim(MatchSettings(**{**settings.__dict__, "sizes": (2, 3)}), field,
                        seed=int(rng.integers(2**31)), workers=2, refit_every=50)
        sim.run(groups)
        diff, var = copy_los(sim.refit(apply=False), "copy", "twin")
        pooled.append(likelihood_of_superiority(diff, var))
        fits = [copy_los(rate(sim.outcomes(size=k)), "copy", "twin") for k in (2, 3)]
        per_size.append(likelihood_of_superiority(sum(d for d, _ in fits) / 2, sum(v for _, v in fits) / 4))
        per = size_shares(sim_played(sim))
        shares.append(abs(per["copy"].get(3, 0.0) - per["twin"].get(3, 0.0)))
    print(f"identical copies, {leagues} leagues of {groups} groups, sizes [2, 3], size effects of {effect:g} Elo; "
          f"their shares at 3 players differ by {100 * statistics.mean(shares):.1f} points on average, "
          f"{100 * max(shares):.1f} at most")
    for label, values in (("one board pooling the sizes", pooled), ("a board per size, averaged", per_size)):
        first = sum(los >= 0.95 for los in values)
        either = sum(max(los, 1 - los) >= 0.95 for los in values)
        z = [statistics.NormalDist().inv_cdf(min(max(los, 1e-12), 1 - 1e-12)) for los in values]
        print(f"  {label}: LOS(copy > twin) >= 0.95 in {first} ({100 * first / leagues:.1f}%, allowed 5%), either "
              f"way {either} ({100 * either / leagues:.1f}%, allowed 10%); sd of the z-scores "
              f"{statistics.pstdev(z):.2f}")


# ---------------------------------------------------------------------------- a real league


def real_bots(versions: int, scale: int) -> dict[str, str]:
    """Mix (a)'s bots (``versions`` > 6: copies under names of their own, by authors of their own, to mix (b)),
    the search bot's playouts divided by ``scale``."""
    names = list(MIX_A)
    bots = {}
    for i in range(versions):
        name = names[i % len(names)]
        command = MIX_A[name][0]
        if scale > 1 and "--playouts" in command:
            playouts = int(command.rsplit(" ", 1)[1])
            command, name = command.replace(str(playouts), str(playouts // scale)), f"search{playouts // scale}"
        bots[name if versions == len(names) else f"{name}-{i // len(names)}"] = command
    return bots


def league_config(top: Path, players: list[int], bots: dict[str, str]) -> Path:
    lines = ['name = "fairness"', f"players = {players}", "[league]", "refit_seconds = 30.0"]
    for name, command in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"', 'dir = "bots"', f'author = "{name}"']
    path = top / "league.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def tournament_config(top: Path, players: int, bots: dict[str, str]) -> Path:
    lines = [f'name = "fairness {players}"', f"players = {players}", "deals = 500"]
    for name, command in bots.items():
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{command}"', 'dir = "bots"']
    path = top / f"tournament{players}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def stamp(text: object) -> float:
    return datetime.fromisoformat(str(text)).timestamp()


def run_for(argv: list[str], seconds: float, stop: signal.Signals, log: Path) -> None:
    process = subprocess.Popen(argv, stdout=log.open("ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True)
    time.sleep(seconds)
    process.send_signal(stop)
    process.wait(120)


def rate_of(db: Path) -> tuple[int, float]:
    """Games stored and games/s from the first game's end to the last's."""
    times = sorted(stamp(t) for (t,) in query(db, "SELECT finished FROM games"))
    return len(times), (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0


def occupancy(db: Path, jobs: int) -> float:
    """The bots' thinking time (every move's, summed) over the workers' time from the first game's end to the
    last's: how busy the bots kept the workers, whatever the mix of fast and slow games."""
    from referee.results.rows import decode_move_us

    rows = query(db, "SELECT finished, move_us FROM games")
    times = sorted(stamp(t) for t, _ in rows)
    micros = sum(sum(seat) for _, blob in rows for seat in decode_move_us(blob if isinstance(blob, bytes) else None)
                 or [])
    thinking = micros / 1e6
    return thinking / (jobs * (times[-1] - times[0])) if len(times) > 1 and times[-1] > times[0] else 0.0


def bench_real(minutes: float, tournament_minutes: float, jobs: int, versions: int, scale: int) -> None:
    top = Path(tempfile.mkdtemp(prefix="durak-bench-fairness-"))
    top.chmod(0o755)
    bots_folder(top)
    db = top / "league.db"
    began = time.time()
    bots = real_bots(versions, scale)
    daemon = start_daemon(league_config(top, [2, 3], bots), db, jobs, top / "daemon.log")
    time.sleep(minutes * 60)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(120)
    for players in (2, 3):
        config = tournament_config(top, players, bots)
        run_for([PYTHON, "-m", "referee", "tournament", str(config), "--jobs", str(jobs)], tournament_minutes * 30,
                signal.SIGINT, top / "tournament.log")
    report_real(db, top, began)


def report_real(db: Path, top: Path, began: float) -> None:
    groups = [(int(str(n)), tuple(json.loads(str(seats))), stamp(issued), str(status)) for n, seats, issued, status in
              query(db, "SELECT number, seats, issued, status FROM league_groups ORDER BY number")]
    games = [(str(key), stamp(done), str(record)) for key, done, record in
             query(db, "SELECT deal_key, finished, record FROM games ORDER BY id")]
    start = min(t for _, _, t, _ in groups)
    played = [Played(n, seats, t - start) for n, seats, t, _ in groups]
    end = max(t for _, t, _ in games) - start
    names = sorted({v for g in played for v in g.table})
    issued: dict[str, int] = {}
    entered: dict[str, float] = {}
    entered_at: dict[str, float] = {}
    for g in played:
        for vid in g.table:
            issued[vid] = issued.get(vid, 0) + len(g.table)
            if issued[vid] >= 30 and vid not in entered:
                entered[vid], entered_at[vid] = g.number + 1, g.issued
    seats_of = {f"g{g.number}": g.table for g in played}
    mix = "a" if len(names) <= len(MIX_A) else "b"
    print(f"mix ({mix}), a real league: {len(games)} games in {len(groups)} groups over {end:.0f} s "
          f"({sum(1 for *_, s in groups if s == 'complete')} complete); folder {top}")
    everyone = {name: 0.0 for name in names}
    seat_events = [(float(g.number), vid, len(g.table)) for g in played for vid in g.table]
    report_windows("games issued, from the start", seat_events, {n: 0.0 for n in names}, [20.0, 50.0, 100.0], 0.0,
                   float(len(played)), "groups")
    report_windows("games issued, past entry", seat_events, entered, [20.0, 50.0, 100.0], 0.0, float(len(played)),
                   "groups")
    game_events = [(t - start, vid, 1) for key, t, _ in games for vid in seats_of.get(key, ())]
    report_windows("games played, from the start", game_events, everyone, [60.0, 120.0, 300.0], 0.0, end, "s")
    report_windows("games played, past entry", game_events, entered_at, [60.0, 120.0, 300.0], 0.0, end, "s")
    totals = {name: sum(1 for key, _, _ in games for v in seats_of.get(key, ()) if v == name)
              for name in names}
    print(f"  games per version over the run: {totals}")
    first_minute = [g for g in played if g.issued < 60.0]
    print(f"  first minute: {len(first_minute)} groups, sizes {sorted({len(g.table) for g in first_minute})}")
    report_sizes(played, (2, 3))
    report_pairs(played, everyone, "s")
    board = subprocess.run([PYTHON, "-m", "referee", "leaderboard", str(db)], capture_output=True, text=True)
    print("  " + "\n  ".join(board.stdout.strip().splitlines()))
    count, league_rate = rate_of(db)
    print(f"  league: {count} games, {league_rate:.3f} games/s, bots thinking {100 * occupancy(db, 2):.0f}% of the "
          "workers' time")
    shares = [sum(1 for key, _, _ in games if len(seats_of.get(key, ())) == k) / max(1, len(games)) for k in (2, 3)]
    rates = []
    for players in (2, 3):
        tdb = top / f"tournament{players}.db"
        n, r = rate_of(tdb)
        rates.append(r)
        print(f"  tournament, {players} players: {n} games, {r:.3f} games/s, bots thinking "
              f"{100 * occupancy(tdb, 2):.0f}% of the workers' time")
    for players in (2, 3):
        ranked = subprocess.run([PYTHON, "-m", "referee", "leaderboard", str(top / f"tournament{players}.db")],
                                capture_output=True, text=True)
        print(f"  the tournament's board at {players} players:\n  " + "\n  ".join(ranked.stdout.strip().splitlines()))
    report_speeds(db)
    if all(rates):
        expected = 1.0 / sum(share / r for share, r in zip(shares, rates, strict=True))
        print(f"  the tournament's rate at the league's mix of sizes ({100 * shares[0]:.0f}% of games at 2): "
              f"{expected:.3f} games/s; league / tournament {league_rate / expected:.2f}")


def report_speeds(db: Path) -> None:
    """Each bot's seconds per game (its moves' times summed) and per move, from the league's stored games."""
    from referee.results.rows import decode_move_us

    total: dict[str, float] = {}
    games: dict[str, int] = {}
    moves: dict[str, int] = {}
    for record, move_us in query(db, "SELECT record, move_us FROM games"):
        names = json.loads(str(record))["players"]
        for name, seat in zip(names, decode_move_us(move_us if isinstance(move_us, bytes) else None) or [],
                              strict=False):
            total[name] = total.get(name, 0.0) + sum(seat) / 1e6
            games[name] = games.get(name, 0) + 1
            moves[name] = moves.get(name, 0) + len(seat)
    print("  time per game (per move): " + ", ".join(
        f"{name} {total[name] / games[name]:.3f} s ({1e3 * total[name] / max(1, moves[name]):.2f} ms)"
        for name in sorted(total, key=lambda n: -total[n] / games[n])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    model = sub.add_parser("model")
    model.add_argument("--mix", choices=["a", "b", "c"], required=True)
    model.add_argument("--groups", type=int)
    model.add_argument("--seed", type=int, default=1)
    model.add_argument("--workers", type=int, default=2)
    model.add_argument("--max-lead", type=int)
    model.add_argument("--max-in-flight", type=int, default=MatchSettings.max_in_flight)
    model.add_argument("--window-min", type=float, default=MatchSettings.window_min)
    copies = sub.add_parser("copies")
    copies.add_argument("--leagues", type=int, default=200)
    copies.add_argument("--groups", type=int, default=400)
    copies.add_argument("--seed", type=int, default=1)
    copies.add_argument("--effect", type=float, default=100.0, help="Elo a bot gains or loses at 3 players")
    real = sub.add_parser("real")
    real.add_argument("--minutes", type=float, default=6.0)
    real.add_argument("--tournament-minutes", type=float, default=3.0)
    real.add_argument("--jobs", type=int, default=2)
    real.add_argument("--versions", type=int, default=len(MIX_A), help="20: mix (b), copies of mix (a)'s bots")
    real.add_argument("--scale", type=int, default=1, help="divide the search bot's playouts by this")
    again = sub.add_parser("report")
    again.add_argument("folder", type=Path)
    args = parser.parse_args()
    if args.what == "model":
        settings = MatchSettings(max_lead=args.max_lead, max_in_flight=args.max_in_flight,
                                 window_min=args.window_min)
        bench_model(args.mix, args.groups, args.seed, args.workers, settings)
    elif args.what == "copies":
        copies_los(args.leagues, args.groups, args.seed, MatchSettings(), args.effect)
    elif args.what == "real":
        bench_real(args.minutes, args.tournament_minutes, args.jobs, args.versions, args.scale)
    else:
        report_real(args.folder / "league.db", args.folder, 0.0)


if __name__ == "__main__":
    main()
