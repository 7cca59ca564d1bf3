"""Scenario tests for transfer Durak, perevodnoy (RULES.md 3, 5b.4, 5b.5, example 10.2)."""

from __future__ import annotations

import pytest
from scenario import actions_taken, bout_game, discard, draws, hand, hands, known, legal, play, position, table

from protocol.views import GameResult
from referee.engine import IllegalActionError

# RULES.md 10.2: A (seat 0) attacks B (seat 1), trump spades. A attacks because B was the last game's fool.
SEED_HANDS = {0: "6C 7C 8H 9D TH KC", 1: "6H 8C 8D 9S JH AD"}
SEED_STOCK = "6D 6S 7D 7H 7S 8S"


def seed_game(**options: object):
    return bout_game(SEED_HANDS, trump="QS", stock=SEED_STOCK, variant="perevodnoy", dealer=1, fool=1, **options)


def test_seed_example_step_by_step() -> None:
    """RULES.md 3.2, 3.4, 10.2: A 6C, B beats 8C, A throws 8H, B transfers 8D; A must beat 8H and 8D."""
    game = seed_game()
    assert (game.attacker, game.defender) == (0, 1)
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 8C", "beat 6C 9S", "transfer 6H", "take"}
    play(game, "beat 6C 8C")
    assert (game.to_move, legal(game)) == (0, {"throw 8H", "pass"})
    play(game, "throw 8H")
    assert legal(game) == {"beat 8H JH", "beat 8H 9S", "transfer 8D", "take"}
    play(game, "transfer 8D")
    # the beaten pair stays; A defends; B is the primary attacker
    assert table(game) == "6C/8C 8H/- 8D/-"
    assert (game.attacker, game.defender, game.to_move, game.phase) == (1, 0, 0, "defend")
    assert legal(game) == {"beat 8H TH", "beat 8D 9D", "take"}
    play(game, "beat 8D 9D", "beat 8H TH")
    assert table(game) == "6C/8C 8H/TH 8D/9D"
    assert (game.to_move, legal(game)) == (1, {"throw 6H", "throw 9S", "pass"})
    play(game, "pass")
    assert discard(game) == "6C 8C 8D 8H 9D TH"
    # the refill starts with A, who led the bout's first card; A beat everything, so A attacks next
    assert draws(game.events) == [(0, "6D 6S 7D 7H"), (1, "7S 8S")]
    assert hands(game) == {0: "6D 6S 7C 7D 7H KC", 1: "6H 7S 8S 9S JH AD"}
    assert (game.attacker, game.defender, game.to_move) == (0, 1, 0)


def test_seed_example_with_beaten_pairs_discarded() -> None:
    """RULES.md 3.3, 5c: transfer_beaten_pairs = discard: 6C/8C goes to the discard at the transfer."""
    game = seed_game(transfer_beaten_pairs="discard")
    play(game, "attack 6C", "beat 6C 8C", "throw 8H", "transfer 8D")
    assert table(game) == "8H/- 8D/-"
    assert discard(game) == "6C 8C"
    assert legal(game) == {"beat 8H TH", "beat 8D 9D", "take"}
    play(game, "beat 8D 9D", "beat 8H TH")
    assert legal(game) == {"throw 9S", "pass"}  # 6 is no longer a rank on the table
    play(game, "pass")
    assert discard(game) == "6C 8C 8D 8H 9D TH"


def test_classic_perevodnoy_no_transfer_once_a_card_is_beaten() -> None:
    """RULES.md 3.2, 5b.5: transfer_after_beat off: the transfer of step 4 is illegal, B must beat or take."""
    game = seed_game(transfer_after_beat=False)
    play(game, "attack 6C")
    assert "transfer 6H" in legal(game)  # nothing beaten yet
    play(game, "beat 6C 8C", "throw 8H")
    assert legal(game) == {"beat 8H JH", "beat 8H 9S", "take"}
    with pytest.raises(IllegalActionError, match="transfer_after_beat"):
        game.apply_str("transfer 8D")


