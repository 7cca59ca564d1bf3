#!/usr/bin/env python3
"""A Durak bot that searches: information-set Monte Carlo tree search (ISMCTS) over the referee's engine.

The opponent to beat. It plays every variant (podkidnoy, perevodnoy, chase, fools_fool), 2-6 players and
both decks, from what its messages tell it and nothing else.

The method (single-observer ISMCTS, Cowling, Powley and Whitehouse 2012). The bot cannot see the other
hands or the stock, so it cannot search the real game. Each iteration of the search:

1. **Determinize**: ``determinize(rules, view, events, rng)`` deals every card the bot cannot see at random,
   consistently with its view and every event it was told (cards picked up, who led the bout ...): one
   world that could be the real one.
2. **Select**: walk down one tree shared by all worlds. Its nodes are action sequences from the present;
   at each node only the actions legal in *this* world count. A child's statistics (visits, total reward
   for the seat that chose it) are compared with UCB1, using the child's *availability* (how often it
   was legal when its parent was reached) in place of the parent's visit count, so an action legal only
   in a few worlds is not judged by worlds where it could not be played. Forced moves (a single legal
   action) are played without a node.
3. **Expand** one untried action, then **play out** the world to the end with a cheap card-saving policy
   (:func:`cheap_action`, a random legal action one time in ten): much stronger than random playouts.
4. **Back up**: every chooser on the path scores 1 if it is not the fool, 0 if it is, 1/2 for a draw
   (the project's ratings count fools).

The answer is the most visited action at the root. Why ISMCTS rather than determinized MCTS (a separate
tree per sampled world, votes summed): one tree pools every iteration's statistics below the root too, so
the same effort gives deeper, less noisy estimates, and it never plans on seeing a card it cannot see
(a per-world tree does: "strategy fusion").

Effort. By default it thinks until the request's deadline, less a margin (``--margin-ms``; see
``DEFAULT_MARGIN_MS``), measured from when the request line arrives (the referee freezes a bot between its
turns, so its wall clock jumps across pauses). ``--playouts N`` fixes the effort at N iterations per
decision (the deadline stays a cap): with a fixed effort its play depends only on the game's ``seed``
(it reseeds from every ``game`` message), so a tournament replays the same moves; thinking to a deadline
depends on the machine's speed and load, and does not. A request with one legal action is answered at once.

Copy it: the loop in :func:`search` is the whole method. Improve the playout policy (:func:`playout`),
keep the tree between moves, or weight the worlds by how likely the opponents' moves were in them.

    .venv/bin/durak play "{python} sample_bots/python/search_bot.py --playouts 200" \\
                         "{python} sample_bots/python/heuristic_bot.py"

It needs the Python that has durak-referee installed (it imports ``protocol`` and ``referee.engine``,
which every sandbox level shows a bot). stdout carries protocol lines only.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence

import msgspec

from protocol.actions import BEAT, PASS, TAKE, Action
from protocol.events import AnyEvent
from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    GameOver,
    GameStart,
    Hello,
    Reply,
    Request,
    Shutdown,
    encoder,
    referee_decoder,
)
from protocol.rules import Rules
from protocol.views import GameResult, PlayerView
from referee.engine import BoutGame, Game, determinize

#: Kept back from every request's ``time_ms``: this much, plus MARGIN_SHARE of it. Covers decoding, the last
#: iteration (a long playout), the reply's write, and the scheduler of a loaded machine. At the default 1 s per
#: move the bot thinks for 700 ms; under the bwrap sandbox with pausing on, on 2 cores at a load average of
#: 10-14, its slowest reply took 789 ms of the 1000 ms (115 moves, no strike: ``bench/bench_search_bot.py timed``).
DEFAULT_MARGIN_MS = 200
MARGIN_SHARE = 0.1
#: UCB1's exploration constant for rewards in [0, 1] (sqrt(2) is the textbook value; lower searches deeper).
EXPLORATION = 0.7
#: Playouts: the share of random moves; what passing and taking "cost" next to a card (its rank index, 0
#: for a two, 9 for a jack; a trump adds TRUMP_BONUS), early (a stock of at least BIG_STOCK) and later.
RANDOM_SHARE = 0.1
TRUMP_BONUS = 13
BIG_STOCK = 12
PASS_EARLY, TAKE_EARLY = 9, TRUMP_BONUS + 7  # throw below a jack; beat with at most the eight of trumps
PASS_LATE, TAKE_LATE = TRUMP_BONUS, TRUMP_BONUS + 10  # throw any plain card; beat with at most the queen of trumps
ENDGAME = 2 * TRUMP_BONUS  # throw and beat with anything
CHASE_COST = 8 * 4 * TRUMP_BONUS  # chase Durak: a chase is worth more than any card
FOOLS_FOOL_TRUMP = 1  # diamonds (protocol.cards: suits C, D, H, S are 0-3; a card is rank * 4 + suit)


class Node:
    """One action sequence from the decision at the root; its statistics are for the seat that chose it."""

    __slots__ = ("available", "children", "reward", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.available = 1  # how often the action was legal when the parent was reached, from its expansion on
        self.reward = 0.0  # total reward of the chooser over the visits
        self.children: dict[str, Node] = {}

    def ucb(self) -> float:
        return self.reward / self.visits + EXPLORATION * math.sqrt(math.log(self.available) / self.visits)


def reward(result: GameResult, seat: int) -> float:
    """1 for not being the fool, 0 for being it, 1/2 for a draw (no fool)."""
    if not result.fools:
        return 0.5
    return 0.0 if seat in result.fools else 1.0


def playout(game: Game, rng: random.Random) -> GameResult:
    """Play ``game`` to its end with :func:`cheap_action` for every seat, a random legal action one time in
    RANDOM_SHARE (the engine's action cap ends a game that loops)."""
    bout = game if isinstance(game, BoutGame) else None
    trump = bout.trump if bout is not None else FOOLS_FOOL_TRUMP
    chase = game.rules.variant == "chase"
    while game.result is None:
        legal = game.legal_actions()
        if len(legal) == 1 or rng.random() < RANDOM_SHARE:
            game.apply(rng.choice(legal))
        else:
            stock = len(bout.stock) if bout is not None else 0
            game.apply(cheap_action(legal, trump, stock, chase))
    return game.result


def worth(card: int, trump: int) -> int:
    """A card's rank index (0 for a two; protocol.cards: a card is rank index * 4 + suit), plus TRUMP_BONUS
    for a trump."""
    return (card >> 2) + (TRUMP_BONUS if card & 3 == trump else 0)


def cheap_action(legal: Sequence[Action], trump: int, stock: int, chase: bool = False) -> Action:
    """The playout policy, the heuristic bot's in short: the action that gives up the cheapest card, then
    the most cards. Passing and taking have a cost too, lower while the stock is big: early on it passes
    rather than throw a jack or better, and takes rather than beat with a trump above the eight; once the
    stock is empty it throws and beats with anything. In chase Durak (``chase``), where laying k cards at once
    scores k // 2 chases and the fewest chases lose, the most chases come first."""
    pass_cost, take_cost = (PASS_EARLY, TAKE_EARLY) if stock >= BIG_STOCK else (PASS_LATE, TAKE_LATE) \
        if stock else (ENDGAME, ENDGAME)

    def cost(action: Action) -> int:
        if action.kind == TAKE:
            return take_cost * 8
        if action.kind == PASS:
            return pass_cost * 8
        if action.kind == BEAT:
            return worth(action.cards[1], trump) * 8
        chases = len(action.cards) // 2 if chase else 0
        return max(worth(card, trump) for card in action.cards) * 8 - len(action.cards) - CHASE_COST * chases

    return min(legal, key=cost)


def iterate(root: Node, world: Game, rng: random.Random) -> None:
    """One ISMCTS iteration in one determinized world: select, expand, play out, back up."""
    node = root
    path: list[tuple[Node, int]] = []  # (node, the seat that chose its action)
    while world.result is None:
        legal = world.legal_actions()
        if len(legal) == 1:
            world.apply(legal[0])
            continue
        chooser = world.to_move
        assert chooser is not None
        untried = []
        for action in legal:
            child = node.children.get(str(action))
            if child is None:
                untried.append(action)
            else:
                child.available += 1
        if untried:
            action = rng.choice(untried)
            child = node.children[str(action)] = Node()
            world.apply(action)
            path.append((child, chooser))
            break
        action, node = max(((a, node.children[str(a)]) for a in legal), key=lambda pair: pair[1].ucb())
        world.apply(action)
        path.append((node, chooser))
    result = playout(world, rng)
    for visited, chooser in path:
        visited.visits += 1
        visited.reward += reward(result, chooser)


def search(rules: Rules, dealer: int, view: PlayerView, events: Sequence[AnyEvent], legal: list[str],
           rng: random.Random, playouts: int | None, stop_at: float) -> tuple[str, int]:
    """The action to play (one of ``legal``) and the iterations run: ``playouts`` of them (None: no limit),
    and none once ``time.monotonic()`` passes ``stop_at``."""
    root = Node()
    done = 0
    while (playouts is None or done < playouts) and time.monotonic() < stop_at:
        iterate(root, determinize(rules, view, events, rng, dealer=dealer), rng)
        done += 1
    if not root.children:
        return rng.choice(legal), done  # no time to think at all
    return max(legal, key=lambda a: root.children[a].visits if a in root.children else -1), done


class Player:
    """The bot's state across messages: the current game's rules, seat, events so far and random source."""

    def __init__(self, playouts: int | None, margin_ms: int) -> None:
        self.playouts = playouts
        self.margin_ms = margin_ms
        self.rng = random.Random(0)
        self.rules = Rules()
        self.dealer = 0
        self.events: list[AnyEvent] = []

    def start(self, game: GameStart) -> None:
        self.rules, self.dealer, self.events = game.rules, game.dealer, []
        self.rng.seed(game.seed)  # the same game and seed, the same choices (at a fixed number of playouts)

    def decide(self, request: Request, arrived: float) -> str:
        """The action for ``request``, which arrived at ``arrived`` (``time.monotonic()``)."""
        self.events.extend(request.events)
        if len(request.legal) == 1:
            return request.legal[0]
        action, _ = search(self.rules, self.dealer, request.view, self.events, request.legal, self.rng,
                           self.playouts, self.stop_time(request.time_ms, arrived))
        return action

    def stop_time(self, time_ms: int, arrived: float) -> float:
        """When to stop thinking (``time.monotonic()``) on a request of ``time_ms`` that arrived at ``arrived``."""
        return arrived + (time_ms - self.margin_ms - MARGIN_SHARE * time_ms) / 1000


def send(message: BotHello | Reply) -> None:
    sys.stdout.buffer.write(encoder.encode(message) + b"\n")
    sys.stdout.flush()  # the referee is waiting for the whole line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="An ISMCTS Durak bot (protocol 2 over stdin/stdout).")
    parser.add_argument("--playouts", type=int, default=None, metavar="N",
                        help="iterations per decision (fixed effort; the deadline stays a cap). "
                             "Default: think until the deadline, less the margin.")
    parser.add_argument("--margin-ms", type=int, default=DEFAULT_MARGIN_MS, metavar="MS",
                        help=f"kept back from each request's time_ms, plus {MARGIN_SHARE * 100:.0f}%% of it "
                             f"(default {DEFAULT_MARGIN_MS})")
    args = parser.parse_args(argv)
    if args.playouts is not None and args.playouts < 1:
        parser.error("--playouts must be at least 1")
    player = Player(args.playouts, args.margin_ms)
    for line in sys.stdin.buffer:
        arrived = time.monotonic()
        try:
            message = referee_decoder.decode(line)
        except msgspec.ValidationError:
            continue  # a message type (or field value) of a newer protocol: ignore it
        if isinstance(message, Hello):
            send(BotHello(protocol=PROTOCOL_VERSION, name="search", version="1.0"))
        elif isinstance(message, GameStart):
            player.start(message)
        elif isinstance(message, Request):
            send(Reply(id=message.id, action=player.decide(message, arrived)))
        elif isinstance(message, Shutdown):
            return
        elif isinstance(message, GameOver):
            player.events = []


if __name__ == "__main__":
    main()
