"""Scenario tests for the bout (podkidnoy): leads, defence, throw-ins, limits, refill, going out, results.

Each test deals explicit hands (tests/scenario.py), plays explicit actions and checks the exact state and
the exact set of legal actions. RULES.md sections are cited in each docstring.
"""

from __future__ import annotations

import pytest
from scenario import (
    actions_taken,
    bout_game,
    discard,
    draws,
    hand,
    hands,
    known,
    legal,
    play,
    position,
    table,
)

from protocol.actions import InvalidActionError
from protocol.events import BoutEnded, CardsDrawn, PlayersOut, event_for_seat
from protocol.views import GameResult
from referee.engine import GameOverError, IllegalActionError

SIXES = ("6C", "6D", "6H", "6S")


def subsets(cards: tuple[str, ...], kind: str, up_to: int) -> set[str]:
    """``kind`` actions for every non-empty subset of ``cards`` (one rank, given in order) of size <= up_to."""
    out = set()
    for bits in range(1, 1 << len(cards)):
        chosen = [c for i, c in enumerate(cards) if bits >> i & 1]
        if len(chosen) <= up_to:
            out.add(f"{kind} {' '.join(chosen)}")
    return out


# -- the lead ---------------------------------------------------------------------------------------------

def test_lead_offers_every_nonempty_subset_of_one_rank() -> None:
    """RULES.md 1.6.1, 0.3: a lead is 1+ cards of one rank: all 15 subsets of four sixes, and each single."""
    game = bout_game({0: "6C 6D 6H 6S 9H KD", 1: "7C 8C 8D TH JS AC"}, trump="AS")
    assert (game.to_move, game.phase) == (0, "lead")  # 6S is the lowest trump
    assert legal(game) == subsets(SIXES, "attack", 4) | {"attack 9H", "attack KD"}
    assert len(game.legal_actions()) == 17


def test_lead_is_capped_by_the_defenders_hand() -> None:
    """RULES.md 1.7, 5b.4: never more unbeaten cards than the defender holds; this caps the lead."""
    game = position({0: "6C 6D 6H 6S KD", 1: "7C 8C"}, trump="AH", attacker=0)
    assert legal(game) == subsets(SIXES, "attack", 2) | {"attack KD"}
    with pytest.raises(IllegalActionError, match=r"at most 6 attack cards.*defender holds"):
        game.apply_str("attack 6C 6D 6H")


def test_first_bout_limit_2_caps_the_lead_and_the_throw_ins() -> None:
    """RULES.md 1.7, 5b.4, 5c: first_bout_limit 2: at most 2 attack cards until a bout ends all beaten."""
    game = bout_game({0: "6C 6D 6H 6S 9H KD", 1: "7C 7D 8C TH JS AC"}, trump="AS", first_bout_limit=2)
    assert game.view(1).bout_limit == 2
    assert legal(game) == subsets(SIXES, "attack", 2) | {"attack 9H", "attack KD"}
    play(game, "attack 6C 6D", "beat 6C 7C", "beat 6D 7D")
    # seat 0 holds 6H 6S, but the limit is reached: he passes automatically and the bout ends
    assert actions_taken(game.events)[-1] == (0, "pass")
    assert discard(game) == "6C 6D 7C 7D"
    assert (game.attacker, game.defender, game.to_move) == (1, 0, 1)
    assert game.view(0).bout_limit == 6


def test_first_bout_limit_5_holds_through_a_taken_bout_until_one_ends_all_beaten() -> None:
    """RULES.md 5b.4: the limit replaces 6 in every bout up to and including the first that ends all beaten."""
    game = bout_game({0: "6C 6D 6H 6S 7H 7S", 1: "7C 7D 8H 8S 9C 9D"}, trump="AD", stock="TC JC QC KC AC",
                     first_bout_limit=5)
    assert game.to_move == 0  # 6D, the lowest diamond
    assert legal(game) == subsets(SIXES, "attack", 4) | subsets(("7H", "7S"), "attack", 2)
    play(game, "attack 6C 6D 6H 6S", "beat 6C 7C", "take")
    # 4 attack cards of 5: one more, though the defender's hand (5, 3 unbeaten) would allow two
    assert legal(game) == {"throw 7H", "throw 7S", "pass"}
    play(game, "throw 7H")
    assert hands(game) == {0: "7S TC JC QC KC AC", 1: "6C 6D 6H 6S 7C 7D 7H 8H 8S 9C 9D"}
    assert (game.attacker, game.defender) == (0, 1)
    assert game.view(0).bout_limit == 5  # the taken bout did not lift it
    play(game, "attack 7S", "beat 7S 8S")
    assert (game.to_move, legal(game)) == (0, {"pass"})  # no 7 or 8 to throw, but room: asked (5b.2)
    play(game, "pass")  # the bout ends all beaten
    assert (game.attacker, game.defender) == (1, 0)
    assert game.view(0).bout_limit == 6


