"""A bot's accuracy over a sample of its stored games: each game analyzed from its seat, in parallel, then per
variant its mean loss per decision with a 95% interval, and its worst decisions across games (the surest
losses first: by the loss less its error bar, so that sampling noise does not fill the list).

The interval treats games as clusters (:func:`referee.analysis.analyze.pooled_interval`): the decisions of one
game share its deal and its opponents, the games do not.

Where the games run is the caller's choice, any :class:`concurrent.futures.Executor`: this machine's processes
(``--jobs``) or a Dask cluster's (``--cluster``, through its client's executor). A game's analysis depends only
on its replay, its seat and the settings, so the result is the same wherever it ran; the results are put back in
the sample's order.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, as_completed
from typing import Final, NamedTuple

import msgspec

from referee import __version__
from referee.analysis.analyze import GameAnalysis, analyze_game, pooled_interval
from referee.analysis.evaluate import Settings
from referee.analysis.marks import THRESHOLDS

#: Worst decisions listed across the games.
WORST_ACROSS: Final = 10

Progress = Callable[[int, int], None]  # (games analyzed, games in all)


class GameJob(NamedTuple):
    """One stored game to analyze: its number (as ``durak games`` lists it), its replay and the bot's seat."""

    number: int
    replay: bytes
    seat: int


class VariantAccuracy(msgspec.Struct, frozen=True):
    variant: str
    games: int
    decisions: int  # with a choice
    mean_loss: float
    interval: float  # 95% half-width, games as clusters
    marks: dict[str, int]


class WorstDecision(msgspec.Struct, frozen=True):
    game: int  # its number, for durak replay / durak analyze
    step: int  # the game's decision index (Judgement.step)
    taken: str
    best: str
    loss: float
    error: float
    method: str
    mark: str | None


class BatchAnalysis(msgspec.Struct, frozen=True):
    bot: str
    games: int
    playouts: int
    seed: int
    variants: list[VariantAccuracy]
    worst: list[WorstDecision]


def sample(numbers: Sequence[int], count: int, seed: int) -> list[int]:
    """``count`` of the game ``numbers`` (all of them if fewer), drawn by ``seed``, in order."""
    if len(numbers) <= count:
        return list(numbers)
    return sorted(random.Random(seed).sample(list(numbers), count))


def analyze_games(jobs: Sequence[GameJob], settings: Settings, pool: Executor | None = None,
                  progress: Progress | None = None) -> list[tuple[int, GameAnalysis]]:
    """Each game's analysis with its number, in the order of ``jobs``: on ``pool`` (None: in this process)."""
    done: dict[int, GameAnalysis] = {}
    if pool is None:
        for job in jobs:
            done[job.number] = analyze_game(job.replay, job.seat, settings)
            if progress is not None:
                progress(len(done), len(jobs))
    else:
        futures = {pool.submit(analyze_game, job.replay, job.seat, settings): job.number for job in jobs}
        for future in as_completed(futures):
            done[futures[future]] = future.result()
            if progress is not None:
                progress(len(done), len(jobs))
    return [(job.number, done[job.number]) for job in jobs]


def referee_version() -> str:
    """This process's durak-referee version: run on every Dask worker before its first game, since another
    version's analysis need not be this one's."""
    return __version__


def accuracy(bot: str, analyzed: Sequence[tuple[int, GameAnalysis]], settings: Settings) -> BatchAnalysis:
    """Per variant, the mean loss per decision with its interval and the marks; the worst decisions overall."""
    variants: list[VariantAccuracy] = []
    for variant in sorted({a.variant for _, a in analyzed}):
        games = [a for _, a in analyzed if a.variant == variant]
        mean, interval = pooled_interval((a.summary.mean_loss * a.summary.choices, a.summary.choices)
                                         for a in games)
        marks = {mark: sum(a.summary.marks[mark] for a in games) for mark, _ in THRESHOLDS}
        variants.append(VariantAccuracy(variant=variant, games=len(games),
                                        decisions=sum(a.summary.choices for a in games), mean_loss=mean,
                                        interval=interval, marks=marks))
    decisions = [WorstDecision(game=number, step=j.step, taken=j.taken, best=j.best, loss=j.loss, error=j.error,
                               method=j.method, mark=j.mark)
                 for number, a in analyzed for j in a.decisions if j.loss > 0]
    worst = sorted(decisions, key=lambda d: (d.error - d.loss, -d.loss, d.game, d.step))[:WORST_ACROSS]
    return BatchAnalysis(bot=bot, games=len(analyzed), playouts=settings.playouts, seed=settings.seed,
                         variants=variants, worst=worst)
