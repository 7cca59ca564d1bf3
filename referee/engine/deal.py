"""Shuffling, explicit deck orders, and who deals and leads (RULES.md 1, "Deal", and 5b.6).

A deck order lists the cards top first, in the dealing convention of RULES.md "Notation".
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.cards import CARD_NAMES, Card, InvalidCardError, deck, parse_card, rank_of
from protocol.rules import HAND_SIZE, MAX_PLAYERS, MIN_PLAYERS, Rules
from protocol.views import GameResult
from referee.engine.errors import InvalidDealError
from referee.engine.rng import SeededRng


def shuffled_deck(size: int, rng: SeededRng) -> list[Card]:
    """The deck of ``size`` cards in ascending order, shuffled by ``rng`` (RULES.md "Shuffling")."""
    cards = deck(size)
    rng.shuffle(cards)
    return cards


def parse_deal(text: str, size: int) -> list[Card]:
    """A full deck order, top first, from space-separated cards.

    :raises InvalidDealError: a bad card, a card twice, or not exactly the ``size``-card deck.
    """
    try:
        cards = [parse_card(word) for word in text.split()]
    except InvalidCardError as exc:
        raise InvalidDealError(f"bad deal: {exc}") from None
    check_deck(cards, size)
    return cards


def check_deck(cards: Sequence[Card], size: int) -> None:
    expected = set(deck(size))
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise InvalidDealError(f"bad deal: {CARD_NAMES[card]} appears twice")
        if card not in expected:
            raise InvalidDealError(f"bad deal: {CARD_NAMES[card]} is not in the {size}-card deck")
        seen.add(card)
    if len(seen) != size:
        missing = " ".join(CARD_NAMES[c] for c in sorted(expected - seen))
        raise InvalidDealError(f"bad deal: a {size}-card deck needs every card; missing {missing}")


def check_table(rules: Rules, players: int) -> None:
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise InvalidDealError(f"Durak takes {MIN_PLAYERS}-{MAX_PLAYERS} players, not {players}")
    if rules.is_bout_game and players * HAND_SIZE > rules.deck:
        raise InvalidDealError(f"{players} players need more than a {rules.deck}-card deck")


def lowest_trump_leader(hands: list[list[Card]], trump: int, dealer: int,
                        rng: SeededRng | None) -> tuple[int, bool]:
    """The holder of the lowest trump; with no trump out, the lowest card, ties by lot (5b.6).

    Returns the seat and whether it was drawn by lot.
    """
    players = len(hands)
    trumps = [(c, seat) for seat, hand in enumerate(hands) for c in hand if c & 3 == trump]
    if trumps:
        return min(trumps)[1], False
    lowest = min(rank_of(c) for hand in hands for c in hand)
    tied = [seat for seat in ((dealer + 1 + i) % players for i in range(players))
            if any(rank_of(c) == lowest for c in hands[seat])]
    if len(tied) == 1:
        return tied[0], False
    if rng is None:
        raise InvalidDealError("nobody holds a trump and several players tie for the lowest card: "
                               "drawing the first attacker by lot needs a seeded rng")
    return tied[rng.randbelow(len(tied))], True


def first_after_fool(rules: Rules, fool: int, players: int) -> int:
    """Later games of a series: the fool's left (from_under_fool) or right (under_fool) neighbour."""
    step = 1 if rules.first_move == "from_under_fool" else -1
    return (fool + step) % players


def next_in_series(result: GameResult, dealer: int, players: int) -> tuple[int, int | None]:
    """The next game's dealer and the fool the first move follows from (None: lowest trump leads).

    The fool deals; with several fools, the first of them clockwise from the last dealer's left;
    after a draw the deal passes left and the lowest trump leads (RULES.md 1, 5b.8).
    """
    if not result.fools:
        return (dealer + 1) % players, None
    for step in range(1, players + 1):
        seat = (dealer + step) % players
        if seat in result.fools:
            return seat, seat
    raise AssertionError("a fool sits at the table")
