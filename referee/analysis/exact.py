"""Exact values of 2-player endgames: once the stock is empty every card is known to both seats, so the position
is a game of perfect information and a search over the engine settles it.

:func:`solve` is a memoized minimax: a transposition table keyed by :func:`state_key` (everything that decides
the rest of the game: both hands, the table, the bout's roles and phase, chases), and a cut once the side to move
reaches its best possible value (the value is 0, 1/2 or 1 to the seat, and the game is zero-sum at 2 players).
:func:`brute_force` is the same minimax with neither, the reference the solver is checked against.

Ignored, on purpose: the engine's ``max_actions`` cap (5000 decisions), which no endgame comes near.
"""

from __future__ import annotations

from typing import Final

from protocol.actions import Action
from referee.analysis.playout import value_for
from referee.engine import BoutGame

#: The largest endgame (cards in both hands and on the table) solved exactly; past it a decision is estimated.
#: bench/bench_analysis.py ``exact`` measures it (README, "Post-game analysis"): up to 10 cards every endgame
#: took at most 0.06 s of one core (compiled engine); at 12, 66 of 68 were solved within NODE_BUDGET, the
#: slowest in 0.9 s.
EXACT_CARDS: Final = 12
#: A cap on the positions one decision's solve may visit (about a second of one core): an endgame within
#: EXACT_CARDS that branches unusually widely is estimated instead of holding the analysis up.
NODE_BUDGET: Final = 200_000

StateKey = tuple[int, int, int | None, str, tuple[int, ...], tuple[int | None, ...], int, int, bool, int,
                 tuple[int, ...]]


class BudgetExceeded(Exception):
    """The solve visited more than its node budget."""


def is_endgame(game: BoutGame) -> bool:
    """2 players, the stock empty: every card is known to both seats."""
    return game.players == 2 and not game.stock and game.result is None


def cards_left(game: BoutGame) -> int:
    """Cards in both hands and on the table: the size of the endgame."""
    return sum(hand.bit_count() for hand in game.hands) + game.table_cards.bit_count()


def state_key(game: BoutGame) -> StateKey:
    """What decides the rest of a 2-player endgame. The discard is every other card, and nobody is out before
    the end at 2 players, so neither needs a place in it."""
    return (game.hands[0], game.hands[1], game.to_move, game.phase, tuple(game.attacks), tuple(game.defences),
            game.attacker, game.defender, game.taking, game.bout_limit, tuple(game.chases))


class Solver:
    """Exact values for one seat, with a transposition table kept across solves of the same game."""

    def __init__(self, seat: int, budget: int = NODE_BUDGET) -> None:
        self.seat = seat
        self.budget = budget
        self.nodes = 0
        self.table: dict[StateKey, float] = {}

    def value(self, game: BoutGame) -> float:
        """The value of ``game`` to the seat with best play by both.

        :raises BudgetExceeded: more than ``budget`` positions visited since the solver was made.
        """
        if game.result is not None:
            return value_for(game.result, self.seat)
        key = state_key(game)
        known = self.table.get(key)
        if known is not None:
            return known
        self.nodes += 1
        if self.nodes > self.budget:
            raise BudgetExceeded
        maximizing = game.to_move == self.seat
        enough = 1.0 if maximizing else 0.0
        best = 0.0 if maximizing else 1.0
        for action in game.legal_actions():
            child = after(game, action)
            found = self.value(child)
            best = max(best, found) if maximizing else min(best, found)
            if best == enough:
                break
        self.table[key] = best
        return best

    def action_values(self, game: BoutGame) -> list[float]:
        """The exact value to the seat of each legal action of ``game``, in the engine's order."""
        return [self.value(after(game, action)) for action in game.legal_actions()]


def after(game: BoutGame, action: Action) -> BoutGame:
    child = game.copy()
    child.apply_unchecked(action)
    return child


def brute_force(game: BoutGame, seat: int) -> float:
    """The value of ``game`` to ``seat`` by plain minimax: no table, no cut. Exponential: small endgames only."""
    if game.result is not None:
        return value_for(game.result, seat)
    values = [brute_force(after(game, action), seat) for action in game.legal_actions()]
    return max(values) if game.to_move == seat else min(values)
