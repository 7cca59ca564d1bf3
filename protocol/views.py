"""A seat's view of a game, and a game's result, as sent on the wire.

A view holds exactly what the seat may know (RULES.md "Visibility"): its own hand, every
public card, hand sizes, and the cards publicly known to be in each hand.
"""

from __future__ import annotations

import msgspec


class PlayerView(msgspec.Struct, frozen=True, kw_only=True):
    """What ``seat`` sees when it is asked to decide (or at any moment).

    Bout games fill ``trump``, ``stock``, ``table``, ``attacker``, ``defender`` and ``taking``;
    Fool's Fool fills ``pile`` and ``pile_limit`` (diamonds are its trump suit).
    """

    seat: int
    phase: str  # lead, defend, throw (bout games); lead, beat (Fool's Fool); over once the game has ended
    to_move: int | None
    hand: list[str]
    hand_sizes: list[int]
    known: list[list[str]]  # cards publicly known to be in each seat's hand
    trump_suit: str
    trump: str | None = None
    stock: int = 0
    table: list[list[str | None]] = []  # [attack card, beating card or null]
    attacker: int | None = None
    defender: int | None = None
    taking: bool = False
    bout_limit: int | None = None  # attack cards allowed in this bout
    pile: list[str] = []
    pile_limit: int | None = None
    discard: list[str] = []
    out: list[list[int]] = []
    chases: list[int] | None = None


class GameResult(msgspec.Struct, frozen=True, kw_only=True):
    """How a game ended (RULES.md 6), seats as indices.

    ``order`` is best first, ties as lists, the fools last; ``fools`` is empty for a draw.
    ``end`` is ``fool`` (a normal end), ``draw``, ``action_cap`` (a flagged draw) or ``forfeit``.
    """

    order: list[list[int]]
    fools: list[int]
    end: str
    chases: list[int] | None = None
    forfeit_seat: int | None = None
    verdict: str | None = None
    reason: str | None = None
    first_attacker_by_lot: bool = False

    @property
    def is_draw(self) -> bool:
        return not self.fools
