"""The value of a finished game to a seat, and the playout policy the estimates play games out with.

**Value: the chance of not being the fool, at every table size.** A game of Durak has one loser and no winner
to speak of; the referee's ratings count fools (``durak leaderboard``'s default mode), so a decision is judged
by how it moves the seat's chance of being that loser: 1 for a game it is not the fool of, 0 for one it is,
1/2 for a draw (no fool). At more than 2 players an expected place would also rank the non-fools, which the
game itself does not care about and which would mix a second aim into every loss.

**Playout policy: the search bot's card-saving policy** (sample_bots/python/search_bot.py ``cheap_action``,
restated here because the sample is a program for authors to copy, not a module of the referee): every seat
gives up its cheapest card first, then the most cards; passing and taking cost a card's worth, lower while the
stock is big; once the stock is empty it throws and beats with anything; in chase Durak the most chases come
first; one move in ten is a random legal one. Far stronger than random playouts, and cheap.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from protocol.actions import BEAT, PASS, TAKE, Action
from protocol.views import GameResult
from referee.engine import BoutGame, Game

RANDOM_SHARE: Final = 0.1
TRUMP_BONUS: Final = 13
BIG_STOCK: Final = 12
PASS_EARLY, TAKE_EARLY = 9, TRUMP_BONUS + 7  # throw below a jack; beat with at most the eight of trumps
PASS_LATE, TAKE_LATE = TRUMP_BONUS, TRUMP_BONUS + 10  # throw any plain card; beat with at most the queen of trumps
ENDGAME: Final = 2 * TRUMP_BONUS  # throw and beat with anything
CHASE_COST: Final = 8 * 4 * TRUMP_BONUS  # chase Durak: a chase is worth more than any card
FOOLS_FOOL_TRUMP: Final = 1  # diamonds (protocol.cards: suits C, D, H, S are 0-3; a card is rank * 4 + suit)


def value_for(result: GameResult, seat: int) -> float:
    """1 when ``seat`` is not the fool, 0 when it is, 1/2 for a draw (no fool)."""
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
            game.apply_unchecked(rng.choice(legal))
        else:
            stock = len(bout.stock) if bout is not None else 0
            game.apply_unchecked(cheap_action(legal, trump, stock, chase))
    return game.result


def _worth(card: int, trump: int) -> int:
    """A card's rank index (0 for a two), plus TRUMP_BONUS for a trump."""
    return (card >> 2) + (TRUMP_BONUS if card & 3 == trump else 0)


def cheap_action(legal: Sequence[Action], trump: int, stock: int, chase: bool = False) -> Action:
    """The action that gives up the cheapest card, then the most cards (see the module's docstring)."""
    pass_cost, take_cost = (PASS_EARLY, TAKE_EARLY) if stock >= BIG_STOCK else (PASS_LATE, TAKE_LATE) \
        if stock else (ENDGAME, ENDGAME)

    def cost(action: Action) -> int:
        if action.kind == TAKE:
            return take_cost * 8
        if action.kind == PASS:
            return pass_cost * 8
        if action.kind == BEAT:
            return _worth(action.cards[1], trump) * 8
        chases = len(action.cards) // 2 if chase else 0
        return max(_worth(card, trump) for card in action.cards) * 8 - len(action.cards) - CHASE_COST * chases

    return min(legal, key=cost)
