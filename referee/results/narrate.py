"""Games told as a person would read them: one line per event (``--verbose``, ``durak replay``).

``names`` are the seats' names as they are to be shown: callers pass them through
:func:`referee.text.visible` once; a forfeit's reason (bot-supplied text) is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.events import (
    ActionTaken,
    BoutEnded,
    BoutStarted,
    CardKept,
    CardPlaced,
    CardsDrawn,
    Event,
    LadderEnded,
    LadderStarted,
    PileDiscarded,
    PileTaken,
    PlayersOut,
)
from protocol.views import GameResult
from referee.text import visible

_VERBS = {
    "attack": "attacks with", "throw": "throws in", "transfer": "transfers with", "lead": "leads",
    "beat-top": "beats the top card with",
}


def describe_action(who: str, action: str) -> str:
    kind, _, cards = action.partition(" ")
    if kind == "beat":
        target, card = cards.split()
        return f"{who} beats {target} with {card}"
    if kind == "take":
        return f"{who} takes"
    if kind == "pass":
        return f"{who} passes"
    return f"{who} {_VERBS[kind]} {cards}"


def describe_event(event: Event, names: Sequence[str]) -> str | None:
    """A line for ``event``; None for events that add nothing to read."""
    return _describe_bout_event(event, names) or _describe_ladder_event(event, names)


def _describe_bout_event(event: Event, names: Sequence[str]) -> str | None:
    """The bouts of every variant: who attacks whom, the moves, draws, pick-ups, discards, players out."""
    match event:
        case BoutStarted(attacker=a, defender=d):
            return f"-- {names[a]} attacks {names[d]}"
        case ActionTaken(seat=seat, action=action):
            return "   " + describe_action(names[seat], action)
        case CardsDrawn(seat=seat, count=count, cards=cards, shown=face_up):
            if cards is not None:
                return f"   {names[seat]} draws {count}: {' '.join(cards)}"
            seen = f", the last the face-up trump card {' '.join(face_up)}" if face_up else ""
            return f"   {names[seat]} draws {count}{seen}"
        case BoutEnded(outcome="taken", defender=d, cards=cards):
            return f"   {names[d]} picks up {' '.join(cards)}"
        case BoutEnded(cards=cards):
            return f"   discarded: {' '.join(cards)}"
        case PlayersOut(seats=seats, place=place):
            return f"   {' and '.join(names[s] for s in seats)} out, place {place}"
    return None


def _describe_ladder_event(event: Event, names: Sequence[str]) -> str | None:
    """Fool's Fool's ladder deal and chain."""
    match event:
        case LadderStarted(piles=piles, starter=starter):
            faces = ", ".join(f"{names[s]} {card}" for s, card in enumerate(piles))
            return f"-- ladder: face up {faces}; {names[starter]} draws first"
        case CardPlaced(seat=seat, card=card, onto=onto):
            return f"   {names[seat]} lays {card} on {names[onto]}'s pile"
        case CardKept(seat=seat, card=card):
            return f"   {names[seat]} keeps {card or 'a card'}"
        case LadderEnded(hand_sizes=sizes):
            return "-- chain: hands " + ", ".join(f"{names[s]} {n}" for s, n in enumerate(sizes))
        case PileTaken(seat=seat, card=card):
            return f"   {names[seat]} cannot beat and takes {card}"
        case PileDiscarded(cards=cards):
            return f"   pile discarded: {' '.join(cards)}"
    return None


def describe_result(result: GameResult, names: Sequence[str]) -> str:
    if result.end == "forfeit" and result.forfeit_seat is not None:
        reason = f": {visible(result.reason)}" if result.reason is not None else ""
        return f"{names[result.forfeit_seat]} forfeits ({result.verdict}{reason}) and is the fool"
    if not result.fools:
        return "draw (action cap reached)" if result.end == "action_cap" else "draw"
    chases = f"; chases {', '.join(f'{names[s]} {c}' for s, c in enumerate(result.chases))}" if result.chases else ""
    return f"fool: {' and '.join(names[s] for s in result.fools)}{chases}"
