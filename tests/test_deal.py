"""Scenario tests: the deal, the trump, the stock, the first attacker and the series (RULES.md 1, 7, 8)."""

from __future__ import annotations

import pytest
from scenario import bout_game, cards, deal_deck, hand, hands, play, stock

from protocol.cards import deck, format_cards, parse_cards
from protocol.rules import Rules
from protocol.views import GameResult
from referee.engine import InvalidDealError, SeededRng, new_game, next_in_series, parse_deal

ASCENDING_36 = format_cards(deck(36))


def test_seed_1_deal_matches_worked_example() -> None:
    """RULES.md 10.1 and 8.5: seed 1 gives the documented deck, dealer 1, hands, trump 8H; seat 0 leads."""
    game = new_game(Rules(), 2, SeededRng(1))
    assert game.dealer == 1
    assert hands(game) == {0: cards("TD KD JD 9H KH 9S"), 1: cards("TH JS AH 7D TS QD")}
    assert game.view(0).trump == "8H"
    assert game.view(0).stock == 24
    assert stock(game).split()[:2] == ["7H", "8C"] and stock(game).split()[-3:] == ["9C", "9D", "8H"]
    assert (game.attacker, game.defender, game.to_move, game.phase) == (0, 1, 0, "lead")
    assert not game.first_attacker_by_lot


def test_cards_are_dealt_one_at_a_time_from_the_dealers_left() -> None:
    """RULES.md 1.3, 8.1: card k goes to seat (dealer + 1 + k) mod N; card 6N is trump; the rest is the stock."""
    game = new_game(Rules(), 3, deck=parse_deal(ASCENDING_36, 36), dealer=0)
    assert hands(game) == {
        1: "6C 6S 7H 8D 9C 9S",
        2: "6D 7C 7S 8H 9D TC",
        0: "6H 7D 8C 8S 9H TD",
    }
    assert game.view(1).trump == "TH" and game.view(1).trump_suit == "H"
    assert stock(game) == "TS JC JD JH JS QC QD QH QS KC KD KH KS AC AD AH AS TH"
    assert game.view(2).stock == 18
    assert (game.attacker, game.defender) == (0, 1)  # 6H is the lowest heart


def test_stock_is_drawn_top_first_with_the_trump_card_last() -> None:
    """RULES.md 1.3: the stock keeps the deck order; the trump card is at its bottom (``stock[0]``)."""
    game = bout_game({0: "6C 6D 6H 7C 7D 7H", 1: "8C 8D 8H 9C 9D 9H"}, trump="AS", stock="KS QS JS")
    assert format_cards(game.stock[-3:]) == "JS QS KS"  # popped last-first: KS is the top card
    assert format_cards(game.stock[:1]) == "AS"
    assert len(game.stock) == 36 - 12


def test_lowest_trump_attacks_first_and_the_card_under_the_stock_belongs_to_nobody() -> None:
    """RULES.md 1.5, 5b.6: lowest trump by rank, whatever the seat; the turned-up 6D counts for nobody."""
    game = bout_game({
        0: "9D 6C 6H 7S 8C 8H",
        1: "AD 6S 7C 8S 9C 9H",
        2: "7D TC TH TS JC JH",
        3: "KD JS QC QH QS KC",
    }, trump="6D", dealer=3)
    assert (game.attacker, game.defender, game.to_move) == (2, 3, 2)
    assert not game.first_attacker_by_lot


def test_nobody_holding_a_trump_lowest_card_leads() -> None:
    """RULES.md 1.5, 5b.6: no trump dealt: the holder of the lowest-ranked card leads, no lot needed."""
    game = bout_game({0: "7C 7D 8H 9C TD JH", 1: "6H 8C 9D TH QC KD"}, trump="6S")
    assert (game.attacker, game.defender) == (1, 0)
    assert not game.first_attacker_by_lot


