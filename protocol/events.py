"""What happens in a game, as each seat is told it (RULES.md "Visibility").

The engine records every event in full; :func:`event_for_seat` removes what a seat may not
know (the cards another player drew from the stock or kept in the Fool's Fool ladder). Cards
are in card notation. A pass is one ``action`` event whether chosen or automatic.
"""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, tag_field="type", frozen=True):
    """Base of all events; the ``type`` tag names the kind on the wire."""


class BoutStarted(Event, tag="bout", frozen=True):
    """A bout begins: ``attacker`` leads to ``defender``."""

    attacker: int
    defender: int


class ActionTaken(Event, tag="action", frozen=True):
    """A seat's decision (or automatic pass), as its compact action string."""

    seat: int
    action: str


class CardsDrawn(Event, tag="draw", frozen=True):
    """``seat`` drew ``count`` cards from the stock.

    ``cards`` is set only for the drawer; ``shown`` lists the drawn cards everyone knows
    (the face-up trump card, drawn last).
    """

    seat: int
    count: int
    cards: list[str] | None = None
    shown: list[str] = []


class BoutEnded(Event, tag="bout_end", frozen=True):
    """The bout is over: the table is ``discarded`` or ``taken`` by the defender."""

    outcome: str
    defender: int
    cards: list[str]


class PlayersOut(Event, tag="out", frozen=True):
    """``seats`` went out together and share ``place`` (1 = first out)."""

    seats: list[int]
    place: int


class LadderStarted(Event, tag="ladder", frozen=True):
    """Fool's Fool: each seat's face-up pile card (dealt from the dealer's left); ``starter`` draws first."""

    piles: list[str]
    starter: int


class CardPlaced(Event, tag="place", frozen=True):
    """Fool's Fool ladder: ``seat`` drew ``card`` and laid it on ``onto``'s pile."""

    seat: int
    card: str
    onto: int


class CardKept(Event, tag="keep", frozen=True):
    """Fool's Fool ladder: ``seat`` kept the card it drew face down (``card`` only for that seat)."""

    seat: int
    card: str | None = None


class LadderEnded(Event, tag="ladder_end", frozen=True):
    """Fool's Fool: the stock is empty; every player takes pile and kept cards into hand."""

    hand_sizes: list[int]


class PileTaken(Event, tag="pile_take", frozen=True):
    """Fool's Fool chain: ``seat`` could not beat and took the pile's bottom card (automatic)."""

    seat: int
    card: str


class PileDiscarded(Event, tag="pile_discard", frozen=True):
    """Fool's Fool chain: the pile reached its size (or came back round) and was discarded."""

    cards: list[str]


AnyEvent = (
    BoutStarted | ActionTaken | CardsDrawn | BoutEnded | PlayersOut | LadderStarted | CardPlaced | CardKept
    | LadderEnded | PileTaken | PileDiscarded
)


def event_for_seat(event: AnyEvent, seat: int) -> AnyEvent:
    """``event`` as ``seat`` may see it."""
    if isinstance(event, CardsDrawn | CardKept) and event.seat != seat:
        return msgspec.structs.replace(event, cards=None) if isinstance(event, CardsDrawn) \
            else msgspec.structs.replace(event, card=None)
    return event