# -- defence ----------------------------------------------------------------------------------------------

def defence_game():
    """Seat 0 (attacker, the last game's fool's left) leads 7C 7D to seat 1; spades are trump."""
    game = bout_game({0: "7C 7D 9C JH TD QH", 1: "8C AC 6S 7S KH 9D"}, trump="AS", dealer=1, fool=1)
    play(game, "attack 7C 7D")
    return game


def test_defender_beats_naming_the_target_trumps_beat_anything() -> None:
    """RULES.md 1.2, 1.6.2: higher card of the suit, or any trump; each beat names its target; take is legal."""
    game = defence_game()
    assert (game.to_move, game.phase, table(game)) == (1, "defend", "7C/- 7D/-")
    assert legal(game) == {"beat 7C 8C", "beat 7C AC", "beat 7C 6S", "beat 7C 7S",
                           "beat 7D 9D", "beat 7D 6S", "beat 7D 7S", "take"}


def test_defender_beats_one_card_at_a_time_and_is_asked_again() -> None:
    """RULES.md 1.6.2, 5b.1: after a beat with a card still unbeaten, the defender answers again."""
    game = defence_game()
    play(game, "beat 7D 6S")
    assert (game.to_move, game.phase, table(game)) == (1, "defend", "7C/- 7D/6S")
    assert legal(game) == {"beat 7C 8C", "beat 7C AC", "beat 7C 7S", "take"}
    assert hand(game, 1) == "7S 8C 9D KH AC"


def test_a_trump_is_beaten_only_by_a_higher_trump() -> None:
    """RULES.md 1.2: against a trump, only a higher trump beats (not a lower trump, not an ace of another suit)."""
    game = bout_game({0: "8S 7C 9C TC JC QC", 1: "6S 9S KS AH 9H KD"}, trump="AS", dealer=1, fool=1)
    play(game, "attack 8S")
    assert legal(game) == {"beat 8S 9S", "beat 8S KS", "take"}


def test_take_then_throw_ins_then_the_defender_takes_everything() -> None:
    """RULES.md 1.8, 5b.3, 5b.7: after take others may throw in; the defender is not asked again; he takes all."""
    game = bout_game({0: "6C 6D 7D 9H TC JC", 1: "7C 8S QH QD KC AS"}, trump="AH", stock="KH KS QC")
    assert game.to_move == 0  # 9H is lower than QH
    play(game, "attack 6C 6D", "beat 6C 7C", "take")
    assert game.view(0).taking
    assert (game.to_move, game.phase, table(game)) == (0, "throw", "6C/7C 6D/-")
    assert legal(game) == {"throw 7D", "pass"}
    mark = len(game.events)
    play(game, "throw 7D")
    assert (game.to_move, legal(game)) == (0, {"pass"})  # priority restarts; room for 3 more (5b.2)
    play(game, "pass")
    assert actions_taken(game.events[mark:]) == [(0, "throw 7D"), (0, "pass")]
    assert BoutEnded(outcome="taken", defender=1, cards=["6C", "6D", "7C", "7D"]) in game.events[mark:]
    assert hands(game) == {0: "9H TC JC QC KH KS", 1: "6C 6D 7C 7D 8S QD QH KC AS"}
    assert known(game, 1) == "6C 6D 7C 7D"
    assert draws(game.events[mark:]) == [(0, "KH KS QC")]
    assert (game.attacker, game.defender, game.to_move, game.phase) == (0, 1, 0, "lead")