def test_seed_example_take_after_transfer_takes_the_beaten_pair_too() -> None:
    """RULES.md 1.8, 3.3, 10.2: had A taken, B may still throw in a 6 or 8; A takes every table card."""
    game = seed_game()
    play(game, "attack 6C", "beat 6C 8C", "throw 8H", "transfer 8D", "take")
    assert (game.to_move, legal(game)) == (1, {"throw 6H", "pass"})
    play(game, "throw 6H")
    # B holds no 6 or 8 now, but A holds 9 cards and 4 are unbeaten: there is room, so B is asked (5b.2)
    assert (game.to_move, legal(game)) == (1, {"pass"})
    play(game, "pass")
    assert actions_taken(game.events)[-2:] == [(1, "throw 6H"), (1, "pass")]
    assert hands(game) == {0: "6C 6H 7C 8C 8D 8H 9D TH KC", 1: "6D 6S 7D 9S JH AD"}
    assert known(game, 0) == "6C 6H 8C 8D 8H"
    assert draws(game.events) == [(1, "6D 6S 7D")]
    assert (game.attacker, game.defender) == (1, 0)  # after a take: the final defender's left


def test_defender_draws_last_means_the_final_defender() -> None:
    """RULES.md 1.10, 5b.5: after the transfer A is the (final) defender, so with the option he draws last."""
    game = seed_game(defender_draws_last=True)
    play(game, "attack 6C", "beat 6C 8C", "throw 8H", "transfer 8D", "beat 8D 9D", "beat 8H TH", "pass")
    assert draws(game.events) == [(1, "6D 6S"), (0, "7D 7H 7S 8S")]


def test_transfer_refused_when_the_next_hand_is_too_small() -> None:
    """RULES.md 3.1(b): the new defender must hold at least as many cards as there will be unbeaten cards."""
    game = position({0: "6C 7D", 1: "6H 6S 9C"}, trump="AD", attacker=0, variant="perevodnoy")
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 9C", "take"}  # A keeps 1 card; a transfer would make 2 unbeaten
    with pytest.raises(IllegalActionError, match="must hold at least as many cards"):
        game.apply_str("transfer 6H")


def test_transfer_size_capped_by_the_next_hand() -> None:
    """RULES.md 3.1(b), 5b.4: A keeps 2 cards: one 6 may be added, not two."""
    game = position({0: "6C 7D 8D", 1: "6H 6S 9C"}, trump="AD", attacker=0, variant="perevodnoy")
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 9C", "transfer 6H", "transfer 6S", "take"}
    with pytest.raises(IllegalActionError, match="must hold at least as many cards"):
        game.apply_str("transfer 6H 6S")


def test_transfer_must_match_the_rank() -> None:
    """RULES.md 3.1: the transfer adds cards of the unbeaten cards' rank."""
    game = position({0: "6C 7D 8D", 1: "6H 6S 9C"}, trump="AH", attacker=0, variant="perevodnoy")
    play(game, "attack 6C")
    with pytest.raises(IllegalActionError, match="must match the rank"):
        game.apply_str("transfer 9C")


def six_card_limit_position(**options: object):
    game = position({0: "6C 6D 6H 6S 9C KC KD KH", 1: "7C 7D 7H 9S 9D 9H"}, trump="AS", attacker=0,
                    variant="perevodnoy", **options)
    play(game, "attack 6C 6D 6H 6S", "beat 6C 7C", "beat 6D 7D", "beat 6H 7H", "beat 6S 9S")
    assert legal(game) == {"throw 9C", "pass"}
    play(game, "throw 9C")
    return game


def test_transfer_over_the_6_card_limit_counts_beaten_pairs_that_stay() -> None:
    """RULES.md 3.1(c), 3.3, 5b.4: 4 beaten pairs + 9C = 5 attack cards: one more 9 may go, not two."""
    game = six_card_limit_position()
    assert legal(game) == {"transfer 9D", "transfer 9H", "take"}
    with pytest.raises(IllegalActionError, match="6-card bout limit"):
        game.apply_str("transfer 9D 9H")


