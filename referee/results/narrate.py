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

#: How each event reads, in one home: the replay's narration here (``durak replay``, the terminal seat, the
#: replay viewer) and the web's card table log (table.js, given these as JSON by its page). Keys are the wire
#: event's ``type`` (an action's and an outcome's after a dot); ``{field}``s are filled from the event: seats by
#: their names, cards as they are written (the card table draws them), ``seats`` joined by "and".
PHRASES: dict[str, str] = {
    "bout": "{attacker} attacks {defender}",
    "action.beat": "{seat} beats {target} with {card}",
    "action.take": "{seat} takes",
    "action.pass": "{seat} passes",
    "action.attack": "{seat} attacks with {cards}",
    "action.throw": "{seat} throws in {cards}",
    "action.transfer": "{seat} transfers with {cards}",
    "action.lead": "{seat} leads {cards}",
    "action.beat-top": "{seat} beats the top card with {cards}",
    "draw": "{seat} draws {count}",
    "draw.seen": "{seat} draws {count}: {cards}",
    "draw.trump": "{seat} draws {count}, the last the face-up trump card {shown}",
    "bout_end.taken": "{defender} picks up {cards}",
    "bout_end.beaten": "discarded: {cards}",
    "out": "{seats} out, place {place}",
    "ladder": "ladder: face up {piles}; {starter} draws first",
    "place": "{seat} lays {card} on {onto}'s pile",
    "keep": "{seat} keeps {card}",
    "keep.hidden": "{seat} keeps a card",
    "ladder_end": "chain: hands {hand_sizes}",
    "pile_take": "{seat} cannot beat and takes {card}",
    "pile_discard": "pile discarded: {cards}",
}


def _said(key: str, **fields: object) -> str:
    return PHRASES[key].format(**{name: " ".join(value) if isinstance(value, list) else value
                                  for name, value in fields.items()})


def describe_action(who: str, action: str) -> str:
    kind, _, cards = action.partition(" ")
    if kind == "beat":
        target, card = cards.split()
        return _said("action.beat", seat=who, target=target, card=card)
    return _said(f"action.{kind}", seat=who, cards=cards)


def describe_event(event: Event, names: Sequence[str]) -> str | None:
    """A line for ``event``; None for events that add nothing to read."""
    return _describe_bout_event(event, names) or _describe_ladder_event(event, names)


def _describe_bout_event(event: Event, names: Sequence[str]) -> str | None:
    """The bouts of every variant: who attacks whom, the moves, draws, pick-ups, discards, players out."""
    match event:
        case BoutStarted(attacker=a, defender=d):
            return "-- " + _said("bout", attacker=names[a], defender=names[d])
        case ActionTaken(seat=seat, action=action):
            return "   " + describe_action(names[seat], action)
        case CardsDrawn(seat=seat, count=count, cards=cards, shown=face_up):
            if cards is not None:
                return "   " + _said("draw.seen", seat=names[seat], count=count, cards=cards)
            return "   " + _said("draw.trump" if face_up else "draw", seat=names[seat], count=count, shown=face_up)
        case BoutEnded(outcome="taken", defender=d, cards=cards):
            return "   " + _said("bout_end.taken", defender=names[d], cards=cards)
        case BoutEnded(cards=cards):
            return "   " + _said("bout_end.beaten", cards=cards)
        case PlayersOut(seats=seats, place=place):
            return "   " + _said("out", seats=" and ".join(names[s] for s in seats), place=place)
    return None


def _describe_ladder_event(event: Event, names: Sequence[str]) -> str | None:
    """Fool's Fool's ladder deal and chain."""
    match event:
        case LadderStarted(piles=piles, starter=starter):
            faces = ", ".join(f"{names[s]} {card}" for s, card in enumerate(piles))
            return "-- " + _said("ladder", piles=faces, starter=names[starter])
        case CardPlaced(seat=seat, card=card, onto=onto):
            return "   " + _said("place", seat=names[seat], card=card, onto=names[onto])
        case CardKept(seat=seat, card=card):
            return "   " + _said("keep" if card else "keep.hidden", seat=names[seat], card=card)
        case LadderEnded(hand_sizes=sizes):
            return "-- " + _said("ladder_end", hand_sizes=", ".join(f"{names[s]} {n}" for s, n in enumerate(sizes)))
        case PileTaken(seat=seat, card=card):
            return "   " + _said("pile_take", seat=names[seat], card=card)
        case PileDiscarded(cards=cards):
            return "   " + _said("pile_discard", cards=cards)
    return None


def describe_result(result: GameResult, names: Sequence[str]) -> str:
    if result.end == "forfeit" and result.forfeit_seat is not None:
        reason = f": {visible(result.reason)}" if result.reason is not None else ""
        return f"{names[result.forfeit_seat]} forfeits ({result.verdict}{reason}) and is the fool"
    if not result.fools:
        return "draw (action cap reached)" if result.end == "action_cap" else "draw"
    chases = f"; chases {', '.join(f'{names[s]} {c}' for s, c in enumerate(result.chases))}" if result.chases else ""
    return f"fool: {' and '.join(names[s] for s in result.fools)}{chases}"