@pytest.mark.parametrize(("seed", "attacker"), [(0, 1), (3, 0)])
def test_nobody_holding_a_trump_tie_is_drawn_by_lot_and_flagged(seed: int, attacker: int) -> None:
    """RULES.md 5b.6, 8.3: tied lowest rank: seats listed from the dealer's left, index rng.randbelow(count)."""
    assert SeededRng(seed).randbelow(2) == attacker  # dealer 1: tied seats in order [0, 1]
    game = bout_game({0: "6C 8D 8H 9C TD JH", 1: "6H 8C 9D TH QC KD"}, trump="6S", dealer=1,
                     rng=SeededRng(seed))
    assert (game.attacker, game.to_move) == (attacker, attacker)
    assert game.first_attacker_by_lot
    result = game.forfeit(0, "timeout")
    assert result.first_attacker_by_lot


def test_lowest_card_tie_without_rng_is_a_deal_error() -> None:
    """RULES.md 8.3: a lot needs the seeded rng; without one the deal is refused with a clear message."""
    with pytest.raises(InvalidDealError, match="lot"):
        bout_game({0: "6C 8D 8H 9C TD JH", 1: "6H 8C 9D TH QC KD"}, trump="6S")


def test_36_cards_6_players_dealers_last_card_is_trump_and_publicly_his() -> None:
    """RULES.md 1.3, 5b.6, 5b.7, 8.1: all 36 dealt; card 35 (the dealer's) fixes trump and is known in his hand."""
    order = parse_cards(ASCENDING_36)
    order[3], order[35] = order[35], order[3]  # the dealer's last card is 6S, the lowest spade
    game = new_game(Rules(), 6, deck=order, dealer=2)
    assert "6S" in hand(game, 2).split()
    for seat in range(6):
        view = game.view(seat)
        assert view.trump == "6S" and view.trump_suit == "S" and view.stock == 0
        assert view.known == [[], [], ["6S"], [], [], []]
    assert game.stock == []
    assert (game.attacker, game.defender) == (2, 3)  # the dealer's shown card is his: lowest trump
    play(game, "attack 6S")
    assert game.view(0).known[2] == []  # a known card leaves the set when played


def test_36_cards_6_players_lowest_trump_elsewhere() -> None:
    """RULES.md 8.1: with the ascending deck and dealer 2, AS (card 35) is the dealer's; 6S (card 3) is seat 0's."""
    game = new_game(Rules(), 6, deck=parse_deal(ASCENDING_36, 36), dealer=2)
    assert hand(game, 2) == "7D 8S TD JS KD AS"
    assert game.view(4).known[2] == ["AS"]
    assert (game.attacker, game.defender) == (0, 1)


def test_52_card_deal_leaves_a_stock_of_40() -> None:
    """RULES.md 1.1, 1.3: 52 cards (2..A), 2 players: 12 dealt, trump card plus 39 stock cards."""
    game = bout_game({0: "2C 5D 8H JC QD KH", 1: "3C 3D 2H 9C TD AC"}, trump="7H", deck_size=52)
    assert game.view(0).stock == 40
    assert (game.attacker, game.defender) == (1, 0)  # 2H is the lowest heart
    assert {str(a) for a in game.legal_actions()} >= {"attack 2H", "attack 3C 3D"}


def test_views_show_own_hand_only() -> None:
    """RULES.md 9: a seat sees its own hand, the others' hand sizes, the trump card and the stock size."""
    game = bout_game({0: "6C 6D 6H 7C 7D 7H", 1: "8C 8D 8H 9C 9D 9H"}, trump="AS")
    view = game.view(1)
    assert view.hand == ["8C", "8D", "8H", "9C", "9D", "9H"]
    assert view.hand_sizes == [6, 6]
    assert view.known == [[], []]
    assert (view.trump, view.stock, view.to_move, view.phase) == ("AS", 24, game.to_move, "lead")


@pytest.mark.parametrize(("mutate", "message"), [
    (lambda d: d[:-1], "missing AS"),
    (lambda d: [*d[:-1], d[0]], "appears twice"),
    (lambda d: [*d[:-1], parse_cards("2C")[0]], "2C is not in the 36-card deck"),
])
def test_bad_deck_orders_are_refused(mutate, message: str) -> None:
    """RULES.md 8.1: a deck order must list every card of the deck exactly once."""
    with pytest.raises(InvalidDealError, match=message):
        new_game(Rules(), 2, deck=mutate(parse_cards(ASCENDING_36)), dealer=0)


