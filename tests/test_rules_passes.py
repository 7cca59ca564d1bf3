"""Scenario tests for who is asked to throw in: option ``ask_forced_passes`` (RULES.md 5b.2, 5b.3, 9.3).

True (the default): while the table has room for a throw-in, every non-defender holding cards is asked in
priority order, also when ``pass`` is his only legal action. False: only seats with a legal throw-in are
asked; the others pass automatically. Either way a pass is the same event, and with no room nobody is asked.
"""

from __future__ import annotations

import pytest
from scenario import actions_taken, bout_game, discard, draws, hand, hands, legal, play, position

from protocol.events import BoutEnded
from referee.engine import BoutGame

ON_OFF = pytest.mark.parametrize("ask", [True, False], ids=["ask_forced_passes", "automatic_passes"])


def three_player_game(**options: object) -> BoutGame:
    """Seat 0 attacks seat 1 (the fool was seat 2); trump spades; seat 0 holds no 6, seat 2 holds 6D."""
    return bout_game({0: "6C 7H 9C TC JC QC", 1: "7C 8D 9H TH JH QH", 2: "6D 8H 9D TD JD QD"},
                     trump="AS", stock="9S TS JS QS", dealer=2, fool=2, **options)


def test_a_seat_whose_only_move_is_pass_is_asked_and_asked_again() -> None:
    """RULES.md 5b.2, 5b.3: with room on the table every seat with cards is asked, even with pass alone;
    after a throw-in priority restarts and each is asked again."""
    game = three_player_game()
    assert game.rules.ask_forced_passes is True  # the default
    play(game, "attack 6C", "take")
    assert (game.to_move, game.phase, legal(game)) == (0, "throw", {"pass"})  # no 6, but room for 1
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"throw 6D", "pass"})
    play(game, "throw 6D")
    assert (game.to_move, legal(game)) == (0, {"pass"})
    play(game, "pass")
    assert (game.to_move, legal(game)) == (2, {"pass"})  # his only 6 is on the table now
    play(game, "pass")
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "take"), (0, "pass"), (2, "throw 6D"),
                                          (0, "pass"), (2, "pass")]
    assert game.actions == 6
    assert hand(game, 1) == "6C 6D 7C 8D 9H TH JH QH"
    assert draws(game.events) == [(0, "9S"), (2, "TS")]
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 2)


def test_option_off_asks_only_seats_with_a_throw_in_and_announces_the_same_passes() -> None:
    """RULES.md 5b.2, 9.3: ask_forced_passes false: a seat whose only move is pass passes automatically,
    announced exactly as a chosen pass; the game's events equal those of the asked version."""
    game = three_player_game(ask_forced_passes=False)
    play(game, "attack 6C", "take")
    assert (game.to_move, legal(game)) == (2, {"throw 6D", "pass"})  # seat 0 passed unasked
    assert actions_taken(game.events)[-1] == (0, "pass")
    play(game, "throw 6D")  # seat 0, then seat 2 (no 6 left), pass automatically: the bout ends
    assert game.actions == 3
    asked = three_player_game()
    play(asked, "attack 6C", "take", "pass", "throw 6D", "pass", "pass")
    assert game.events == asked.events
    assert hands(game) == hands(asked)
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 2)


@ON_OFF
def test_room_but_no_throw_in_anywhere(ask: bool) -> None:
    """RULES.md 5b.2: nobody holds a rank on the table. True: both asked, pass alone; false: nobody asked.
    The events are the same."""
    game = bout_game({0: "6C 7D 8H 9C TD JH", 1: "AC KD QH KS QS JS", 2: "7C 8D 9H TC JD QC"},
                     trump="AS", dealer=2, fool=2, ask_forced_passes=ask)
    play(game, "attack 6C", "beat 6C AC")
    if ask:
        assert (game.to_move, legal(game)) == (0, {"pass"})
        play(game, "pass")
        assert (game.to_move, legal(game)) == (2, {"pass"})
        play(game, "pass")
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "beat 6C AC"), (0, "pass"), (2, "pass")]
    assert game.actions == (4 if ask else 2)
    assert discard(game) == "6C AC"
    assert (game.attacker, game.to_move, game.phase) == (1, 1, "lead")


@ON_OFF
def test_no_room_at_the_six_card_limit_nobody_is_asked(ask: bool) -> None:
    """RULES.md 5b.2, 5b.4: 6 attack cards down: the bout ends unasked though seats 0 (9D) and 2 (6D 8D)
    hold ranks on the table; each non-defender with cards is announced passing, in priority order."""
    game = position({0: "6C 6H 6S 7C 7H 7S 9D", 1: "7D 8H 8S 9C 9H 9S KD", 2: "6D 8D TC"}, trump="AD",
                    attacker=0, ask_forced_passes=ask)
    play(game, "attack 6C 6H 6S", "beat 6C 7D", "beat 6H 8H", "beat 6S 8S")
    assert (game.to_move, legal(game)) == (0, {"throw 7C", "throw 7H", "throw 7S", "throw 7C 7H", "throw 7C 7S",
                                               "throw 7H 7S", "throw 7C 7H 7S", "pass"})
    play(game, "throw 7C 7H 7S", "beat 7C 9C", "beat 7H 9H")
    mark = len(game.events)
    play(game, "beat 7S 9S")
    assert actions_taken(game.events[mark:]) == [(1, "beat 7S 9S"), (0, "pass"), (2, "pass")]
    assert BoutEnded(outcome="discarded", defender=1,
                     cards=["6C", "6H", "6S", "7C", "7D", "7H", "7S", "8H", "8S", "9C", "9H", "9S"]) in game.events
    assert game.actions == 8  # 1 lead, 1 throw-in, 6 beats: no pass was asked
    assert hands(game) == {0: "9D", 1: "KD", 2: "6D 8D TC"}
    assert (game.attacker, game.defender, game.to_move, game.phase) == (1, 2, 1, "lead")


@ON_OFF
def test_no_room_against_the_defenders_hand_after_take_nobody_is_asked(ask: bool) -> None:
    """RULES.md 5b.2, 1.8, 5b.4: the defender holds 1 card and 1 is unbeaten: no room, so seat 2 is not
    asked though it holds 6D; both non-defenders are announced passing and the defender takes."""
    game = position({0: "6C 9H", 1: "KD", 2: "6D 9C"}, trump="AS", attacker=0, ask_forced_passes=ask)
    play(game, "attack 6C")
    assert legal(game) == {"take"}
    play(game, "take")
    assert actions_taken(game.events) == [(0, "attack 6C"), (1, "take"), (0, "pass"), (2, "pass")]
    assert game.actions == 2
    assert hands(game) == {0: "9H", 1: "6C KD", 2: "6D 9C"}
    assert (game.attacker, game.defender, game.to_move) == (2, 0, 2)
