"""Benchmark: ``durak analyze``'s speed, its estimates' error against playouts, the exact endgame bound, and
whether its accuracy figure orders bots as their strength does.

Run by hand from the project root, pinned to one core (the compiled engine)::

    taskset -c 1 python bench/bench_analysis.py speed [--games 10] [--playouts 100]
    taskset -c 1 python bench/bench_analysis.py error [--games 3] [--playouts 25 50 100 200 400]
    taskset -c 1 python bench/bench_analysis.py exact [--endgames 300] [--variant podkidnoy]
    taskset -c 1 python bench/bench_analysis.py validity [--games 100] [--playouts 200] [--jobs 1]

Games are played in-process (2 players, podkidnoy, 36 cards) between the sample bots' own decision functions
(random, heuristic ``choose``, the search bot's ``search`` at a fixed number of playouts), always against the
heuristic bot, the judged bot's seat alternating; the analysis judges that bot's seat.
speed: seconds per analyzed seat-game (random bot's and heuristic bot's seats).
error: per playout count, the mean error bar (95% half-width) of a decision's loss over the estimated decisions,
and the spread of the seat's mean loss across 4 analysis seeds.
exact: random 2-player endgames (the stock empty) by cards left; the slowest solve of all legal actions and
how many hit the node budget; brute force beside it up to 7 cards, and whether it agreed.
validity: each bot's mean loss per decision over ``--games`` games with its 95% interval (games as clusters),
and, from the same games, its score against the heuristic bot (1 not the fool, 1/2 a draw) as Elo relative to it
with a 95% interval (a deal's two games, one in each seat, as a cluster); ``--jobs`` games at a time.

Validity, 6 December 2026 (``nice -n 10 python bench/bench_analysis.py validity --games 100 --jobs 2``: 200
worlds, 914 s CPU, 27 minutes on 2 shared cores at a load average of 12-21). Every bot's 100 games are on the
same 50 deals, one game in each seat:

    bot        decisions  mean loss (95%)    blunder/mistake/inaccuracy  Elo vs heuristic, same games (95%)
    random          2231  0.0593 +- 0.0051   108/265/119                 -604 [-inf, -468]
    heuristic       2054  0.0409 +- 0.0051    79/124/69                  (itself)
    search25        2280  0.0394 +- 0.0035    66/188/82                   +28 [-39, +96]
    search400       2204  0.0300 +- 0.0027    38/107/78                  +147 [+80, +226]

In play over more games the heuristic bot and the search bot at 25 playouts are equally strong: a tournament of
the two (``nice -n 10 durak tournament h25.toml --jobs 2``: the sample bots' commands, ``search_bot.py
--playouts 25``, podkidnoy, 2 players, 2000 deals at both seatings, 4000 games), ``durak leaderboard h25.db
--anchor heuristic=0``: search25 -1 +- 11 Elo (score 49.9%, fool 47.9% against 47.6%). So the analysis
ordering random > heuristic ~ search25 > search400 (the middle two's intervals overlapping) is the bots'
strength order; the 40-game run's heuristic 0.0375 below search25's 0.0418 was sampling noise.

Exact, the same day (``nice -n 10 taskset -c 1 python bench/bench_analysis.py exact``, 30 s CPU): brute force
agreed on all 46 endgames of up to 6 cards (2 of 2 cards, 19 of 4, 25 of 6; none of 7 came up).
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
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import NamedTuple

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


class Played(NamedTuple):
    replay: bytes
    seat: int  # the judged bot's
    score: float  # the judged bot's: 1 not the fool, 0 the fool, 1/2 a draw


def play_game(bot: str, index: int) -> Played:
    """Game ``index`` of ``bot`` against the heuristic bot (deal ``index // 2``, the bot's seat ``index % 2``)."""
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
    score = 0.5 if not game.result.fools else float(seat not in game.result.fools)
    return Played(replay_lines(record), seat, score)


def speed(args: argparse.Namespace) -> None:
    for bot in ("random", "heuristic"):
        times = []
        for index in range(args.games):
            data, seat, _ = play_game(bot, index)
            start = time.process_time()
            analyze_game(data, seat, Settings(playouts=args.playouts))
            times.append(time.process_time() - start)
        print(f"{bot:10} seat-games {len(times)}: median {statistics.median(times):.2f} s, mean "
              f"{statistics.fmean(times):.2f} s, max {max(times):.2f} s (CPU seconds, {args.playouts} playouts)")


def error(args: argparse.Namespace) -> None:
    games = [play_game("heuristic", index)[:2] for index in range(args.games)]
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


class Judged(NamedTuple):
    loss: float  # the game's total loss over its decisions with a choice
    choices: int
    marks: dict[str, int]
    score: float
    cpu: float  # seconds, playing and analyzing


def judged_game(bot: str, index: int, playouts: int) -> Judged:
    """Game ``index`` of ``bot`` played and its seat analyzed (in a worker process with ``--jobs``)."""
    start = time.process_time()
    data, seat, score = play_game(bot, index)
    found = analyze_game(data, seat, Settings(playouts=playouts))
    return Judged(found.summary.mean_loss * found.summary.choices, found.summary.choices, found.summary.marks,
                  score, time.process_time() - start)


def elo(score: float) -> str:
    """The Elo difference that expects ``score``, signed: infinite at 0 and 1 (and past them, an interval's end)."""
    if score <= 0 or score >= 1:
        return "-inf" if score <= 0 else "+inf"
    return f"{-400 * math.log10(1 / score - 1) + 0.0:+.0f}"  # + 0.0: no "-0"


def validity(args: argparse.Namespace) -> None:
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for bot in ("random", "heuristic", "search25", "search400"):
            start = time.monotonic()
            games = list(pool.map(judged_game, [bot] * args.games, range(args.games), [args.playouts] * args.games))
            mean, half = pooled_interval((g.loss, g.choices) for g in games)
            marks = {mark: sum(g.marks[mark] for g in games) for mark in games[0].marks}
            deals = [(games[i].score + (games[i + 1].score if i + 1 < len(games) else 0.0), min(2, len(games) - i))
                     for i in range(0, len(games), 2)]
            score, score_half = pooled_interval(deals)
            strength = (f"{elo(score)} Elo [{elo(score - score_half)}, {elo(score + score_half)}]"
                        if bot != "heuristic" else "(the reference)")
            print(f"{bot:10} {args.games} games, {sum(g.choices for g in games)} decisions: mean loss {mean:.4f} +- "
                  f"{half:.4f} (95%), marks {marks}; vs heuristic: score {score:.3f} +- {score_half:.3f}, "
                  f"{strength}; {sum(g.cpu for g in games):.0f} s CPU, {time.monotonic() - start:.0f} s wall",
                  flush=True)


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
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS)
    p.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    print(f"engine {engine_build()}, cores allowed {sorted(os.sched_getaffinity(0))}", flush=True)
    {"speed": speed, "error": error, "exact": exact, "validity": validity}[args.command](args)


if __name__ == "__main__":
    main()