def test_throw_in_after_take_off_ends_the_bout_at_once() -> None:
    """RULES.md 1.8, 5c: throw_in_after_take false: after take the defender takes the table immediately."""
    game = bout_game({0: "6C 6D 7D 9H TC JC", 1: "7C 8S QH QD KC AS"}, trump="AH", stock="KH KS QC",
                     throw_in_after_take=False)
    mark = len(game.events)
    play(game, "attack 6C 6D", "beat 6C 7C", "take")
    assert actions_taken(game.events[mark:]) == [(0, "attack 6C 6D"), (1, "beat 6C 7C"), (1, "take")]
    assert hands(game) == {0: "7D 9H TC JC KH KS", 1: "6C 6D 7C 8S QD QH KC AS"}
    assert (game.attacker, game.defender, game.to_move) == (0, 1, 0)


# -- throw-ins --------------------------------------------------------------------------------------------

def test_throw_in_ranks_include_defence_cards() -> None:
    """RULES.md 1.6.3: a throw-in matches any rank on the table, attack or defence card."""
    game = bout_game({0: "7C 7H 9D 9S KD 6C", 1: "9C 8D TH JH QS AC"}, trump="AS", dealer=1, fool=1)
    play(game, "attack 7C", "beat 7C 9C")
    assert (game.to_move, game.phase) == (0, "throw")
    assert legal(game) == {"throw 7H", "throw 9D", "throw 9S", "throw 9D 9S", "pass"}


def three_player_game(**options: object):
    """Seat 0 attacks seat 1 (the fool was seat 2); trump spades; stock 9S TS JS QS on top."""
    return bout_game({0: "6C 7H 9C TC JC QC", 1: "7C 8D 9H TH JH QH", 2: "6D 8H 9D TD JD QD"},
                     trump="AS", stock="9S TS JS QS", dealer=2, fool=2, **options)


def test_priority_restarts_with_the_primary_attacker_who_is_asked_again() -> None:
    """RULES.md 1.6.3, 5b.3: priority primary attacker, then clockwise; after any throw-in it restarts."""
    game = three_player_game()
    play(game, "attack 6C", "beat 6C 7C")
    assert (game.to_move, legal(game)) == (0, {"throw 7H", "pass"})
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 6D", "pass"})
    play(game, "throw 6D")
    assert (game.to_move, legal(game)) == (1, {"beat 6D 8D", "take"})
    play(game, "beat 6D 8D")
    assert (game.to_move, legal(game)) == (0, {"throw 7H", "pass"})  # asked again after passing
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 8H", "pass"})
    play(game, "pass")
    assert discard(game) == "6C 6D 7C 8D"
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "beat 6C 7C"), (0, "pass"), (2, "throw 6D"),
                                          (1, "beat 6D 8D"), (0, "pass"), (2, "pass")]


def test_refill_starts_with_the_bouts_first_attacker_then_clockwise() -> None:
    """RULES.md 1.10: each draws up to 6, one player completely before the next, from the leader clockwise."""
    game = three_player_game()
    play(game, "attack 6C", "beat 6C 7C", "pass", "throw 6D", "beat 6D 8D", "pass", "pass")
    assert draws(game.events) == [(0, "9S"), (1, "TS JS"), (2, "QS")]
    assert hands(game) == {0: "7H 9C 9S TC JC QC", 1: "9H TH TS JH JS QH", 2: "8H 9D TD JD QD QS"}
    assert (game.attacker, game.defender, game.to_move) == (1, 2, 1)  # the defender beat everything


def test_defender_draws_last_option() -> None:
    """RULES.md 1.10, 5c: defender_draws_last: the (final) defender draws after everyone else."""
    game = three_player_game(defender_draws_last=True)
    play(game, "attack 6C", "beat 6C 7C", "pass", "throw 6D", "beat 6D 8D", "pass", "pass")
    assert draws(game.events) == [(0, "9S"), (2, "TS"), (1, "JS QS")]


