"""Scenario tests for chase Durak (RULES.md 4, 5b.5, 5b.8, example 10.3)."""

from __future__ import annotations

import pytest
from scenario import actions_taken, bout_game, hands, legal, play, position, table

from protocol.views import GameResult
from referee.engine import IllegalActionError

# RULES.md 10.3: A, B, C = seats 0, 1, 2; trump spades; A holds the lowest spade and attacks B.
EXAMPLE_HANDS = {0: "7C 7D 7H 6S 9C 9S", 1: "8H TD JC QC 8S 9H", 2: "8C 8D KH AC AD KC"}
EXAMPLE_STOCK = "6C 6D 6H TC TH JD JH QD QH 7S"


def test_worked_example_chases() -> None:
    """RULES.md 4.1, 10.3: 3 cards at once score 1; separate throw-ins and defence score nothing."""
    game = bout_game(EXAMPLE_HANDS, trump="AS", stock=EXAMPLE_STOCK, variant="chase")
    assert (game.attacker, game.defender) == (0, 1)
    play(game, "attack 7C 7D 7H")
    assert game.chases == [1, 0, 0]
    play(game, "beat 7C JC", "beat 7D TD", "beat 7H 8H")
    assert (game.to_move, legal(game)) == (0, {"pass"})  # A holds no 7, 8, T or J; the table has room (5b.2)
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 8C", "throw 8D", "throw 8C 8D", "pass"})
    play(game, "throw 8C", "beat 8C QC", "pass", "throw 8D", "beat 8D 8S", "pass", "pass")
    assert game.chases == [1, 0, 0]
    assert actions_taken(game.events)[4:] == [(0, "pass"), (2, "throw 8C"), (1, "beat 8C QC"), (0, "pass"),
                                              (2, "throw 8D"), (1, "beat 8D 8S"), (0, "pass"), (2, "pass")]
    assert hands(game) == {0: "6C 6D 6H 6S 9C 9S", 1: "9H TC TH JD JH QD", 2: "7S QH KC KH AC AD"}
    assert (game.attacker, game.defender) == (1, 2)
    play(game, "attack 9H", "beat 9H KH")
    assert (game.to_move, legal(game)) == (1, {"pass"})  # B, the primary attacker, first: no 9 or K left
    play(game, "pass")
    assert (game.to_move, legal(game)) == (0, {"throw 9C", "throw 9S", "throw 9C 9S", "pass"})
    play(game, "throw 9C 9S")
    assert game.chases == [2, 0, 0]
    assert game.view(1).chases == [2, 0, 0]


def test_four_cards_at_once_score_two_chases() -> None:
    """RULES.md 4.1: k >= 2 cards of one rank in one action score floor(k/2): four cards score 2."""
    game = bout_game({0: "6C 6D 6H 6S 9H KD", 1: "7C 7D 8H 8S TH AS"}, trump="QS", variant="chase")
    play(game, "attack 6C 6D 6H 6S")
    assert game.chases == [2, 0]


def test_throw_in_after_take_scores_and_single_cards_do_not() -> None:
    """RULES.md 4.1: a throw-in also after a take scores; a single card never does."""
    game = bout_game({0: "6C 6D 6H 9H TC JC", 1: "8S 9S QH QD KC AS"}, trump="AH", variant="chase")
    play(game, "attack 6C")
    assert game.chases == [0, 0]
    play(game, "take")
    assert legal(game) == {"throw 6D", "throw 6H", "throw 6D 6H", "pass"}
    play(game, "throw 6D 6H")
    assert game.chases == [1, 0]
    assert (game.to_move, legal(game)) == (0, {"pass"})  # no 6 left, room for 3 more: asked (5b.2)
    play(game, "pass")
    assert hands(game)[1] == "6C 6D 6H 8S 9S QD QH KC AS"


def test_fewest_chases_is_the_fool_even_having_gone_out() -> None:
    """RULES.md 4.2: the fewest chases lose; holding cards at the end does not by itself make the fool."""
    game = position({0: "9H 9D", 1: "8H 8D 9C"}, trump="AS", attacker=1, variant="chase")
    play(game, "attack 8D 8H", "beat 8H 9H", "beat 8D 9D")
    assert actions_taken(game.events)[-1] == (1, "pass")  # 9C matches, but seat 0 has no cards
    assert game.result == GameResult(order=[[1], [0]], fools=[0], end="fool", chases=[0, 1])


def test_tie_on_fewest_chases_the_one_out_last_is_the_fool() -> None:
    """RULES.md 4.2, 10.3: A 0 out first, B 0 out second, C 1 holds cards: B is the fool."""
    game = position({0: "7C 7D", 1: "8C", 2: "6C 6D 9C KH"}, trump="AS", attacker=2, variant="chase")
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D")
    assert game.out == [[0]]
    assert (game.attacker, game.defender) == (1, 2)  # seat 0 has no cards: the next after him attacks
    play(game, "attack 8C", "beat 8C 9C")
    assert game.out == [[0], [1]]
    assert game.result == GameResult(order=[[0], [2], [1]], fools=[1], end="fool", chases=[0, 0, 1])