def test_bad_deal_string_is_refused() -> None:
    """RULES.md 0.1, 8.1: ``10H`` is not a card; parse_deal says so."""
    with pytest.raises(InvalidDealError, match=r"bad deal.*10H"):
        parse_deal(ASCENDING_36.replace("TH", "10H"), 36)


@pytest.mark.parametrize(("players", "dealer", "message"), [
    (2, 2, "dealer seat 2 is not at this table of 2"),
    (2, -1, "dealer seat -1"),
    (1, 0, "2-6 players"),
    (7, 0, "2-6 players"),
])
def test_bad_table_or_dealer_is_refused(players: int, dealer: int, message: str) -> None:
    """RULES.md 1.1: 2-6 players; the dealer sits at the table."""
    with pytest.raises(InvalidDealError, match=message):
        new_game(Rules(), players, deck=parse_cards(ASCENDING_36), dealer=dealer)


def test_deal_without_deck_or_dealer_needs_an_rng() -> None:
    """RULES.md 8.2, 8.3: the shuffle and the dealer lot come from the seeded rng; without one: an error."""
    with pytest.raises(InvalidDealError, match="rng"):
        new_game(Rules(), 2, dealer=0)
    with pytest.raises(InvalidDealError, match="dealer"):
        new_game(Rules(), 2, deck=parse_cards(ASCENDING_36))


def test_deal_deck_helper_interleaves_from_the_dealers_left() -> None:
    """RULES.md 8.1: the helper's deck order puts card k at seat (dealer + 1 + k) mod N."""
    order = deal_deck({0: "6C 6D 6H 6S 7C 7D", 1: "8C 8D 8H 8S 9C 9D", 2: "TC TD TH TS JC JD"},
                      trump="AS", stock="KS", dealer=1)
    assert format_cards(order[:4]) == "TC 6C 8C TD"
    assert format_cards(order[18:20]) == "AS KS"
    assert len(order) == 36


# -- series (RULES.md 7, 5b.8) ------------------------------------------------------------------------------

def fool_result(*fools: int, players: int = 4) -> GameResult:
    rest = [s for s in range(players) if s not in fools]
    return GameResult(order=[rest, list(fools)], fools=list(fools), end="fool")


def test_series_fool_deals_and_his_left_neighbour_attacks() -> None:
    """RULES.md 7: the fool deals; from_under_fool (default): the fool's left neighbour attacks."""
    assert next_in_series(fool_result(2), dealer=0, players=4) == (2, 2)
    game = bout_game({0: "6C 6D 6H 7C 7D 7H", 1: "8C 8D 8H 9C 9D 9H", 2: "TC TD TH JC JD JH",
                      3: "QC QD QH KC KD KH"}, trump="AS", dealer=2, fool=2)
    assert (game.attacker, game.defender) == (3, 0)
    assert not game.first_attacker_by_lot


def test_series_under_fool_the_fool_defends_first() -> None:
    """RULES.md 7: under_fool: the fool's right neighbour attacks, so the fool defends first."""
    game = bout_game({0: "6C 6D 6H 7C 7D 7H", 1: "8C 8D 8H 9C 9D 9H", 2: "TC TD TH JC JD JH",
                      3: "QC QD QH KC KD KH"}, trump="AS", dealer=0, fool=0, first_move="under_fool")
    assert (game.attacker, game.defender) == (3, 0)


def test_series_after_a_draw_deal_passes_left_and_lowest_trump_leads() -> None:
    """RULES.md 7, 5b.8: after a draw (also a capped one) the next dealer is the last dealer's left neighbour."""
    draw = GameResult(order=[[0, 1, 2]], fools=[], end="draw")
    capped = GameResult(order=[[0], [1, 2]], fools=[], end="action_cap")
    assert next_in_series(draw, dealer=2, players=3) == (0, None)
    assert next_in_series(capped, dealer=0, players=3) == (1, None)


def test_series_several_fools_first_clockwise_from_the_dealers_left() -> None:
    """RULES.md 7: several fools: look from the last dealer's left round to the last dealer himself."""
    assert next_in_series(fool_result(0, 2), dealer=1, players=4) == (2, 2)
    assert next_in_series(fool_result(0, 2), dealer=2, players=4) == (0, 0)
    assert next_in_series(fool_result(1, 3), dealer=3, players=4) == (1, 1)
