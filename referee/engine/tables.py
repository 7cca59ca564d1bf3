"""Precomputed lookups that keep legal-action generation to a few bit operations.

Actions are immutable, so each possible one is built once here and shared; so are the events that only
name seats and an action (``BoutStarted``, ``ActionTaken``), which games then share too.
"""

from __future__ import annotations

from typing import Final

from protocol.actions import ATTACK, BEAT, BEAT_TOP, LEAD, PASS, TAKE, THROW, TRANSFER, Action, action_text
from protocol.cards import CLUBS, DIAMONDS, SUIT_MASKS, Card, CardMask, higher_in_suit
from protocol.events import ActionTaken, BoutStarted
from protocol.rules import MAX_PLAYERS

# For each 4-bit nibble of a rank: its non-empty subsets as (subset, size), smallest first.
SUBSETS: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple(sorted(((s, s.bit_count()) for s in range(1, 16) if s & nib == s), key=lambda p: (p[1], p[0])))
    for nib in range(16)
)

TAKE_ACTION: Final = Action(TAKE)
PASS_ACTION: Final = Action(PASS)


def _group_actions(kind: str) -> tuple[tuple[Action, ...], ...]:
    """``table[rank_index][subset]``: the action laying that subset of the rank's four cards."""
    return tuple(
        tuple(Action(kind, tuple(r * 4 + s for s in range(4) if sub >> s & 1)) for sub in range(16))
        for r in range(13)
    )


def _capped_group_actions(kind: str) -> tuple[tuple[tuple[tuple[Action, ...], ...], ...], ...]:
    """``table[rank_index][nibble][cap]``: the actions laying 1..cap of the nibble's cards."""
    rows = _group_actions(kind)
    return tuple(
        tuple(
            tuple(tuple(rows[r][sub] for sub, size in SUBSETS[nib] if size <= cap) for cap in range(5))
            for nib in range(16)
        )
        for r in range(13)
    )


GroupTable = tuple[tuple[tuple[tuple[Action, ...], ...], ...], ...]
ATTACK_GROUPS: Final[GroupTable] = _capped_group_actions(ATTACK)
THROW_GROUPS: Final[GroupTable] = _capped_group_actions(THROW)
TRANSFER_GROUPS: Final[GroupTable] = _capped_group_actions(TRANSFER)
BEAT_ACTIONS: Final = tuple(tuple(Action(BEAT, (t, c)) for c in range(52)) for t in range(52))
LEAD_ACTIONS: Final = tuple(Action(LEAD, (c,)) for c in range(52))
BEAT_TOP_ACTIONS: Final = tuple(Action(BEAT_TOP, (c,)) for c in range(52))


def _beaters(card: Card, trump: int) -> CardMask:
    extra = SUIT_MASKS[trump] if card & 3 != trump else 0
    return higher_in_suit(card) | extra


# BEATERS[trump][card]: every card that beats ``card`` under ``trump`` (RULES.md 1, "Beating").
BEATERS: Final = tuple(tuple(_beaters(c, t) for c in range(52)) for t in range(4))


def _fools_fool_beaters(card: Card) -> CardMask:
    if card & 3 in (CLUBS, DIAMONDS):
        return higher_in_suit(card)
    return higher_in_suit(card) | SUIT_MASKS[DIAMONDS]


# Fool's Fool: diamonds are trump but cannot beat clubs (RULES.md 5, phase 2).
FOOLS_FOOL_BEATERS: Final = tuple(_fools_fool_beaters(c) for c in range(52))


def group_actions(table: GroupTable, cards: CardMask, cap: int) -> list[Action]:
    """Every action of ``table``'s kind (ATTACK_GROUPS...) laying 1..cap cards of one rank from ``cards``,
    by rank then size."""
    cap = min(cap, 4)
    actions: list[Action] = []
    rank_index = 0
    while cards:
        nib = cards & 15
        if nib:
            for action in table[rank_index][nib][cap]:  # append, not extend: cheaper for the one or two here
                actions.append(action)
        cards >>= 4
        rank_index += 1
    return actions


# BOUT_STARTS[attacker][defender]: the event that starts a bout.
BOUT_STARTS: Final = tuple(tuple(BoutStarted(a, d) for d in range(MAX_PLAYERS)) for a in range(MAX_PLAYERS))
_ACTION_EVENTS: Final[tuple[dict[Action, ActionTaken], ...]] = tuple({} for _ in range(MAX_PLAYERS))


def action_event(seat: int, action: Action) -> ActionTaken:
    """The event of ``seat`` playing ``action``, built once per seat and action (a memo of immutable events)."""
    events = _ACTION_EVENTS[seat]
    event = events.get(action)
    if event is None:
        event = events[action] = ActionTaken(seat, action_text(action))
    return event
