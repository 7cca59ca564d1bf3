"""The exact endgame solver (referee/analysis/exact.py) against plain minimax, and where the analysis uses it."""

from __future__ import annotations

import random

import pytest
from scenario import position

from protocol.rules import Rules
from referee.analysis.evaluate import Settings, evaluate
from referee.analysis.exact import Solver, after, brute_force, cards_left, is_endgame
from referee.analysis.observe import observe
from referee.analysis.playout import cheap_action
from referee.engine import BoutGame, SeededRng, new_game

#: Endgames this small are settled by brute force in milliseconds.
SMALL = 6


def endgame(variant: str, seed: int, most: int) -> BoutGame | None:
    """A 2-player game played (mostly by the playout policy) until the stock is empty and at most ``most`` cards
    are left in hands and on the table; None if it ended first."""
    game = new_game(Rules(variant=variant), 2, SeededRng(seed))  # type: ignore[arg-type]
    assert isinstance(game, BoutGame)
    rng = random.Random(seed)
    while game.result is None and not (is_endgame(game) and cards_left(game) <= most):
        legal = game.legal_actions()
        game.apply(rng.choice(legal) if rng.random() < 0.3 else cheap_action(legal, game.trump, len(game.stock)))
    return game if game.result is None else None


@pytest.mark.parametrize("variant", ["podkidnoy", "perevodnoy", "chase"])
def test_the_solver_agrees_with_brute_force_on_every_small_endgame_tried(variant: str) -> None:
    tried = 0
    for seed in range(40):
        game = endgame(variant, seed, SMALL)
        if game is None:
            continue
        game.events = []
        for seat in (0, 1):
            solver = Solver(seat)
            assert solver.action_values(game) == [brute_force(after(game, a), seat) for a in game.legal_actions()]
            assert solver.value(game) == brute_force(game, seat)
        tried += 1
    assert tried >= 15


def test_a_won_endgame_is_worth_one_to_the_winner_and_nothing_to_the_loser() -> None:
    """Spades are trumps. Seat 0 leads the ace of trumps: seat 1 must take it, seat 0 leads the six of clubs and
    is out, seat 1 the fool. Leading the six of clubs first lets seat 1 beat it and lead the eight of diamonds,
    which the ace beats: both are out at once, a draw (1/2 each)."""
    game = position({0: "AS 6C", 1: "7C 8D"}, trump="9S", attacker=0)
    assert [str(a) for a in game.legal_actions()] == ["attack 6C", "attack AS"]
    assert Solver(0).action_values(game) == [0.5, 1.0]
    assert Solver(1).action_values(game) == [0.5, 0.0]


def test_the_analysis_says_exact_only_within_the_bound_and_otherwise_estimates() -> None:
    game = endgame("podkidnoy", 3, 12)
    assert game is not None and game.to_move is not None
    while len(game.legal_actions()) == 1:
        game.apply(game.legal_actions()[0])
    seen = observe(game, game.to_move, 0)
    size = cards_left(game)
    exact = evaluate(seen, Settings(playouts=4, exact_cards=size))
    assert exact.method == "exact"
    assert {v.value for v in exact.values} <= {0.0, 0.5, 1.0} and min(v.loss for v in exact.values) == 0.0
    assert all(v.error == 0.0 for v in exact.values)
    assert evaluate(seen, Settings(playouts=4, exact_cards=size - 1)).method == "estimate"
    assert evaluate(seen, Settings(playouts=4, exact_cards=size, node_budget=1)).method == "estimate"
