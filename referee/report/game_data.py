"""One game as the replay viewer draws it: its steps, the players, the result, times, verdicts and strikes.

Every string of it is made visible (:func:`referee.text.visible_data`): a bot's stderr, names and reasons are
shown with their control and bidirectional characters escaped, here, once, for every page that draws it (the web
arena's and the offline report's), so that the viewer's script only ever sets text.

Bots' stderr is private to its bot: a seat's view carries that seat's own, the all-seeing view none unless
the organizer asks (``private``). In a seat's view another seat's forfeit reason is left out, as the game
over message left it out for that seat (it may quote the offender's stderr or name its cards).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.events import ActionTaken
from protocol.records import StderrChunk
from referee.report.steps import Step, replay_steps
from referee.results.narrate import describe_result
from referee.results.packed import pack
from referee.results.replay import parse_replay
from referee.results.rows import StoredReplay
from referee.text import visible, visible_data

#: The shape of the viewer's data; bumped when the page must change with it (2: its ``title``; 3: each step's
#: events ``ev`` in the protocol's form, for the page to tell in the narration's words, and the names as ``shown``).
GAME_DATA_VERSION = 3


@dataclass(frozen=True)
class SeatTraces:
    """What a stored game keeps per seat beside its replay.

    Attributes:
        stderr: each seat's stderr chunks, as stored.
        strikes: per seat, replies after the move time inside the grace (from the result record).
        move_us: per seat, each decision's time in microseconds, as stored: seat ``w``'s ``i``-th decision
            took ``move_us[w][i]``, which the ``i``-th step ``w`` chose in carries as ``u``.
    """

    stderr: Sequence[list[StderrChunk]] = ()
    strikes: Sequence[int] | None = None
    move_us: Sequence[Sequence[int]] | None = None


NO_TRACES = SeatTraces()


def game_data(replay: bytes, traces: SeatTraces = NO_TRACES, *, seat: int | None = None, private: bool = False,
              game_id: int | None = None, reasons: bool = True) -> dict[str, Any]:
    """The viewer's data for one stored game (``replay`` as JSON lines).

    Args:
        traces: what the store keeps per seat beside the replay (stderr, strikes, move times).
        seat: only what this seat saw; None for every hand.
        private: with ``seat`` None, every bot's stderr too (the organizer's own copy).
        game_id: the game's number in its tournament (as ``durak games`` lists it), when it has one.
        reasons: False drops every verdict's reason, ``seat``'s own too (the web's public view: a crash reason
            quotes the bot's stderr); the kinds stay.
    """
    stderr, strikes, move_us = traces.stderr, traces.strikes, traces.move_us
    header, events, end = parse_replay(replay)
    replayed = replay_steps(header, events, end, seat)
    result = end.result
    verdicts = list(end.verdicts)
    if seat is not None or not reasons:
        own = seat if reasons else None  # the one seat whose reasons stay, if any
        if result.forfeit_seat != own:
            result = msgspec.structs.replace(result, reason=None)
        verdicts = [msgspec.structs.replace(v, reason="") if v.seat != own else v for v in verdicts]
    names = [visible(name) for name in header.names]
    shown = shown_names(names)
    shown_stderr = [stderr[s] if s < len(stderr) and (s == seat or (seat is None and private)) else []
                    for s in range(len(header.names))]
    data: dict[str, Any] = visible_data({  # every string: names, stderr, reasons, the told result, the log lines
        "v": GAME_DATA_VERSION,
        "id": game_id,
        "title": game_title(game_id, names),
        "game": header.game,
        "deal": header.deal,
        "names": names,
        "shown": shown,
        "rules": msgspec.to_builtins(header.rules),
        "dealer": header.dealer,
        "seat": seat,
        "deck": header.rules.deck,
        "trump": replayed.trump,
        "trump_suit": replayed.trump_suit,
        "steps": _steps(replayed.steps, len(names), move_us or ()),
        "result": msgspec.to_builtins(result),
        "told": describe_result(result, shown),
        "verdicts": msgspec.to_builtins(verdicts),
        "times": msgspec.to_builtins(end.times),
        "strikes": None if strikes is None else list(strikes),
        "stderr": [[{"after": c.after, "text": c.text} for c in chunks] for chunks in shown_stderr],
    })
    return data


#: A view's head as :func:`game_data` writes it, up to its title's value: the keys before ``title`` hold no string.
_HEAD = re.compile(rb'\{"v":\d+,"id":(?:-?\d+|null),"title":"')
_BACKSLASH = 0x5C
#: How much of a view's head is looked at for its title (six names of 64 characters, each escaped, fit).
_HEAD_BYTES = 4096


class _Titled(msgspec.Struct):
    title: str = ""


def view_title(view: bytes | msgspec.Raw) -> str:
    """The ``title`` of a view's JSON, read from the view's head: a kept view is 30-95 KB, decoding all of it to
    show its title took 90 us of a replay page's build, and its head 5. A view of another shape, or whose title
    does not end within its first :data:`_HEAD_BYTES`, is decoded whole."""
    head = bytes(memoryview(view)[:_HEAD_BYTES])
    start = _HEAD.match(head)
    if start is not None:
        end = start.end()
        while (end := head.find(b'"', end)) >= 0:
            escapes = 0  # the backslashes just before this quote: an odd number escape it
            while head[end - 1 - escapes] == _BACKSLASH:
                escapes += 1
            if escapes % 2 == 0:
                return str(msgspec.json.decode(head[start.end() - 1:end + 1], type=str))
            end += 1
    return msgspec.json.decode(view, type=_Titled).title


def game_title(number: int | None, names: Sequence[str]) -> str:
    """A game as its pages title it: its number (``durak games``' or the arena's) and who sat at the table, in seat
    order ("Game 12: alpha@1 vs beta@2"), never the referee's internal key."""
    players = " vs ".join(names)
    return players if number is None else f"Game {number}: {players}"


def shown_names(names: Sequence[str]) -> list[str]:
    """The seats' names as the viewer shows them in text: a name two seats share (two copies of one bot) gets its
    seat number, "rand@1 (seat 3)", so that the seats can be told apart (as the card table's table.js does)."""
    return [f"{name} (seat {s})" if names.count(name) > 1 else name for s, name in enumerate(names)]


def _steps(steps: Sequence[Step], players: int, move_us: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """The steps for the page: each frame, its events as the protocol writes them (``ev``: the page tells them in
    the narration's words, :data:`referee.results.narrate.PHRASES`, its cards as drawn), who chose what (``w``,
    ``a``) and in how many microseconds (``u``, where the times are known), and the number of events up to the
    step's end (``e``), which places the bots' stderr chunks."""
    out: list[dict[str, Any]] = []
    events = 0
    decided = [0] * players
    for step in steps:
        events += len(step.events)
        shown: dict[str, Any] = {"f": step.frame, "e": events, "ev": msgspec.to_builtins(step.events)}
        chosen = step.events[0] if step.events else None
        if isinstance(chosen, ActionTaken):
            shown.update(w=chosen.seat, a=chosen.action)
            times = move_us[chosen.seat] if chosen.seat < len(move_us) else ()
            if decided[chosen.seat] < len(times):
                shown["u"] = times[decided[chosen.seat]]
            decided[chosen.seat] += 1
        out.append(shown)
    return out


def stored_traces(stored: StoredReplay) -> SeatTraces:
    """What the store keeps per seat beside a game's replay."""
    return SeatTraces(stored.stderr, stored.record.strikes, stored.move_us)


def public_view(stored: StoredReplay, number: int) -> dict[str, Any]:
    """A public league game's view as anyone may see it: every hand, no stderr and no verdict's reason (a crash
    reason quotes the bot's stderr); the view the web shows first, and the one its publisher keeps as bytes."""
    return game_data(stored.replay, stored_traces(stored), reasons=False, game_id=number)


def encode_view(view: dict[str, Any]) -> bytes:
    """A view as kept (``replay_views.body``): its JSON, as the web encodes it, packed."""
    return pack(msgspec.json.encode(view))
