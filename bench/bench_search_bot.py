"""Benchmark: the search bot's (sample_bots/python/search_bot.py) speed and strength.

Run by hand from the project root, niced on a shared machine::

    python bench/bench_search_bot.py speed [--positions 6] [--playouts 300]
    python bench/bench_search_bot.py strength [--playouts 50 200] [--deals 8] [--variants ...] [--players 2 4]
    python bench/bench_search_bot.py timed [--games 4] [--players 2]

speed: ISMCTS iterations (determinize + tree walk + playout) per second, in-process, per variant at 2 and 4
players, from ``--positions`` positions a few random moves into seeded deals (median over positions).
strength: a tournament per variant, table size and ``--playouts`` setting (``durak tournament`` in a
temporary folder, default sandbox, 10 s per move so that the playout count, not the clock, sets the effort):
the search bot at N playouts with the heuristic and random sample bots (2 players), or with the heuristic bot
twice and the js bot (4 players: a random bot there is the fool nearly every game, which says nothing about the
others); round robin, every deal at every cyclic seating. Prints each bot's Elo with its 95% error
bar from ``durak leaderboard --format json --anchor heuristic=0`` (so the search bot's Elo is its margin
over the heuristic bot) and its fool rate. The games per cell are printed with it.
timed: the search bot thinking to the deadline (no --playouts) against the heuristic bot at the default
time controls (1 s per move, 50 ms grace) under the default sandbox, with ``durak play --json``: its
strikes, timeouts and move times, to check the margin (run it while the machine is loaded as well).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_bots" / "python"))

import search_bot  # noqa: E402

from protocol.events import event_for_seat  # noqa: E402
from protocol.rules import VARIANTS, Rules  # noqa: E402
from referee.engine import SeededRng, engine_build, new_game  # noqa: E402

DURAK = [str(Path(sys.executable).with_name("durak"))]  # the installed referee, whose packages the sandbox shows
SAMPLES = ROOT / "sample_bots"


def speed(positions: int, playouts: int) -> None:
    print(f"engine build: {engine_build()}; {playouts} iterations per position, median of {positions} positions")
    print(f"{'variant':<12}{'players':>8}{'iterations/s':>14}")
    for variant in VARIANTS:
        for players in (2, 4):
            rates = []
            for position in range(positions):
                rng = random.Random(position)
                rules = Rules(variant=variant)
                game = new_game(rules, players, SeededRng(position))
                for _ in range(rng.randrange(2, 12)):
                    game.apply(rng.choice(game.legal_actions()))
                while game.result is None and len(game.legal_actions()) < 2:
                    game.apply(game.legal_actions()[0])
                if game.result is not None:
                    continue
                seat = game.to_move
                assert seat is not None
                events = [event_for_seat(event, seat) for event in game.events]
                legal = [str(action) for action in game.legal_actions()]
                start = time.perf_counter()
                _, done = search_bot.search(rules, game.dealer, game.view(seat), events, legal, rng, playouts,
                                            time.monotonic() + 600)
                rates.append(done / (time.perf_counter() - start))
            print(f"{variant:<12}{players:>8}{statistics.median(rates):>14,.0f}", flush=True)


def config(variant: str, players: int, playouts: int, deals: int) -> str:
    """2 players: search, heuristic, random. 4 players: search, heuristic, a second heuristic and js (with
    random at the table it is the fool nearly every game, and the others could not be told apart)."""
    bots = [("search", f"search_bot.py --playouts {playouts}"), ("heuristic", "heuristic_bot.py")]
    bots += [("heuristic2", "heuristic_bot.py")] if players == 4 else [("random", "random_bot.py")]
    lines = [f'name = "search bot {variant} {players}p {playouts} playouts"', f'variant = "{variant}"',
             f"players = {players}", f"deals = {deals}", "[time]", "move = 10.0"]
    for name, script in bots:
        lines += ["[[bots]]", f'name = "{name}"', f'command = "{{python}} {script}"',
                  f'dir = "{SAMPLES / "python"}"', f'files = ["{script.split()[0]}"]']
    if players == 4:
        lines += ["[[bots]]", 'name = "js"', 'command = "node bot.js"', f'dir = "{SAMPLES / "js"}"']
    return "\n".join(lines) + "\n"


def strength(variants: list[str], players_list: list[int], playouts_list: list[int], deals: int, jobs: int) -> None:
    print(f"deals per table {deals}; round robin, cyclic seatings; Elo relative to heuristic = 0, 95% error bars")
    for playouts in playouts_list:
        for players in players_list:
            for variant in variants:
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "search.toml"
                    path.write_text(config(variant, players, playouts, deals))
                    start = time.monotonic()
                    # Run from elsewhere than a checkout: the referee must be the installed one, whose
                    # protocol package the sandbox shows the bots.
                    subprocess.run([*DURAK, "tournament", str(path), "--jobs", str(jobs)], check=True,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
                    took = time.monotonic() - start
                    board = subprocess.run([*DURAK, "leaderboard", str(path.with_suffix(".db")), "--format", "json",
                                            "--anchor", "heuristic=0"], check=True, capture_output=True, text=True,
                                           cwd=tmp)
                cell = f"{variant:<11} {players}p {playouts:>4} playouts  {took:6.0f} s  "
                print(cell + rows(json.loads(board.stdout)), flush=True)


def rows(board: dict[str, Any]) -> str:
    """``name elo±ci (games, fool %)`` for each rated bot, from ``durak leaderboard --format json``."""
    out = []
    for row in board["rows"]:
        bound = {"lower": "> ", "upper": "< "}.get(row["bound"] or "", "")
        ci = f"±{row['ci95']:.0f}" if row["ci95"] is not None else ""
        out.append(f"{row['bot']} {bound}{row['elo']:+.0f}{ci} ({row['games']} g, fool {row['fool_pct']:.0f}%)")
    return "; ".join(out)


def timed(games: int, players: int) -> None:
    python = sys.executable
    bots = [f"search={python} {SAMPLES / 'python' / 'search_bot.py'}"]
    bots += [f"heuristic{i}={python} {SAMPLES / 'python' / 'heuristic_bot.py'}" for i in range(1, players)]
    run = subprocess.run([*DURAK, "play", "--games", str(games), "--json", *bots], check=True, capture_output=True,
                         text=True, cwd=tempfile.gettempdir())
    for line in run.stdout.splitlines():
        record = json.loads(line)
        print(json.dumps({key: record.get(key) for key in ("fools", "end", "verdicts", "strikes", "times")}))
    print(f"load after: {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--positions", type=int, default=6)
    s.add_argument("--playouts", type=int, default=300)
    t = sub.add_parser("strength")
    t.add_argument("--playouts", type=int, nargs="+", default=[50, 200])
    t.add_argument("--deals", type=int, default=8)
    t.add_argument("--variants", nargs="+", default=list(VARIANTS))
    t.add_argument("--players", type=int, nargs="+", default=[2, 4])
    t.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    m = sub.add_parser("timed")
    m.add_argument("--games", type=int, default=4)
    m.add_argument("--players", type=int, default=2)
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}")
    if args.what == "speed":
        speed(args.positions, args.playouts)
    elif args.what == "strength":
        strength(args.variants, args.players, args.playouts, args.deals, args.jobs)
    else:
        timed(args.games, args.players)


if __name__ == "__main__":
    main()
