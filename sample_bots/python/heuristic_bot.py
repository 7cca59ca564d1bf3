#!/usr/bin/env python3
"""A Durak bot with simple card-saving heuristics for every variant. Standard library only.

Every card has a worth: its rank, plus 100 for a trump. The bot plays the cheapest card that does
the job, sheds low cards early, and keeps its trumps for later. It reads only ``id``, ``legal``
and ``view`` of a request, and it always answers one of the ``legal`` strings: it picks among them
and never builds an action of its own.

    .venv/bin/durak play "{python} sample_bots/python/heuristic_bot.py" "{python} sample_bots/python/random_bot.py"

Crash mode, for tests: with the environment variable DURAK_SAMPLE_CRASH=1 it raises at its first request
(a traceback on stderr, whose last line the referee quotes in the crash verdict).
"""

import json
import os
import random
import sys

RANKS = "23456789TJQKA"  # T is the ten
TRUMP_BONUS = 100  # any trump is worth more than any plain card
BIG_STOCK = 12  # "early in the game": at least this many cards left to draw
LONG_GAME = 250  # own decisions: a game this long is probably going round in circles


def worth(card: str, trump_suit: str) -> int:
    """How much a card is worth keeping. In fools_fool diamonds are trump (they beat hearts and
    spades, though not clubs), and ranking them above every other card works well there too."""
    return RANKS.index(card[0]) + (TRUMP_BONUS if card[1] == trump_suit else 0)


def choose(view: dict, legal: list[str], variant: str, moves: int, rng: random.Random) -> str:
    """The action to play (always one string of ``legal``); ``moves``: this bot's decisions so far this game."""
    if moves > LONG_GAME and rng.random() < 0.2:
        # Fixed rules can loop forever (four aces nobody can beat, taken and led again and again)
        # until the referee's action cap calls a draw; an occasional random move breaks the loop.
        return rng.choice(legal)
    trump = view["trump_suit"]

    def of_kind(kind: str) -> list[str]:
        return [action for action in legal if action.split()[0] == kind]

    def cost(action: str) -> int:
        """The worth of the dearest card an action gives up (for "beat T C", only C)."""
        kind, *cards = action.split()
        if kind == "beat":
            cards = cards[1:]
        return max((worth(card, trump) for card in cards), default=0)

    def chases(action: str) -> int:
        """Chase Durak: laying k >= 2 cards at once scores k // 2 chases, and the FEWEST chases lose."""
        return (len(action.split()) - 1) // 2 if variant == "chase" else 0

    def cheapest(actions: list[str]) -> str:
        """Most chases first (chase only), then the cheapest cards, then as many of them as possible."""
        return min(actions, key=lambda a: (-chases(a), cost(a), -len(a.split())))

    if variant == "fools_fool":
        # Lead the cheapest card (diamonds last); beat the pile's top with the cheapest card that can.
        # A player who can beat must, so there is no "take" to choose: the referee takes for you.
        return cheapest(of_kind("lead") or of_kind("beat-top"))

    stock = view["stock"]
    early = stock >= BIG_STOCK

    # Attacking: the lowest rank, with every plain card of it (trumps stay home unless nothing else).
    if of_kind("attack"):
        return cheapest(of_kind("attack"))

    # Throwing in: "pass" and any throws (with none, "pass" is the only choice: the referee still asks).
    if "pass" in legal:
        throws = of_kind("throw")
        if not throws:
            return "pass"
        best = cheapest(throws)
        if variant == "chase":  # a single card scores nothing: keep it, it may make a pair later
            return best if chases(best) else "pass"
        if stock == 0 or cost(best) < (RANKS.index("J") if early else TRUMP_BONUS):
            return best  # low plain cards early, any plain card later, anything in the endgame
        return "pass"

    # Defending: transfer when that is cheaper than beating; else beat as cheaply as possible, or take.
    beats = sorted(of_kind("beat"), key=lambda a: (cost(a), -worth(a.split()[1], trump)))  # then dearest target
    transfer = min(of_kind("transfer"), key=cost, default=None)  # perevodnoy (and chase with allow_transfer)
    if transfer and (not beats or cost(transfer) < cost(beats[0])) and (cost(transfer) < TRUMP_BONUS or not early):
        return transfer  # the attack moves on to the next player; early on, never give up a trump for that
    if "take" not in legal:
        return (beats or legal)[0]  # not reached: in the bout games a defender may always take
    if not beats or not can_beat_all(view, legal):
        return "take"  # some card would stay unbeaten anyway: take now instead of spending cards
    beat, beating_card = beats[0], beats[0].split()[2]
    if early and worth(beating_card, trump) >= TRUMP_BONUS + RANKS.index("T") and len(view["table"]) <= 2:
        return "take"  # a card or two is cheap to take back; a high trump is not worth spending yet
    return beat


def can_beat_all(view: dict, legal: list[str]) -> bool:
    """Can every unbeaten table card get a beating card of its own? Greedy: dearest target first."""
    trump = view["trump_suit"]
    beaters: dict[str, list[str]] = {}
    for action in legal:
        kind, *cards = action.split()
        if kind == "beat":
            beaters.setdefault(cards[0], []).append(cards[1])
    used: set[str] = set()
    unbeaten = [attack for attack, beating in view["table"] if beating is None]
    for target in sorted(unbeaten, key=lambda card: -worth(card, trump)):
        free = [card for card in beaters.get(target, []) if card not in used]
        if not free:
            return False
        used.add(min(free, key=lambda card: worth(card, trump)))
    return True


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()  # the referee is waiting for the whole line


def main() -> None:
    rng = random.Random(0)  # reseeded from each game's seed: the same game, the same choices
    variant, moves = "podkidnoy", 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message.get("type")
        if kind == "hello":
            send({"type": "hello", "protocol": 2, "name": "heuristic", "version": "1.0"})
        elif kind == "game":
            variant, moves = message["rules"]["variant"], 0
            rng.seed(message["seed"])
        elif kind == "request":
            if os.environ.get("DURAK_SAMPLE_CRASH") == "1":
                raise RuntimeError("sample crash: DURAK_SAMPLE_CRASH=1 crashes the bot at its first request")
            moves += 1
            action = choose(message["view"], message["legal"], variant, moves, rng)
            send({"type": "action", "id": message["id"], "action": action})
        elif kind == "shutdown":
            return
        # game_over, and any message type this bot does not know, needs no reply


if __name__ == "__main__":
    main()
