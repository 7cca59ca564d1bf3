"""The value of every legal action of one decision, from the deciding seat's observation alone.

**Estimated** (the general case): ``playouts`` worlds are sampled, each a deal of the cards the seat cannot see
consistent with everything it was told (:func:`referee.engine.determinize`), seeded by the analysis seed and the
seat's decision number only. In each world every legal action is played and the game played out
(:func:`referee.analysis.playout.playout`) with the same random stream for every action: common random numbers,
so the actions are compared on the same worlds and the same playout luck, and their differences (the losses)
carry far less noise than their values. A loss's error bar is the 95% half-width of its per-world differences
(1.96 standard errors).

**Exact** where the game allows it: at 2 players with the stock empty in a bout game every card is known to both
seats (the one world that fits the observation is the real one) and, up to
:data:`referee.analysis.exact.EXACT_CARDS` cards left, :class:`referee.analysis.exact.Solver` gives each action's
value with best play by both.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import msgspec

from protocol.actions import parse_action
from referee.analysis.exact import EXACT_CARDS, NODE_BUDGET, BudgetExceeded, Solver, cards_left, is_endgame
from referee.analysis.observe import Observation
from referee.analysis.playout import playout, value_for
from referee.engine import BoutGame, Game, determinize
from referee.engine.rng import derive_seed
from referee.rating.bradley_terry import Z95  # the error bar's width in standard errors, as the ratings'

#: Worlds sampled per decision by default: every legal action is played out once in each.
DEFAULT_PLAYOUTS: Final = 200

Method = Literal["exact", "estimate", "forced"]
#: Where an evaluation's worlds come from: a game consistent with the observation, dealt with the rng given.
WorldSource = Callable[[Observation, random.Random], Game]


@dataclass(frozen=True)
class Settings:
    """How hard to look: ``playouts`` worlds per decision, ``seed`` for the samples, exact endgames up to
    ``exact_cards`` cards (0: never) within ``node_budget`` positions."""

    playouts: int = DEFAULT_PLAYOUTS
    seed: int = 0
    exact_cards: int = EXACT_CARDS
    node_budget: int = NODE_BUDGET


class ActionValue(msgspec.Struct, frozen=True):
    """One legal action: its value to the seat (the chance of not being the fool), its loss against the best
    action and the loss's error bar (95% half-width; 0 when exact)."""

    action: str
    value: float
    loss: float
    error: float


class Evaluation(msgspec.Struct, frozen=True):
    """Every legal action's value, in the engine's order of the legal actions; ``method`` says how they were
    found. A forced decision (one legal action) has none."""

    method: Method
    values: list[ActionValue]

    @property
    def best(self) -> ActionValue | None:
        return min(self.values, key=lambda v: v.loss) if self.values else None

    def of(self, action: str) -> ActionValue | None:
        return next((v for v in self.values if v.action == action), None)


def sampled_world(observation: Observation, rng: random.Random) -> Game:
    """A world drawn from the observation alone: the cards the seat cannot see dealt at random."""
    return determinize(observation.rules, observation.view, observation.events, rng, dealer=observation.dealer)


def evaluate(observation: Observation, settings: Settings, worlds: WorldSource = sampled_world) -> Evaluation:
    """The value of every legal action of ``observation``'s decision (see the module's docstring)."""
    if len(observation.legal) == 1:
        return Evaluation(method="forced", values=[])
    if settings.exact_cards > 0 and observation.rules.is_bout_game and len(observation.view.hand_sizes) == 2 \
            and observation.view.stock == 0:
        exact = _exact(observation, settings, worlds)
        if exact is not None:
            return exact
    return _estimate(observation, settings, worlds)


def _exact(observation: Observation, settings: Settings, worlds: WorldSource) -> Evaluation | None:
    """The solver's values, or None past the size bound or the node budget."""
    world = worlds(observation, random.Random(0))  # every card is known: any rng deals the same world
    assert isinstance(world, BoutGame) and is_endgame(world)
    if cards_left(world) > settings.exact_cards:
        return None
    world.events = []  # the solver needs none; copies get cheaper
    try:
        values = Solver(observation.seat, settings.node_budget).action_values(world)
    except BudgetExceeded:
        return None
    top = max(values)
    return Evaluation(method="exact", values=[ActionValue(a, v, top - v, 0.0)
                                              for a, v in zip(observation.legal, values, strict=True)])


def _estimate(observation: Observation, settings: Settings, worlds: WorldSource) -> Evaluation:
    seat, legal = observation.seat, [parse_action(a) for a in observation.legal]
    results: list[list[float]] = [[] for _ in legal]
    for k in range(settings.playouts):
        world = worlds(observation, random.Random(derive_seed(settings.seed, "world", observation.number, k)))
        world.events = []  # playouts need none; copies get cheaper
        luck = derive_seed(settings.seed, "playout", observation.number, k)
        for index, action in enumerate(legal):
            game = world.copy()
            game.apply_unchecked(action)
            results[index].append(value_for(playout(game, random.Random(luck)), seat))
    means = [math.fsum(r) / len(r) for r in results]
    top = max(range(len(legal)), key=lambda i: means[i])
    return Evaluation(method="estimate", values=[
        ActionValue(text, means[i], means[top] - means[i], _error(results[top], results[i]))
        for i, text in enumerate(observation.legal)])


def _error(best: Sequence[float], other: Sequence[float]) -> float:
    """The 95% half-width of the mean of the per-world differences ``best - other``."""
    n = len(best)
    if n < 2:
        return math.inf
    diffs = [b - o for b, o in zip(best, other, strict=True)]
    mean = math.fsum(diffs) / n
    variance = math.fsum((d - mean) ** 2 for d in diffs) / (n - 1)
    return Z95 * math.sqrt(variance / n)
