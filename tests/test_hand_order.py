"""The one order a person's hand is shown in (referee/hand_order.py): by suit, the trump suit last, then by rank;
the terminal draws its hand in it (the web card table's browser test checks the page's)."""

from __future__ import annotations

import io

import pytest

from protocol.cards import CARD_NAMES, RANK_SYMBOLS, SUIT_SYMBOLS
from protocol.messages import GameStart, Request
from protocol.rules import Rules
from referee.cli.terminal import TerminalPerson
from referee.engine import SeededRng, new_game
from referee.games.human import ClockReading
from referee.hand_order import hand_key, hand_order_key, sorted_hand


@pytest.mark.parametrize("trump", SUIT_SYMBOLS)
def test_the_trump_suit_comes_last_the_other_suits_in_order_each_by_rank(trump: str) -> None:
    order = sorted_hand(CARD_NAMES, trump)
    assert sorted(order) == sorted(CARD_NAMES)
    suits = [card[1] for card in order]
    assert suits == sorted(suits, key=lambda s: (s == trump, SUIT_SYMBOLS.index(s)))
    assert suits[-13:] == [trump] * 13
    for suit in SUIT_SYMBOLS:
        ranks = [RANK_SYMBOLS.index(c[0]) for c in order if c[1] == suit]
        assert ranks == sorted(ranks)
    assert sorted_hand(reversed(order), trump) == order
    assert [hand_key(c, trump) for c in order] == sorted(hand_key(c, trump) for c in order)


@pytest.mark.parametrize("trump", SUIT_SYMBOLS)
def test_the_key_the_web_page_sorts_by_gives_the_same_order(trump: str) -> None:
    key = hand_order_key()
    suits, ranks = key["suits"][trump], key["ranks"]
    as_the_page_sorts = sorted(CARD_NAMES, key=lambda c: (suits.index(c[1]), ranks.index(c[0])))
    assert as_the_page_sorts == sorted_hand(CARD_NAMES, trump)


def test_the_terminal_draws_the_hand_in_that_order() -> None:
    for seed in range(5):
        game = new_game(Rules(), 2, SeededRng(seed))
        view = game.view(0)
        out = io.StringIO()
        person = TerminalPerson(out, 0, "rules")  # shows only: reads nothing
        person.show(GameStart(game="g", seat=0, players=2, names=["me", "bot"], rules=game.rules,
                              dealer=game.dealer, view=view, seed=0), ClockReading(move_time=10, bank=0))
        # the table is drawn at the first request, after the events that dealt it
        person.show(Request(id=1, game="g", view=view, legal=[str(a) for a in game.legal_actions()], time_ms=1000),
                    ClockReading(move_time=10, bank=0))
        line = next(line for line in out.getvalue().splitlines() if line.startswith("your hand: "))
        assert line.removeprefix("your hand: ").split() == sorted_hand(view.hand, view.trump_suit)
