"""A seat's analysis (:class:`~referee.analysis.analyze.GameAnalysis`) drawn on the replay viewer's data of that seat:
each of its decisions judged at the step where it chose. One home for ``durak analyze --html`` and the web arena's
replays (their seat views with an analysis an author asked for)."""

from __future__ import annotations

from typing import Any

import msgspec

from referee.analysis.analyze import GameAnalysis
from referee.report.game_data import NO_TRACES, SeatTraces, game_data

_DECODER = msgspec.json.Decoder(GameAnalysis)


def decode_analysis(data: bytes) -> GameAnalysis:
    """An analysis as stored (JSON). :raises msgspec.DecodeError: it is not one."""
    return _DECODER.decode(data)


def with_marks(data: dict[str, Any], analysis: GameAnalysis) -> dict[str, Any]:
    """The viewer's data for the analyzed seat's view with each of its decisions judged: the step where the
    seat chose carries ``j`` (``m`` mark or null, ``l`` loss, ``e`` error bar, ``b`` best action, ``k`` method).
    The seat's n-th step is its n-th decision (a step starts with the action chosen in it).

    :raises ValueError: the analysis's decisions are not the seat's steps (another game's; nothing is marked then).
    """
    steps = viewer_steps(data, analysis.seat)
    if len(steps) != len(analysis.decisions):
        raise ValueError(f"{len(analysis.decisions)} decisions analyzed, {len(steps)} made by seat {analysis.seat}")
    for index, judged in zip(steps, analysis.decisions, strict=True):
        step = data["steps"][index]
        step["j"] = {"m": judged.mark, "l": round(judged.loss, 4), "e": round(judged.error, 4), "b": judged.best,
                     "k": judged.method}
    return data


def viewer_steps(data: dict[str, Any], seat: int) -> list[int]:
    """The viewer's step of each decision of ``seat``, in order: its n-th step is its n-th decision (a step starts
    with the action chosen in it)."""
    return [index for index, step in enumerate(data["steps"]) if step.get("w") == seat]


def marked_view(replay: bytes, analysis: GameAnalysis, traces: SeatTraces = NO_TRACES, *, game_id: int | None = None,
                reasons: bool = True) -> dict[str, Any]:
    """The analyzed seat's view of the game ``replay`` (JSON lines) with its marks; ``traces`` and ``reasons`` as
    :func:`~referee.report.game_data.game_data` takes them (a viewer who is not the seat's author gets neither the
    seat's stderr nor its verdict's reason)."""
    return with_marks(game_data(replay, traces, seat=analysis.seat, game_id=game_id, reasons=reasons), analysis)
