"""The rules engine: pure, no IO and no clock; randomness only from a :class:`SeededRng` passed in.

``new_game(rules, players, rng)`` deals a game; then ``game.to_move``, ``game.legal_actions()``,
``game.apply(action)``, ``game.view(seat)``, ``game.events`` and ``game.result``; ``game.copy()`` and
``determinize(view, events, rng)`` for search. :func:`engine_build` says whether the mypyc-compiled modules
or the pure-Python sources are loaded (setup.py, protocol/build.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.build import build_of
from protocol.cards import Card, suit_of
from protocol.rules import HAND_SIZE, Rules
from referee.engine import game as _game_module
from referee.engine.bout import BoutGame
from referee.engine.deal import (
    check_deck,
    check_table,
    first_after_fool,
    lowest_trump_leader,
    next_in_series,
    parse_deal,
    shuffled_deck,
)
from referee.engine.errors import GameOverError, IllegalActionError, InvalidActionError, InvalidDealError
from referee.engine.fools_fool import FoolsFoolGame
from referee.engine.game import VERDICTS, Game
from referee.engine.rng import SeededRng
from referee.engine.search import Shuffler, determinize

__all__ = [
    "VERDICTS",
    "BoutGame",
    "FoolsFoolGame",
    "Game",
    "GameOverError",
    "IllegalActionError",
    "InvalidActionError",
    "InvalidDealError",
    "SeededRng",
    "Shuffler",
    "check_table",
    "determinize",
    "engine_build",
    "new_game",
    "next_in_series",
    "parse_deal",
    "shuffled_deck",
]


def engine_build() -> str:
    """``"compiled"`` when the mypyc-compiled engine is loaded, ``"pure"`` for the Python sources."""
    return build_of(_game_module)


def new_game(rules: Rules, players: int, rng: SeededRng | None = None, *, deck: Sequence[Card] | None = None,
             dealer: int | None = None, fool: int | None = None) -> Game:
    """Deal a game of ``rules.variant`` for ``players`` seats.

    Args:
        rng: shuffles the deck when ``deck`` is not given, draws the dealer when ``dealer`` is
            not given, and breaks a tie for the first attack (RULES.md 5b.6), in that order.
        deck: an explicit deck order, top first (RULES.md "Notation").
        dealer: the dealing seat; the deal starts at his left.
        fool: the previous game's fool in a series: the first move follows ``rules.first_move``.

    :raises InvalidDealError: a bad table size, deck or dealer, or a needed ``rng`` missing.
    """
    check_table(rules, players)
    if deck is None:
        if rng is None:
            raise InvalidDealError("a game needs a deck order or a seeded rng to shuffle one")
        cards = shuffled_deck(rules.deck, rng)
    else:
        cards = list(deck)
        check_deck(cards, rules.deck)
    if dealer is None:
        if rng is None:
            raise InvalidDealError("a game needs a dealer seat or a seeded rng to draw one")
        dealer = rng.randbelow(players)
    if not 0 <= dealer < players:
        raise InvalidDealError(f"dealer seat {dealer} is not at this table of {players}")
    game: Game
    if rules.variant == "fools_fool":
        leader = None if fool is None else first_after_fool(rules, fool, players)
        game = FoolsFoolGame.dealt(rules, players, dealer, cards, leader)
    else:
        game = _deal_bout_game(rules, players, cards, dealer, fool, rng)
    game.deck = tuple(cards)
    return game


def _deal_bout_game(rules: Rules, players: int, cards: list[Card], dealer: int, fool: int | None,
                    rng: SeededRng | None) -> BoutGame:
    hands: list[list[Card]] = [[] for _ in range(players)]
    dealt = players * HAND_SIZE
    for i, card in enumerate(cards[:dealt]):
        hands[(dealer + 1 + i) % players].append(card)
    if dealt < len(cards):
        trump_card, stock = cards[dealt], [*cards[dealt + 1:], cards[dealt]]
    else:  # 36 cards, 6 players: the dealer's last dealt card fixes trump
        trump_card, stock = cards[dealt - 1], []
    by_lot = False
    if fool is None:
        attacker, by_lot = lowest_trump_leader(hands, suit_of(trump_card), dealer, rng)
    else:
        attacker = first_after_fool(rules, fool, players)
    game = BoutGame.dealt(rules, dealer, hands, stock, trump_card, attacker)
    game.first_attacker_by_lot = by_lot
    return game