def test_tie_on_fewest_chases_player_still_holding_cards_counts_last() -> None:
    """RULES.md 4.2, 10.3 row 1: A 1 out first, B 0 out next, C 0 holds cards: C is the fool."""
    game = position({0: "6C 6D", 1: "7C 7D 8H", 2: "9H TH"}, trump="AS", attacker=0, variant="chase")
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D", "pass")  # C, asked: A has no cards
    assert game.out == [[0]] and game.chases == [1, 0, 0]
    play(game, "attack 8H", "beat 8H 9H")
    assert game.result == GameResult(order=[[0], [1], [2]], fools=[2], end="fool", chases=[1, 0, 0])


def test_tied_players_out_in_the_same_bout_share_the_loss() -> None:
    """RULES.md 4.2, 10.3 row 3: A out first with a chase; B and C (0 each) out together: co-fools."""
    game = position({0: "6C 6D", 1: "7C 7D 9H", 2: "TH"}, trump="AS", attacker=0, variant="chase")
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D", "pass")  # C, asked: A has no cards
    assert game.out == [[0]]
    play(game, "attack 9H", "beat 9H TH")
    assert game.result == GameResult(order=[[0], [1, 2]], fools=[1, 2], end="fool", chases=[1, 0, 0])


def test_shared_loss_of_every_player_is_a_draw() -> None:
    """RULES.md 4.2, 10.3 row 4: 2 players with 1 chase each out in the same bout: a draw."""
    game = position({0: "6C 6D 9C 9D", 1: "7C 7D 8C 8D"}, trump="AS", attacker=0, variant="chase")
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D", "pass")  # A, asked: B holds 2 cards
    assert (game.attacker, game.chases) == (1, [1, 0])
    play(game, "attack 8C 8D", "beat 8C 9C", "beat 8D 9D")
    assert game.result == GameResult(order=[[0, 1]], fools=[], end="draw", chases=[1, 1])


def test_fewest_chases_rule_applies_when_nobody_holds_cards() -> None:
    """RULES.md 5b.8: everybody out in the same bout, chases 1 and 0: the one with 0 is the fool."""
    game = position({0: "6C 6D", 1: "7C 7D"}, trump="AS", attacker=0, variant="chase")
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D")
    assert game.result == GameResult(order=[[0], [1]], fools=[1], end="fool", chases=[1, 0])


def test_action_cap_in_chase_is_a_draw_without_chase_scoring() -> None:
    """RULES.md 5b.8: reaching max_actions is a flagged draw; nobody is the fool whatever the chases."""
    game = bout_game(EXAMPLE_HANDS, trump="AS", stock=EXAMPLE_STOCK, variant="chase", max_actions=2)
    play(game, "attack 7C 7D 7H", "beat 7C JC")
    assert game.result == GameResult(order=[[0, 1, 2]], fools=[], end="action_cap", chases=[1, 0, 0])


def test_forfeit_in_chase_ignores_chases() -> None:
    """RULES.md 6.2: the forfeiter is the fool; the fewest-chases rule is not applied."""
    game = bout_game(EXAMPLE_HANDS, trump="AS", stock=EXAMPLE_STOCK, variant="chase")
    play(game, "attack 7C 7D 7H")
    result = game.forfeit(0, "crash", "exit 1")
    assert (result.order, result.fools, result.end, result.chases) == ([[1, 2], [0]], [0], "forfeit", [1, 0, 0])


def test_chase_has_no_transfers_by_default() -> None:
    """RULES.md 4.3: allow_transfer is off by default: no transfer actions."""
    game = bout_game({0: "6C 6D 6H 9H TC JC", 1: "6S 8S QH QD KC AS"}, trump="AH", variant="chase")
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C KC", "beat 6C QH", "take"}
    with pytest.raises(IllegalActionError, match="chase has no transfers"):
        game.apply_str("transfer 6S")


def test_allow_transfer_classic_transfers_never_score() -> None:
    """RULES.md 4.3, 5b.5: with allow_transfer, transfers before any beat; they never score chases."""
    game = position({0: "6C 7D 8D 9H", 1: "6H 6S 9C KH", 2: "TC JC QC KC"}, trump="AD", attacker=0,
                    variant="chase", allow_transfer=True)
    play(game, "attack 6C")
    assert legal(game) == {"beat 6C 9C", "transfer 6H", "transfer 6S", "transfer 6H 6S", "take"}
    play(game, "transfer 6H 6S")
    assert game.chases == [0, 0, 0]
    assert (game.attacker, game.defender, game.to_move) == (1, 2, 2)
    assert table(game) == "6C/- 6H/- 6S/-"


def test_allow_transfer_no_transfer_after_a_beat() -> None:
    """RULES.md 4.3, 5b.5: chase transfers are classic: once a table card is beaten, no transfer."""
    game = position({0: "6C 9C 8D 9H", 1: "TC 9S 9D KD", 2: "TH JC QC KC"}, trump="AD", attacker=0,
                    variant="chase", allow_transfer=True)
    play(game, "attack 6C", "beat 6C 9D")
    assert (game.to_move, legal(game)) == (0, {"throw 9C", "throw 9H", "throw 9C 9H", "pass"})
    play(game, "throw 9C")
    assert legal(game) == {"beat 9C TC", "beat 9C KD", "take"}
    with pytest.raises(IllegalActionError, match="transfer_after_beat"):
        game.apply_str("transfer 9S")