def test_transfer_limit_with_discarded_pairs() -> None:
    """RULES.md 3.3, 5b.5: with transfer_beaten_pairs = discard the discarded pairs leave the count."""
    game = six_card_limit_position(transfer_beaten_pairs="discard")
    assert legal(game) == {"transfer 9D", "transfer 9H", "transfer 9D 9H", "take"}
    play(game, "transfer 9D 9H")
    assert table(game) == "9C/- 9D/- 9H/-"
    assert discard(game) == "6C 6D 6H 6S 7C 7D 7H 9S"
    # B has no cards left, so A cannot transfer back
    assert (game.to_move, legal(game)) == (0, {"beat 9C KC", "beat 9D KD", "beat 9H KH", "take"})


def test_three_players_transfer_passes_left_and_transferrer_becomes_primary_attacker() -> None:
    """RULES.md 3.1, 1.6.3, 1.10, 5b.5: B transfers to C; B is first in priority; A still draws first."""
    game = bout_game({0: "7C 7H 6D TC JC QC", 1: "7D 8H KD KH QD QH", 2: "8C 8D 9H AD AH KC"}, trump="AS",
                     stock="6S 7S 8S 9S TS JS", variant="perevodnoy", dealer=2, fool=2)
    play(game, "attack 7C")
    assert legal(game) == {"transfer 7D", "take"}
    play(game, "transfer 7D")
    assert (game.attacker, game.defender, game.to_move) == (1, 2, 2)
    assert legal(game) == {"beat 7C 8C", "beat 7C KC", "beat 7D 8D", "beat 7D AD", "take"}
    play(game, "beat 7C 8C", "beat 7D 8D")
    assert (game.to_move, legal(game)) == (1, {"throw 8H", "pass"})
    play(game, "pass")
    assert (game.to_move, legal(game)) == (0, {"throw 7H", "pass"})
    play(game, "throw 7H")
    assert legal(game) == {"beat 7H 9H", "beat 7H AH", "take"}
    play(game, "beat 7H 9H")
    assert (game.to_move, legal(game)) == (1, {"throw 8H", "pass"})  # priority restarts with B
    play(game, "pass")
    assert (game.to_move, legal(game)) == (0, {"pass"})  # A holds no 7, 8 or 9, but the table has room
    play(game, "pass")
    assert actions_taken(game.events)[-2:] == [(1, "pass"), (0, "pass")]
    assert discard(game) == "7C 7D 7H 8C 8D 9H"
    assert draws(game.events) == [(0, "6S 7S"), (1, "8S"), (2, "9S TS JS")]
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 2)  # C defended: C attacks A


def test_new_defender_may_transfer_again_round_the_table() -> None:
    """RULES.md 3.1: the new defender may transfer again; here the attack comes back to A."""
    game = bout_game({0: "7C 7S 8C 8D 8H 9C", 1: "7D TC TD TH JC JD", 2: "7H QD QH KC KD KH"}, trump="AS",
                     variant="perevodnoy", dealer=2, fool=2)
    play(game, "attack 7C", "transfer 7D")
    assert legal(game) == {"beat 7C KC", "beat 7D QD", "beat 7D KD", "transfer 7H", "take"}
    play(game, "transfer 7H")
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 0)
    assert legal(game) == {"beat 7C 8C", "beat 7C 9C", "beat 7C 7S", "beat 7D 8D", "beat 7D 7S",
                           "beat 7H 8H", "beat 7H 7S", "transfer 7S", "take"}
    play(game, "transfer 7S")
    assert (game.attacker, game.defender, game.to_move) == (0, 1, 1)
    assert table(game) == "7C/- 7D/- 7H/- 7S/-"
    assert legal(game) == {"beat 7C TC", "beat 7C JC", "beat 7D TD", "beat 7D JD", "beat 7H TH", "take"}


