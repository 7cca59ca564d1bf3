"""The analysis of one seat's game: every decision judged from the seat's observation, marks, and a summary.

:func:`analyze_game` walks the stored game (:func:`referee.analysis.observe.seat_decisions`) and hands each
decision's :class:`~referee.analysis.observe.Observation`, and nothing else, to
:func:`referee.analysis.evaluate.evaluate`. The result is data (msgspec structs): the CLI prints it as a table
or JSON, and the replay viewer shows its marks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Final

import msgspec

from referee.analysis.evaluate import ActionValue, Method, Settings, WorldSource, evaluate, sampled_world
from referee.analysis.marks import THRESHOLDS, mark_of
from referee.analysis.observe import Decision, seat_decisions
from referee.rating.bradley_terry import Z95
from referee.results.replay import parse_replay

#: What a value is, for readers of the JSON (referee/analysis/playout.py says why).
VALUE_MEANING: Final = "the chance of not being the fool (a draw counts 1/2)"
#: Worst decisions listed in a summary.
WORST_SHOWN: Final = 5


class Judgement(msgspec.Struct, frozen=True):
    """One decision of the seat.

    Attributes:
        step: the game's decision index over all seats, from 1 (the replay viewer's step in bout games).
        number: the seat's own decision number, from 1.
        taken, best: the action played and the best one found (equal to ``taken`` when it is the best).
        loss, error: the taken action's loss against the best, and the loss's 95% error bar (0 when exact).
        mark: blunder, mistake, inaccuracy or None (referee/analysis/marks.py).
    """

    step: int
    number: int
    method: Method
    taken: str
    best: str
    loss: float
    error: float
    mark: str | None
    values: list[ActionValue]


class Summary(msgspec.Struct, frozen=True):
    """The seat's accuracy: mean loss per decision that had a choice (forced ones are left out: they would
    only dilute it), its 95% interval, the marks counted and the worst decisions (their ``step``; the surest
    losses first, by the loss less its error bar, so that sampling noise does not fill the list)."""

    decisions: int
    choices: int
    exact: int
    mean_loss: float
    interval: float
    marks: dict[str, int]
    worst: list[int]


class GameAnalysis(msgspec.Struct, frozen=True):
    """A seat's game, analyzed."""

    game: str
    bot: str
    seat: int
    variant: str
    players: int
    value: str
    playouts: int
    seed: int
    thresholds: dict[str, float]
    decisions: list[Judgement]
    summary: Summary


def analyze_game(replay: bytes, seat: int, settings: Settings, worlds: WorldSource = sampled_world
                 ) -> GameAnalysis:
    """Every decision of ``seat`` in the game of ``replay`` (JSON lines), judged; see the module's docstring.

    :raises ReplayError: the replay does not decode, or does not follow the rules from its deal.
    """
    header, _, _ = parse_replay(replay)
    judged = [judge(decision, settings, worlds) for decision in seat_decisions(replay, seat)]
    return GameAnalysis(game=header.game, bot=header.names[seat], seat=seat, variant=header.rules.variant,
                        players=len(header.names), value=VALUE_MEANING, playouts=settings.playouts,
                        seed=settings.seed, thresholds=dict(THRESHOLDS), decisions=judged, summary=summarize(judged))


def judge(decision: Decision, settings: Settings, worlds: WorldSource = sampled_world) -> Judgement:
    """One decision: its evaluation, the taken action's loss and mark."""
    evaluation = evaluate(decision.observation, settings, worlds)
    number = decision.observation.number + 1
    taken, best = evaluation.of(decision.taken), evaluation.best
    if taken is None or best is None:  # forced
        return Judgement(step=decision.step, number=number, method=evaluation.method, taken=decision.taken,
                         best=decision.taken, loss=0.0, error=0.0, mark=None, values=evaluation.values)
    return Judgement(step=decision.step, number=number, method=evaluation.method, taken=decision.taken,
                     best=best.action if taken.loss > 0 else taken.action, loss=taken.loss, error=taken.error,
                     mark=mark_of(taken.loss, taken.error), values=evaluation.values)


def summarize(judged: Sequence[Judgement]) -> Summary:
    chosen = [j for j in judged if j.method != "forced"]
    mean, interval = mean_interval(j.loss for j in chosen)
    marks = {mark: sum(1 for j in chosen if j.mark == mark) for mark, _ in THRESHOLDS}
    worst = sorted(chosen, key=lambda j: (j.error - j.loss, -j.loss))[:WORST_SHOWN]
    return Summary(decisions=len(judged), choices=len(chosen), exact=sum(1 for j in chosen if j.method == "exact"),
                   mean_loss=mean, interval=interval, marks=marks, worst=[j.step for j in worst if j.loss > 0])


def mean_interval(values: Iterable[float]) -> tuple[float, float]:
    """The mean of ``values`` and its 95% half-width (1.96 standard errors; 0 for fewer than 2 values)."""
    data = list(values)
    if not data:
        return 0.0, 0.0
    mean = math.fsum(data) / len(data)
    if len(data) < 2:
        return mean, 0.0
    variance = math.fsum((x - mean) ** 2 for x in data) / (len(data) - 1)
    return mean, Z95 * math.sqrt(variance / len(data))


def pooled_interval(games: Iterable[tuple[float, int]]) -> tuple[float, float]:
    """Mean loss per decision over several games, given each game's (total loss, decisions), and its 95%
    half-width with games as clusters (a ratio estimator's standard error): a game's decisions are not
    independent of each other, its games are."""
    data = [(loss, count) for loss, count in games if count]
    decisions = sum(count for _, count in data)
    if not decisions:
        return 0.0, 0.0
    mean = math.fsum(loss for loss, _ in data) / decisions
    n = len(data)
    if n < 2:
        return mean, 0.0
    spread = math.fsum((loss - mean * count) ** 2 for loss, count in data) * n / (n - 1)
    return mean, Z95 * math.sqrt(spread) / decisions
