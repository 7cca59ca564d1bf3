"""A stored game walked through the engine, and at each decision of one seat what that seat was told.

The deal (``ReplayHeader.deck``) is used only to play the recorded actions again: the engine must reach every
decision exactly as the game did. What a decision hands on is an :class:`Observation`, built from the seat's
side of the protocol alone: its view (``Request.view``), every event as :func:`protocol.events.event_for_seat`
gave it to the seat, the rules and the dealer (``GameStart``). Nothing of the deal crosses that line, so an
analysis that reads only observations cannot depend on a card the seat did not see.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from protocol.actions import InvalidActionError, parse_action
from protocol.cards import parse_cards
from protocol.events import ActionTaken, AnyEvent, event_for_seat
from protocol.rules import Rules
from protocol.views import PlayerView
from referee.engine import Game, IllegalActionError, new_game
from referee.results.replay import ReplayError, ReplayHeader, parse_replay, seat_of
from referee.results.reproduce import first_mover, previous_fool


@dataclass(frozen=True)
class Observation:
    """What one seat knew when it was asked to decide: exactly what the protocol had sent it.

    Attributes:
        rules: the game's rules (``GameStart.rules``).
        dealer: the dealing seat (``GameStart.dealer``).
        view: the request's view (``view.seat`` is the deciding seat).
        events: every event of the game so far as the seat was told it, in order.
        legal: the request's legal actions, in the engine's order.
        number: this seat's decision number in the game, from 0 (public: the seat counts its requests); it
            seeds the analysis's sampling, so the samples never depend on a hidden card.
    """

    rules: Rules
    dealer: int
    view: PlayerView
    events: tuple[AnyEvent, ...]
    legal: tuple[str, ...]
    number: int

    @property
    def seat(self) -> int:
        return self.view.seat


@dataclass(frozen=True)
class Decision:
    """One decision of the analyzed seat: what it knew and what it did."""

    observation: Observation
    taken: str
    step: int  # the game's decision index over all seats, from 1: the replay viewer's step in bout games


def seat_decisions(replay: bytes, seat: int) -> Iterator[Decision]:
    """Every decision of ``seat`` in the game of ``replay`` (JSON lines), in order.

    :raises ReplayError: the replay does not decode or does not follow the rules from its deal.
    """
    header, events, _ = parse_replay(replay)
    return decisions_of(header, events, seat)


def decisions_of(header: ReplayHeader, events: Sequence[AnyEvent], seat: int) -> Iterator[Decision]:
    """Every decision of ``seat`` in the game of ``header`` whose recorded events (all of them, or the first
    ones up to a decision) are ``events``.

    :raises ReplayError: the events do not follow the rules from the header's deal.
    """
    if not 0 <= seat < len(header.names):
        raise ReplayError(f"seat {seat} is not at this table of {len(header.names)}")
    game = deal_again(header, events)
    done, number, step = len(game.events), 0, 0
    while done < len(events):
        event = events[done]
        if game.result is not None or not isinstance(event, ActionTaken) or event.seat != game.to_move:
            raise ReplayError(f"the replay does not follow the rules at event {done + 1}")
        step += 1
        if event.seat == seat:
            yield Decision(observe(game, seat, number), event.action, step)
            number += 1
        try:
            game.apply(parse_action(event.action))
        except (InvalidActionError, IllegalActionError) as exc:
            raise ReplayError(f"the replay does not follow the rules at event {done + 1}: {exc}") from None
        if game.events[done:] != events[done:len(game.events)]:
            raise ReplayError(f"the replay does not follow the rules after event {done + 1}")
        done = len(game.events)


def observe(game: Game, seat: int, number: int) -> Observation:
    """What ``seat`` is told when ``game`` asks it to decide (its ``number``-th decision): the engine's view and
    events passed through the protocol's own filter, as the match layer sends them."""
    return Observation(rules=game.rules, dealer=game.dealer, view=game.view(seat),
                       events=tuple(event_for_seat(e, seat) for e in game.events),
                       legal=tuple(str(a) for a in game.legal_actions()), number=number)


def deal_again(header: ReplayHeader, events: Sequence[AnyEvent]) -> Game:
    """The game as dealt, its first mover as recorded (drawn by lot, or following an earlier game's fool)."""
    rules, players = header.rules, len(header.names)
    first = first_mover(events)
    fool = None if first is None else previous_fool(rules, first, players)
    try:
        return new_game(rules, players, deck=parse_cards(" ".join(header.deck)), dealer=header.dealer, fool=fool)
    except ValueError as exc:
        raise ReplayError(f"the replay's deal cannot be dealt again: {exc}") from None


def seat_named(replay: bytes, bot: str) -> int:
    """The seat of ``bot`` in the game of ``replay``.

    :raises ReplayError: the bot did not play it.
    """
    return seat_of(parse_replay(replay)[0].names, bot)
