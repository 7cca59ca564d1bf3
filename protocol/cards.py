"""Cards, suits, ranks and decks in the notation of RULES.md ("Notation").

A card is a small int, like a square in python-chess: ``(rank - 2) * 4 + suit``. Sorting
card ints therefore sorts by rank, then suit C<D<H<S, which is the order multi-card
actions list their cards in. A set of cards is an int bit mask (bit ``card`` set), which
makes "the cards of one rank" a 4-bit nibble and "the cards of one suit" a fixed mask.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

Card = int
Suit = int
Rank = int
CardMask = int

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUIT_SYMBOLS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
RANK_SYMBOLS: Final = "23456789TJQKA"
RANK_NAMES: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king", "ace")
LOWEST_RANK: Final = {36: 6, 52: 2}
DECK_SIZES: Final = (36, 52)

CARD_NAMES: Final = tuple(r + s for r in RANK_SYMBOLS for s in SUIT_SYMBOLS)
_CARD_BY_NAME: Final = {name: i for i, name in enumerate(CARD_NAMES)}

SUIT_MASKS: Final = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))
RANK_NIBBLE: Final = 0xF


class InvalidCardError(ValueError):
    """A card (or suit) string that is not in the notation of RULES.md."""


def make_card(rank: Rank, suit: Suit) -> Card:
    """The card of ``rank`` (2..14, ace high) and ``suit`` (0..3)."""
    return (rank - 2) * 4 + suit


def rank_of(card: Card) -> Rank:
    return (card >> 2) + 2


def suit_of(card: Card) -> Suit:
    return card & 3


def card_name(card: Card) -> str:
    return CARD_NAMES[card]


def parse_card(text: str) -> Card:
    """``"TD"`` -> the ten of diamonds. Ranks 2-9, T, J, Q, K, A; suits C, D, H, S.

    :raises InvalidCardError: for anything else (lower case, "10", unknown symbols).
    """
    try:
        return _CARD_BY_NAME[text]
    except (KeyError, TypeError):
        raise InvalidCardError(f"invalid card {text!r}: expected a rank of 23456789TJQKA and a suit of CDHS, "
                               "like 'TD' for the ten of diamonds") from None


def parse_suit(text: str) -> Suit:
    if len(text) != 1 or text not in SUIT_SYMBOLS:
        raise InvalidCardError(f"invalid suit {text!r}: expected one of C, D, H, S")
    return SUIT_SYMBOLS.index(text)


def parse_cards(text: str) -> list[Card]:
    """Space-separated cards, in the order given."""
    return [parse_card(word) for word in text.split()]


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(CARD_NAMES[c] for c in cards)


def deck(size: int) -> list[Card]:
    """The cards of a 36-card (6..A) or 52-card (2..A) deck, in ascending card order."""
    if size not in DECK_SIZES:
        raise ValueError(f"deck must be 36 or 52 cards, not {size}")
    first = make_card(LOWEST_RANK[size], CLUBS)
    return list(range(first, 52))


def deck_mask(size: int) -> CardMask:
    return mask_of(deck(size))


def mask_of(cards: Iterable[Card]) -> CardMask:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def card_list(mask: CardMask) -> list[Card]:
    """The cards of a mask, lowest first."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


# The names of the cards of each byte of a mask: BYTE_NAMES[k][b] for bits 8k..8k+7 set as in b.
_BYTE_NAMES: Final = tuple(tuple(tuple(CARD_NAMES[8 * k + i] for i in range(8) if b >> i & 1 and 8 * k + i < 52)
                          for b in range(256)) for k in range(7))


def card_names(mask: CardMask) -> list[str]:
    """The names of the cards of a mask, lowest first (views are built from this: keep it fast)."""
    names: list[str] = []
    for table in _BYTE_NAMES:
        if not mask:
            break
        if mask & 255:
            names.extend(table[mask & 255])
        mask >>= 8
    return names


def rank_mask(rank: Rank) -> CardMask:
    """The four cards of ``rank``."""
    return RANK_NIBBLE << ((rank - 2) * 4)


def higher_in_suit(card: Card) -> CardMask:
    """The cards of ``card``'s suit that outrank it."""
    return SUIT_MASKS[card & 3] & ~((2 << card) - 1)
