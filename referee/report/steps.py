"""A stored game replayed through the engine: what the table shows after each decision.

The engine plays the recorded actions again from the recorded deck and dealer, so every frame is the
engine's own view of the table (no second copy of the rules), and every event the engine produces is
checked against the recorded one: a replay that does not follow the rules is a :class:`ReplayError`.
Seen from one seat, a frame is that seat's :meth:`Game.view` and its events pass through
:func:`protocol.events.event_for_seat`, so nothing the seat was not shown is in the steps.

A :class:`Step` is the events of one decision (and of what followed from it automatically) and the frame
after them; step 0 is the deal (Fool's Fool: one step per ladder card).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import msgspec

from protocol.actions import InvalidActionError, parse_action
from protocol.cards import card_names, parse_cards
from protocol.events import ActionTaken, AnyEvent, BoutStarted, CardKept, CardPlaced, LadderStarted, event_for_seat
from protocol.views import GameResult
from referee.engine import Game, IllegalActionError, new_game
from referee.engine.deal import first_after_fool
from referee.results.replay import ReplayError, ReplayHeader, ReplayResult

Frame = dict[str, Any]


class Step(NamedTuple):
    events: list[AnyEvent]  # as the viewer's seat was told them (all of them when all-seeing)
    frame: Frame


class Replayed(NamedTuple):
    steps: list[Step]
    trump: str | None  # the face-up trump card (bout games)
    trump_suit: str


def replay_steps(header: ReplayHeader, events: Sequence[AnyEvent], end: ReplayResult,
                 seat: int | None = None) -> Replayed:
    """The steps of a game, all-seeing or (``seat``) as that seat saw it, with the trump.

    :raises ReplayError: the recorded events are not what the rules produce from the recorded deck.
    """
    game = _deal(header, events)
    dealt = game.view(0)
    steps = _deal_steps(game, seat)
    done = len(game.events)
    _check_same(game.events, events, 0)
    while done < len(events):
        event = events[done]
        if game.result is not None or not isinstance(event, ActionTaken) or event.seat != game.to_move:
            raise ReplayError(f"the replay does not follow the rules at event {done + 1}")
        try:
            game.apply(parse_action(event.action))
        except (InvalidActionError, IllegalActionError) as exc:
            raise ReplayError(f"the replay does not follow the rules at event {done + 1}: {exc}") from None
        _check_same(game.events[done:], events, done)
        steps.append(Step(_shown(game.events[done:], seat), frame(game, seat)))
        done = len(game.events)
    result = end.result
    if result.end == "forfeit" and game.result is None and result.forfeit_seat is not None:
        game.forfeit(result.forfeit_seat, result.verdict or "crash", result.reason or "")
        steps.append(Step([], frame(game, seat)))
    if game.result is None or not _same_result(game.result, result):
        raise ReplayError("the replay's result is not the one its events lead to")
    return Replayed(steps, dealt.trump, dealt.trump_suit)


def _deal(header: ReplayHeader, events: Sequence[AnyEvent]) -> Game:
    """The game as dealt. The first mover is taken from the record (it may have been drawn by lot, or follow
    the fool of an earlier game of a series): the previous fool is chosen so that the rules name him."""
    rules, players = header.rules, len(header.names)
    first = next((e.attacker if isinstance(e, BoutStarted) else e.seat for e in events
                  if isinstance(e, BoutStarted | ActionTaken)), None)
    fool = None
    if first is not None:
        fool = next(f for f in range(players) if first_after_fool(rules, f, players) == first)
    try:
        return new_game(rules, players, deck=parse_cards(" ".join(header.deck)), dealer=header.dealer, fool=fool)
    except ValueError as exc:
        raise ReplayError(f"the replay's deal cannot be dealt again: {exc}") from None


def _check_same(produced: Sequence[AnyEvent], recorded: Sequence[AnyEvent], start: int) -> None:
    for offset, event in enumerate(produced):
        index = start + offset
        if index >= len(recorded) or recorded[index] != event:
            raise ReplayError(f"the replay does not follow the rules at event {index + 1}")


def _same_result(replayed: GameResult, recorded: GameResult) -> bool:
    return msgspec.structs.replace(replayed, first_attacker_by_lot=recorded.first_attacker_by_lot) == recorded


def _shown(events: Sequence[AnyEvent], seat: int | None) -> list[AnyEvent]:
    return list(events) if seat is None else [event_for_seat(e, seat) for e in events]


def frame(game: Game, seat: int | None) -> Frame:
    """The table now: every hand (``seat`` None) or ``seat``'s hand and what it knows of the others'.

    Keys: ``m`` seat to move, ``h`` face-up cards per seat (space-separated), ``n`` hand sizes, ``s`` stock,
    ``x`` discarded cards, ``t`` table pairs, ``a``/``d`` attacker and defender, ``k`` taking, ``p`` the
    Fool's Fool pile and ``pl`` its size, ``o`` seats out by place, ``c`` chases.
    """
    public = game.view(0 if seat is None else seat)
    if seat is None:  # every hand: the engine's own hands (card masks), not one view per seat
        hands = [" ".join(card_names(hand)) for hand in game.hands]
    else:
        hands = [" ".join(public.hand if s == seat else public.known[s]) for s in range(game.players)]
    out: Frame = {"m": public.to_move, "h": hands, "n": public.hand_sizes, "s": public.stock,
                  "x": len(public.discard), "o": public.out}
    if public.table:
        out["t"] = public.table
    if public.attacker is not None:
        out.update(a=public.attacker, d=public.defender, k=public.taking)
    if public.pile or public.pile_limit is not None:
        out.update(p=public.pile, pl=public.pile_limit)
    if public.chases is not None:
        out["c"] = public.chases
    return out


def _deal_steps(game: Game, seat: int | None) -> list[Step]:
    """Step 0: the deal. Fool's Fool deals by its ladder, one step per card, told from the events alone
    (where each card went); the last step is the engine's view once the piles are taken up."""
    ladder = [e for e in game.events if isinstance(e, LadderStarted | CardPlaced | CardKept)]
    if not ladder:
        return [Step(_shown(game.events, seat), frame(game, seat))]
    shown = _shown(game.events, seat)
    steps: list[Step] = []
    piles: list[list[str]] = []
    kept: list[list[str | None]] = [[] for _ in range(game.players)]
    stock: int = game.rules.deck
    for index, event in enumerate(ladder):
        if isinstance(event, LadderStarted):
            piles = [[card] for card in event.piles]
            stock -= len(piles)
            mover: int | None = event.starter
        else:
            stock -= 1
            mover = event.seat
            if isinstance(event, CardPlaced):
                piles[event.onto].append(event.card)
            else:
                kept[event.seat].append(event.card if seat in (None, event.seat) else None)
        steps.append(Step([shown[index]], {
            "m": mover, "s": stock, "lp": [" ".join(p) for p in piles],
            "lk": [" ".join(c for c in k if c is not None) for k in kept], "ln": [len(k) for k in kept]}))
    steps.append(Step(shown[len(ladder):], frame(game, seat)))
    return steps