def test_transfer_goes_to_the_next_seat_with_cards() -> None:
    """RULES.md 5b.5: C threw his last card, so B's transfer goes past C to A; A and C go out together."""
    game = position({0: "6C KH KD", 1: "7C 7D QH QD", 2: "7H"}, trump="AS", attacker=0, variant="perevodnoy")
    play(game, "attack 6C", "beat 6C 7C")
    assert (game.to_move, legal(game)) == (0, {"pass"})  # A holds no 6 or 7, but the table has room (5b.2)
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 7H", "pass"})
    play(game, "throw 7H")
    assert legal(game) == {"beat 7H QH", "transfer 7D", "take"}
    play(game, "transfer 7D")
    assert (game.attacker, game.defender, game.to_move) == (1, 0, 0)
    assert legal(game) == {"beat 7H KH", "beat 7D KD", "take"}
    play(game, "beat 7H KH", "beat 7D KD")
    assert hand(game, 1) == "QD QH"
    assert game.result == GameResult(order=[[0, 2], [1]], fools=[1], end="fool")


def test_no_looking_further_round_when_the_next_hand_is_too_small() -> None:
    """RULES.md 5b.5: C holds one card, too few for two unbeaten: no transfer, though A holds enough."""
    game = position({0: "7C 8S 9H TD", 1: "7D KH QC", 2: "AH"}, trump="AS", attacker=0, variant="perevodnoy")
    play(game, "attack 7C")
    assert legal(game) == {"beat 7C QC", "take"}
    with pytest.raises(IllegalActionError, match="must hold at least as many cards"):
        game.apply_str("transfer 7D")


def test_first_bout_limit_caps_transfers() -> None:
    """RULES.md 3.1(c), 5b.4: first_bout_limit 2: a transfer may bring the count to 2, not to 3."""
    game = bout_game({0: "6C 6H 9H TH JH QH", 1: "6D 7D 8D 9D TD JD"}, trump="AS", variant="perevodnoy",
                     dealer=1, fool=1, first_bout_limit=2)
    play(game, "attack 6C")
    assert "transfer 6D" in legal(game)
    play(game, "transfer 6D")
    assert legal(game) == {"take"}  # A holds 6H, but a third attack card would break the limit
    with pytest.raises(IllegalActionError, match="bout limit"):
        game.apply_str("transfer 6H")


def test_podkidnoy_has_no_transfers() -> None:
    """RULES.md 2, 3: the throw-in game offers no transfer actions."""
    game = bout_game(SEED_HANDS, trump="QS", stock=SEED_STOCK, dealer=1, fool=1)
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 8C", "beat 6C 9S", "take"}


def test_transfer_after_beating_part_of_the_lead() -> None:
    """RULES.md 3.2, 5b.5: with transfer_after_beat on, the defender may beat one card, then transfer."""
    game = position({0: "7C 7D 9H TH JH", 1: "8C 7H QH KD"}, trump="AS", attacker=0, variant="perevodnoy")
    play(game, "attack 7C 7D")
    assert legal(game) == {"beat 7C 8C", "beat 7D KD", "transfer 7H", "take"}
    play(game, "beat 7C 8C")
    assert legal(game) == {"beat 7D KD", "transfer 7H", "take"}
    play(game, "transfer 7H")
    assert table(game) == "7C/8C 7D/- 7H/-"
    assert (game.to_move, legal(game)) == (0, {"beat 7H 9H", "beat 7H TH", "beat 7H JH", "take"})


def test_classic_no_transfer_after_beating_part_of_the_lead() -> None:
    """RULES.md 3.2, 5b.5: transfer_after_beat off: once one lead card is beaten, no transfer."""
    game = position({0: "7C 7D 9H TH JH", 1: "8C 7H QH KD"}, trump="AS", attacker=0, variant="perevodnoy",
                    transfer_after_beat=False)
    play(game, "attack 7C 7D")
    assert "transfer 7H" in legal(game)
    play(game, "beat 7C 8C")
    assert legal(game) == {"beat 7D KD", "take"}


def test_no_transfer_without_a_new_defender() -> None:
    """RULES.md 3.1(a), 5b.5: the attacker led his last card and nobody else holds cards: no transfer."""
    game = position({0: "6C", 1: "6D 9C KH"}, trump="AS", attacker=0, variant="perevodnoy")
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 9C", "take"}
