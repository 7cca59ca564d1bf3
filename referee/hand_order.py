"""The order a person's hand is shown in, in the terminal and in the browser: by suit (clubs, diamonds, hearts,
spades, the trump suit last), then by rank. One home for it: the terminal sorts with :func:`hand_key`, the web
card table is sent :func:`hand_orders` (every card, in this order, per trump suit) and sorts by it, so that no
copy of the rule lives in a script. Not a rule of the game: the engine and the protocol list cards in card order.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.cards import CARD_NAMES, RANK_SYMBOLS, SUIT_SYMBOLS


def hand_key(card: str, trump_suit: str) -> tuple[bool, int, int]:
    """The sort key of ``card`` (a card name, ``"TD"``) in a hand whose trump suit is ``trump_suit`` (``"D"``)."""
    return card[1] == trump_suit, SUIT_SYMBOLS.index(card[1]), RANK_SYMBOLS.index(card[0])


def sorted_hand(cards: Iterable[str], trump_suit: str) -> list[str]:
    """``cards`` in the order a hand is shown."""
    return sorted(cards, key=lambda card: hand_key(card, trump_suit))


def hand_orders() -> dict[str, list[str]]:
    """Per trump suit, every card name in the order a hand is shown (what the web card table sorts by)."""
    return {suit: sorted_hand(CARD_NAMES, suit) for suit in SUIT_SYMBOLS}
