"""The order a person's hand is shown in, in the terminal and in the browser: by suit (clubs, diamonds, hearts,
spades, the trump suit last), then by rank. One home for it: the terminal sorts with :func:`hand_key`, the web
card table is sent :func:`hand_order_key` (the suits' order per trump suit, the ranks' order) and sorts by it,
so that no copy of the rule lives in a script. Not a rule of the game: the engine and the protocol list cards
in card order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict

from protocol.cards import RANK_SYMBOLS, SUIT_SYMBOLS


class HandOrderKey(TypedDict):
    suits: dict[str, str]  # per trump suit, the four suits in hand order
    ranks: str  # the ranks, low to high


def hand_key(card: str, trump_suit: str) -> tuple[bool, int, int]:
    """The sort key of ``card`` (a card name, ``"TD"``) in a hand whose trump suit is ``trump_suit`` (``"D"``)."""
    return card[1] == trump_suit, SUIT_SYMBOLS.index(card[1]), RANK_SYMBOLS.index(card[0])


def sorted_hand(cards: Iterable[str], trump_suit: str) -> list[str]:
    """``cards`` in the order a hand is shown."""
    return sorted(cards, key=lambda card: hand_key(card, trump_suit))


def hand_order_key() -> HandOrderKey:
    """The order as the web card table sorts by it: per trump suit, the suits in hand order (``"suits"``), and
    the ranks low to high (``"ranks"``); a hand sorts by its cards' suit, then rank, in those strings. A key, not
    a list of cards: the page's data names no card the seat does not hold."""
    return {"suits": {trump: "".join(sorted(SUIT_SYMBOLS, key=lambda suit: hand_key("2" + suit, trump)[:2]))
                      for trump in SUIT_SYMBOLS},
            "ranks": RANK_SYMBOLS}
