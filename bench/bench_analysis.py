"""Benchmark: ``durak analyze``'s speed, its estimates' error against playouts, the exact endgame bound, and
whether its accuracy figure orders bots as their strength does.

Run by hand from the project root, pinned to one core (the compiled engine)::

    taskset -c 1 python bench/bench_analysis.py speed [--games 10] [--playouts 100]
    taskset -c 1 python bench/bench_analysis.py error [--games 3] [--playouts 25 50 100 200 400]
    taskset -c 1 python bench/bench_analysis.py exact [--endgames 300] [--variant podkidnoy]
    taskset -c 1 python bench/bench_analysis.py validity [--games 40] [--playouts 100]

Games are played in-process (2 players, podkidnoy, 36 cards) between the sample bots' own decision functions
(random, heuristic ``choose``, the search bot's ``search`` at a fixed number of playouts), always against the
heuristic bot, the judged bot's seat alternating; the analysis judges that bot's seat.
speed: seconds per analyzed seat-game (random bot's and heuristic bot's seats).
error: per playout count, the mean error bar (95% half-width) of a decision's loss over the estimated decisions,
and the spread of the seat's mean loss across 4 analysis seeds.
exact: random 2-player endgames (the stock empty) by cards left; the slowest solve of all legal actions and
how many hit the node budget; brute force beside it up to 7 cards, and whether it agreed.
validity: each bot's mean loss per decision over ``--games`` games with its 95% interval (games as clusters).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_bots" / "python"))

import heuristic_bot  # noqa: E402
import search_bot  # noqa: E402

from protocol.cards import CARD_NAMES  # noqa: E402
from protocol.events import event_for_seat  # noqa: E402
from protocol.rules import Rules  # noqa: E402
from referee.analysis.analyze import analyze_game, pooled_interval  # noqa: E402
from referee.analysis.evaluate import DEFAULT_PLAYOUTS, Settings  # noqa: E402
from referee.analysis.exact import Solver, after, brute_force, cards_left, is_endgame  # noqa: E402
from referee.analysis.playout import cheap_action  # noqa: E402
from referee.engine import BoutGame, Game, SeededRng, engine_build, new_game  # noqa: E402
from referee.engine.rng import derive_seed  # noqa: E402
from referee.results.record import GameRecord  # noqa: E402
from referee.results.replay import replay_lines  # noqa: E402

Player = Callable[[Game, int, int, random.Random], str]  # (game, seat, its decisions so far, rng) -> action


def random_player(game: Game, seat: int, moves: int, rng: random.Random) -> str:
    return str(rng.choice(game.legal_actions()))


def heuristic_player(game: Game, seat: int, moves: int, rng: random.Random) -> str:
    legal = [str(a) for a in game.legal_actions()]
    return heuristic_bot.choose(msgspec.to_builtins(game.view(seat)), legal, game.rules.variant, moves + 1, rng)


def search_player(playouts: int) -> Player:
    def play(game: Game, seat: int, moves: int, rng: random.Random) -> str:
        legal = [str(a) for a in game.legal_actions()]
        if len(legal) == 1:
            return legal[0]
        events = [event_for_seat(e, seat) for e in game.events]
        action, _ = search_bot.search(game.rules, game.dealer, game.view(seat), events, legal, rng, playouts,
                                      math.inf)
        return action
    return play


BOTS: dict[str, Player] = {"random": random_player, "heuristic": heuristic_player,
                           "search25": search_player(25), "search400": search_player(400)}


def play_game(bot: str, index: int) -> tuple[bytes, int]:
    """Game ``index`` of ``bot`` against the heuristic bot: its replay and the bot's seat."""
    seat = index % 2
    players = [heuristic_player, heuristic_player]
    players[seat] = BOTS[bot]
    rules = Rules()
    game = new_game(rules, 2, SeededRng(derive_seed(1, "bench-analysis", index // 2)))
    rngs = [random.Random(derive_seed(2, bot, index, s)) for s in range(2)]
    moves = [0, 0]
    while game.result is None:
        mover = game.to_move
        assert mover is not None
        game.apply_str(players[mover](game, mover, moves[mover], rngs[mover]))
        moves[mover] += 1
    names = ["heuristic", "heuristic"]
    names[seat] = bot if bot != "heuristic" else "heuristic-judged"
    record = GameRecord(game=f"{bot}-{index}", deal=str(index), names=names, rules=rules, dealer=game.dealer,
                        deck=[CARD_NAMES[c] for c in game.deck], result=game.result, actions=game.actions,
                        verdicts=[], times=[None, None], events=list(game.events))
    return replay_lines(record), seat


def speed(args: argparse.Namespace) -> None:
    for bot in ("random", "heuristic"):
        times = []
        for index in range(args.games):
            data, seat = play_game(bot, index)
            start = time.process_time()
            analyze_game(data, seat, Settings(playouts=args.playouts))
            times.append(time.process_time() - start)
        print(f"{bot:10} seat-games {len(times)}: median {statistics.median(times):.2f} s, mean "
              f"{statistics.fmean(times):.2f} s, max {max(times):.2f} s (CPU seconds, {args.playouts} playouts)")


def error(args: argparse.Namespace) -> None:
    games = [play_game("heuristic", index) for index in range(args.games)]
    for playouts in args.playouts:
        bars, means, start = [], defaultdict(list), time.process_time()
        for seed in range(4):
            for number, (data, seat) in enumerate(games):
                found = analyze_game(data, seat, Settings(playouts=playouts, seed=seed))
                bars += [d.error for d in found.decisions if d.method == "estimate"]
                means[number].append(found.summary.mean_loss)
        spread = statistics.fmean(statistics.stdev(m) for m in means.values())
        print(f"playouts {playouts:4}: mean error bar of a loss {statistics.fmean(bars):.3f} "
              f"(over {len(bars)} estimated decisions), seat mean loss sd across seeds {spread:.4f}, "
              f"{(time.process_time() - start) / (4 * len(games)):.2f} s per seat-game")


def exact(args: argparse.Namespace) -> None:
    worst: dict[int, float] = defaultdict(float)
    count: dict[int, int] = defaultdict(int)
    over: dict[int, int] = defaultdict(int)
    brute: dict[int, tuple[int, int]] = defaultdict(lambda: (0, 0))
    for seed in range(args.endgames):
        game = new_game(Rules(variant=args.variant), 2, SeededRng(seed))
        assert isinstance(game, BoutGame)
        rng = random.Random(seed)
        most = rng.randrange(4, 19)
        while game.result is None and not (is_endgame(game) and cards_left(game) <= most):
            legal = game.legal_actions()
            game.apply(rng.choice(legal) if rng.random() < 0.3 else cheap_action(legal, game.trump, len(game.stock)))
        if game.result is not None or game.to_move is None:
            continue
        game.events = []
        size = cards_left(game)
        solver = Solver(game.to_move)
        start = time.process_time()
        try:
            values = solver.action_values(game)
        except Exception:  # BudgetExceeded: the analysis estimates such a decision
            over[size] += 1
            values = None
        worst[size] = max(worst[size], time.process_time() - start)
        count[size] += 1
        if values is not None and size <= 7:
            agreed, tried = brute[size]
            reference = [brute_force(after(game, a), game.to_move) for a in game.legal_actions()]
            brute[size] = (agreed + (reference == values), tried + 1)
    for size in sorted(count):
        agreed, tried = brute[size]
        check = f", brute force agreed {agreed}/{tried}" if tried else ""
        print(f"{size:2} cards left: {count[size]:3} endgames, slowest {worst[size]:.3f} s (CPU), "
              f"over the node budget {over[size]}{check}")


def validity(args: argparse.Namespace) -> None:
    for bot in ("random", "heuristic", "search25", "search400"):
        per_game, marks, start = [], defaultdict(int), time.process_time()
        for index in range(args.games):
            data, seat = play_game(bot, index)
            found = analyze_game(data, seat, Settings(playouts=args.playouts))
            per_game.append((found.summary.mean_loss * found.summary.choices, found.summary.choices))
            for mark, n in found.summary.marks.items():
                marks[mark] += n
        mean, half = pooled_interval(per_game)
        decisions = sum(count for _, count in per_game)
        print(f"{bot:10} {args.games} games, {decisions} decisions: mean loss {mean:.4f} +- {half:.4f} "
              f"(95%), marks {dict(marks)}, {time.process_time() - start:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("speed")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS)
    p = sub.add_parser("error")
    p.add_argument("--games", type=int, default=3)
    p.add_argument("--playouts", type=int, nargs="+", default=[25, 50, 100, 200, 400])
    p = sub.add_parser("exact")
    p.add_argument("--endgames", type=int, default=300)
    p.add_argument("--variant", default="podkidnoy")
    p = sub.add_parser("validity")
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS)
    args = parser.parse_args()
    print(f"engine {engine_build()}, cores allowed {sorted(os.sched_getaffinity(0))}", flush=True)
    {"speed": speed, "error": error, "exact": exact, "validity": validity}[args.command](args)


if __name__ == "__main__":
    main()