def test_six_card_limit_stops_throw_ins() -> None:
    """RULES.md 1.7, 5b.4: at most 6 attack cards per bout, even when the defender's hand would allow more."""
    game = position({0: "6C 6H 6S 7C 7H 7S 8C", 1: "7D 8H 8S 9C 9H 9S QC QH"}, trump="AD", attacker=0)
    play(game, "attack 6C 6H 6S", "beat 6C 7D", "beat 6H 8H", "beat 6S 8S")
    assert legal(game) == subsets(("7C", "7H", "7S"), "throw", 3) | {"throw 8C", "pass"}
    play(game, "throw 7C 7H 7S", "beat 7C 9C", "beat 7H 9H", "beat 7S 9S")
    assert actions_taken(game.events)[-1] == (0, "pass")  # 8C matches, but 6 attack cards are down
    assert hands(game) == {0: "8C", 1: "QC QH"}
    assert (game.attacker, game.defender) == (1, 0)


def test_defender_hand_limit_caps_throw_ins_also_after_take() -> None:
    """RULES.md 1.7, 1.8, 5b.4: unbeaten cards never exceed the defender's hand, before and after take."""
    game = position({0: "6C 6D 6H 8C", 1: "7C KS"}, trump="AS", attacker=0)
    assert legal(game) == subsets(("6C", "6D", "6H"), "attack", 2) | {"attack 8C"}
    play(game, "attack 6C", "beat 6C 7C")
    assert legal(game) == {"throw 6D", "throw 6H", "pass"}  # the defender holds one card
    with pytest.raises(IllegalActionError, match="never more unbeaten cards than the defender holds"):
        game.apply_str("throw 6D 6H")
    play(game, "throw 6D")
    assert legal(game) == {"beat 6D KS", "take"}
    play(game, "take")
    assert actions_taken(game.events)[-1] == (0, "pass")  # 6H matches, but 1 unbeaten = his hand
    assert hands(game) == {0: "6H 8C", 1: "6C 6D 7C KS"}
    assert known(game, 1) == "6C 6D 7C"
    assert (game.attacker, game.defender) == (0, 1)


# -- refill, the trump card, next attacker, going out ----------------------------------------------------

def test_trump_card_is_drawn_last_and_then_publicly_known() -> None:
    """RULES.md 1.3, 5b.7, 9.2: the face-up trump card is the stock's last card; once drawn it is known."""
    game = position({0: "6C 7D", 1: "8C QD JS"}, trump="9H", attacker=0, stock="KC 9H")
    play(game, "attack 6C", "beat 6C 8C", "pass")
    draw = next(e for e in game.events if isinstance(e, CardsDrawn))
    assert draw == CardsDrawn(seat=0, count=2, cards=["KC", "9H"], shown=["9H"])
    assert event_for_seat(draw, 1) == CardsDrawn(seat=0, count=2, cards=None, shown=["9H"])
    assert hands(game) == {0: "7D 9H KC", 1: "JS QD"}
    assert known(game, 0) == "9H"
    assert game.view(1).stock == 0
    assert (game.attacker, game.defender) == (1, 0)


def test_player_who_empties_his_hand_but_refills_is_still_in() -> None:
    """RULES.md 1.11, 5b.5, 5b.8: going out is checked at the bout's end after the refill."""
    game = position({0: "6C", 1: "7C 8D 9S KH"}, trump="AS", attacker=0, stock="TC JD QH AS")
    play(game, "attack 6C")
    assert hand(game, 0) == "" and game.out == []
    play(game, "beat 6C 7C")
    assert hands(game) == {0: "TC JD QH AS", 1: "8D 9S KH"}
    assert game.out == [] and game.result is None
    assert (game.attacker, game.defender) == (1, 0)


def test_players_out_in_one_bout_share_a_place_and_the_last_holder_is_the_fool() -> None:
    """RULES.md 1.11, 5b.8: seats without cards are skipped; all emptied in one bout share a place."""
    game = position({0: "6C", 1: "7C 8D 9S", 2: "7H"}, trump="AS", attacker=0)
    play(game, "attack 6C", "beat 6C 7C")
    assert (game.to_move, legal(game)) == (2, {"throw 7H", "pass"})  # seat 0 has no cards: skipped
    play(game, "throw 7H")
    assert legal(game) == {"beat 7H 9S", "take"}
    play(game, "beat 7H 9S")
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "beat 6C 7C"), (2, "throw 7H"), (1, "beat 7H 9S")]
    assert PlayersOut(seats=[0, 2], place=1) in game.events
    assert game.result == GameResult(order=[[0, 2], [1]], fools=[1], end="fool")
    assert game.to_move is None and game.legal_actions() == []
    assert game.view(1).phase == "over"
    with pytest.raises(GameOverError):
        game.apply_str("attack 8D")


def test_nobody_left_with_cards_is_a_draw() -> None:
    """RULES.md 1.11: if nobody has cards at the end, the game is a draw."""
    game = position({0: "6C", 1: "7C"}, trump="AS", attacker=0)
    play(game, "attack 6C", "beat 6C 7C")
    assert game.result == GameResult(order=[[0, 1]], fools=[], end="draw")


def test_next_attacker_after_a_take_skips_a_seat_without_cards() -> None:
    """RULES.md 1.9: after a take, the next player with cards to the defender's left attacks."""
    game = position({0: "6C 9H", 1: "KD QD", 2: "6D"}, trump="AS", attacker=0)
    play(game, "attack 6C", "take")
    assert (game.to_move, legal(game)) == (0, {"pass"})
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 6D", "pass"})
    play(game, "throw 6D")  # the defender's 2 cards now face 2 unbeaten: no room, seat 0 passes unasked
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "take"), (0, "pass"), (2, "throw 6D"),
                                          (0, "pass")]
    assert game.out == [[2]]
    assert hands(game) == {0: "9H", 1: "6C 6D QD KD", 2: ""}
    assert (game.attacker, game.defender, game.to_move) == (0, 1, 0)


def test_defender_who_beat_everything_with_his_last_card_is_skipped_as_attacker() -> None:
    """RULES.md 1.9: the defender beat everything but has no cards: the next player with cards after him."""
    game = position({0: "6C 8H", 1: "7C", 2: "9D TD"}, trump="AS", attacker=0)
    play(game, "attack 6C", "beat 6C 7C")
    assert actions_taken(game.events)[-2:] == [(0, "pass"), (2, "pass")]
    assert game.out == [[1]]
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 2)


# -- action cap and forfeits ------------------------------------------------------------------------------

def test_max_actions_ends_the_game_as_a_flagged_draw() -> None:
    """RULES.md 1.12, 5b.8: when decision max_actions + 1 would be asked, the game ends as a capped draw."""
    game = bout_game({0: "7C 7D 9C JH TD QH", 1: "8C AC 6S 7S KH 9D"}, trump="AS", dealer=1, fool=1,
                     max_actions=3)
    play(game, "attack 7C 7D", "beat 7C 8C")
    assert game.result is None
    play(game, "beat 7D 9D")
    assert game.result == GameResult(order=[[0, 1]], fools=[], end="action_cap")
    assert game.to_move is None and game.legal_actions() == []
    with pytest.raises(GameOverError):
        game.apply_str("pass")


def test_game_ending_on_the_last_allowed_decision_is_not_capped() -> None:
    """RULES.md 5b.8: the cap only stops a decision beyond max_actions; a normal end stays normal."""
    game = position({0: "6C", 1: "7C 8C"}, trump="AS", attacker=0, max_actions=2)
    play(game, "attack 6C", "beat 6C 7C")
    assert game.result == GameResult(order=[[0], [1]], fools=[1], end="fool")


def test_forfeit_makes_the_offender_the_fool_and_the_others_share_a_place() -> None:
    """RULES.md 6.2: the forfeiter is the fool; those not out share one place."""
    game = three_player_game()
    play(game, "attack 6C")
    result = game.forfeit(1, "timeout", "no answer in 5 s")
    assert result == GameResult(order=[[0, 2], [1]], fools=[1], end="forfeit", forfeit_seat=1,
                                verdict="timeout", reason="no answer in 5 s")
    assert game.to_move is None and game.legal_actions() == []
    with pytest.raises(GameOverError):
        game.forfeit(0, "crash")


def test_forfeit_keeps_the_going_out_order_so_far() -> None:
    """RULES.md 6.2: players already out keep their order; then everyone still in; the forfeiter last."""
    game = position({0: "6C", 1: "7C 8D 9S", 2: "TH 8H", 3: "JD QD"}, trump="AS", attacker=0)
    play(game, "attack 6C", "beat 6C 7C", "pass", "pass")
    assert game.out == [[0]]
    assert game.forfeit(2, "illegal", "bad move").order == [[0], [1, 3], [2]]


def test_forfeit_with_an_unknown_verdict_is_refused() -> None:
    """RULES.md 6.1: the verdict is one of timeout, crash, illegal, protocol, disqualified."""
    game = three_player_game()
    with pytest.raises(ValueError, match="verdict"):
        game.forfeit(0, "bored")
    assert game.result is None


# -- illegal and malformed actions ------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "reason"), [
    ("beat 7C KH", "KH does not beat 7C"),
    ("beat 7D 8C", "8C does not beat 7D"),
    ("beat 7C 9C", "does not hold 9C"),
    ("beat 7H 8C", "7H is not an unbeaten card"),
    ("attack 8C", "defend phase allows only"),
    ("pass", "defend phase allows only"),
    ("throw 8C", "defend phase allows only"),
    ("transfer 7S", "podkidnoy has no transfers"),
])
def test_illegal_defence_names_the_reason(action: str, reason: str) -> None:
    """RULES.md 0.3, 1.2, 5b.1: an illegal action raises IllegalActionError naming the rule; nothing changes."""
    game = defence_game()
    with pytest.raises(IllegalActionError, match=reason):
        game.apply_str(action)
    assert (game.to_move, table(game), hand(game, 1)) == (1, "7C/- 7D/-", "6S 7S 8C 9D KH AC")


@pytest.mark.parametrize(("action", "reason"), [
    ("attack 8H", "does not hold 8H"),
    ("take", "lead phase allows only attack"),
    ("throw 7C", "lead phase allows only attack"),
    ("beat 7C 9C", "lead phase allows only attack"),
])
def test_illegal_lead_names_the_reason(action: str, reason: str) -> None:
    """RULES.md 1.6.1, 5b.1: the lead phase takes only an attack with cards the attacker holds."""
    game = bout_game({0: "7C 7D 9C JH TD QH", 1: "8C AC 6S 7S KH 9D"}, trump="AS", dealer=1, fool=1)
    with pytest.raises(IllegalActionError, match=reason):
        game.apply_str(action)


@pytest.mark.parametrize(("action", "reason"), [
    ("throw 9C", "must match a rank on the table"),
    ("throw 7H", "does not hold 7H"),
    ("take", "throw phase allows only throw, pass"),
])
def test_illegal_throw_in_names_the_reason(action: str, reason: str) -> None:
    """RULES.md 1.6.3: a throw-in needs a held card of a rank on the table."""
    game = bout_game({0: "7C 7D 9C JH TD QH", 1: "8C AC 6S 7S KH 9D"}, trump="AS", dealer=1, fool=1)
    play(game, "attack 7C", "beat 7C 8C")
    with pytest.raises(IllegalActionError, match=reason):
        game.apply_str(action)


@pytest.mark.parametrize("text", ["attack 6C 7C", "attack 6H 6C", "attack 6C 6C", "beat 6C", "hit 6C",
                                  "attack 10C", "take 6C", "attack"])
def test_malformed_actions_are_invalid(text: str) -> None:
    """RULES.md 0.3: malformed strings (mixed ranks, wrong order, duplicates, card count, bad card) are invalid."""
    game = bout_game({0: "6C 6D 6H 6S 9H KD", 1: "7C 8C 8D TH JS AC"}, trump="AS")
    with pytest.raises(InvalidActionError):
        game.apply_str(text)
    assert game.actions == 0


def test_action_cap_keeps_the_places_of_players_already_out() -> None:
    """RULES.md 6.1: in a capped game those out keep their places, the others share the last; no fool."""
    game = position({0: "6C", 1: "7C 8D 9S", 2: "TH 8H"}, trump="AS", attacker=0, max_actions=4)
    play(game, "attack 6C", "beat 6C 7C", "pass")  # seat 2 is asked, though it holds no 6 or 7 (5b.2)
    assert game.out == [[0]] and (game.attacker, game.defender) == (1, 2)
    play(game, "attack 8D")
    assert game.result == GameResult(order=[[0], [1, 2]], fools=[], end="action_cap")
