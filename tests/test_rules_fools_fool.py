"""Scenario tests for Fool's Fool: the ladder deal and chain beating (RULES.md 5, 5b.9, examples 10.4, 10.5)."""

from __future__ import annotations

import pytest
from scenario import ff_position, hand, hands, legal, play

from protocol.cards import deck, format_cards, parse_cards
from protocol.events import CardKept, CardPlaced, LadderEnded, LadderStarted, PileDiscarded, PileTaken, event_for_seat
from protocol.rules import Rules
from protocol.views import GameResult
from referee.engine import FoolsFoolGame, IllegalActionError, new_game

EXCERPT_10_4 = "9H JS JD TC QH 7S JC QS KD 8C AS KH AC 6D"


def ladder_game(first: str, players: int, dealer: int, deck_size: int = 36, **options: object) -> FoolsFoolGame:
    """A Fool's Fool game whose deck starts with ``first`` and goes on with the other cards in ascending order."""
    top = parse_cards(first)
    order = top + sorted(set(deck(deck_size)) - set(top))
    game = new_game(Rules(variant="fools_fool", deck=deck_size, **options), players,  # type: ignore[arg-type]
                    deck=order, dealer=dealer)
    assert isinstance(game, FoolsFoolGame)
    return game


def ladder_steps(game: FoolsFoolGame) -> list[tuple[str, int, str, int | None]]:
    """The ladder as (kind, drawer, card, receiving pile or None for a keep)."""
    steps: list[tuple[str, int, str, int | None]] = []
    for event in game.events:
        if isinstance(event, CardPlaced):
            steps.append(("place", event.seat, event.card, event.onto))
        elif isinstance(event, CardKept):
            steps.append(("keep", event.seat, event.card or "?", None))
    return steps


# -- phase 1: the ladder ----------------------------------------------------------------------------------

def test_worked_example_ladder_and_its_continuation() -> None:
    """RULES.md 5.1, 10.4: own pile excluded, nearest other pile clockwise, draw again after a placement,
    Ace followed by 6, keep passes left; the 36-card deck continues in ascending order after the excerpt."""
    game = ladder_game(EXCERPT_10_4, 3, dealer=2)
    started = [e for e in game.events if isinstance(e, LadderStarted)]
    assert started == [LadderStarted(piles=["9H", "JS", "JD"], starter=1)]  # J tie: B first in deal order
    assert ladder_steps(game) == [
        # RULES.md 10.4, steps 1-11
        ("place", 1, "TC", 0), ("place", 1, "QH", 2), ("keep", 1, "7S", None),
        ("place", 2, "JC", 0), ("place", 2, "QS", 0), ("place", 2, "KD", 0), ("keep", 2, "8C", None),
        ("keep", 0, "AS", None),
        ("place", 1, "KH", 2), ("place", 1, "AC", 2), ("place", 1, "6D", 2),
        # the rest of the stock: 6C 6H 6S 7C 7D 7H 8D 8H 8S 9C 9D 9S TD TH TS JH QC QD KC KS AD AH
        ("keep", 1, "6C", None), ("keep", 2, "6H", None), ("keep", 0, "6S", None),
        ("place", 1, "7C", 2), ("keep", 1, "7D", None), ("keep", 2, "7H", None),
        ("place", 0, "8D", 2), ("keep", 0, "8H", None), ("keep", 1, "8S", None), ("keep", 2, "9C", None),
        ("place", 0, "9D", 2), ("keep", 0, "9S", None),
        ("place", 1, "TD", 2), ("keep", 1, "TH", None), ("keep", 2, "TS", None),
        ("place", 0, "JH", 2), ("place", 0, "QC", 1), ("place", 0, "QD", 2), ("place", 0, "KC", 1),
        ("place", 0, "KS", 2), ("place", 0, "AD", 1), ("place", 0, "AH", 2),
    ]
    assert hands(game) == {
        0: "6S 8H 9H 9S TC JC QS KD AS",
        1: "6C 7D 7S 8S TH JS QC KC AD",
        2: "6D 6H 7C 7H 8C 8D 9C 9D TD TS JD JH QD QH KH KS AC AH",
    }
    assert [e for e in game.events if isinstance(e, LadderEnded)] == [LadderEnded(hand_sizes=[9, 9, 18])]
    assert game.view(0).known == [["9H", "TC", "JC", "QS", "KD"], ["JS", "QC", "KC", "AD"],
                                  ["6D", "7C", "8D", "9D", "TD", "JD", "JH", "QD", "QH", "KH", "KS", "AC", "AH"]]
    assert (game.to_move, game.phase) == (2, "lead")  # 6D, the lowest diamond


def test_kept_cards_are_seen_only_by_their_holder() -> None:
    """RULES.md 5.1.4, 9.2: others learn only that a card was kept; pile cards are public."""
    game = ladder_game(EXCERPT_10_4, 3, dealer=2)
    kept = next(e for e in game.events if isinstance(e, CardKept))
    assert kept == CardKept(seat=1, card="7S")
    assert event_for_seat(kept, 1) == CardKept(seat=1, card="7S")
    assert event_for_seat(kept, 0) == CardKept(seat=1, card=None)
    assert event_for_seat(kept, 2) == CardKept(seat=1, card=None)
    assert "7S" in game.view(1).hand
    assert "7S" not in game.view(0).known[1] and "7S" not in game.view(2).known[1]
    assert game.view(0).hand_sizes == [9, 9, 18]


def aces_first_deck(deck_size: int, low: str) -> str:
    """Piles AC (seat 0) and AD (seat 1); then every card but the lowest rank, ascending; then the 4 lowest."""
    lows = [f"{low}{s}" for s in "CDHS"]
    middle = [c for c in format_cards(deck(deck_size)).split() if c not in ("AC", "AD") and c[0] != low]
    return " ".join(["AC", "AD", *middle, *lows])


def test_ace_is_followed_by_6_with_36_cards() -> None:
    """RULES.md 5.1.3, 5b.9: tied Aces: seat 0 starts (deal order); only a 6 goes on an Ace; keeps alternate."""
    game = ladder_game(aces_first_deck(36, "6"), 2, dealer=1)
    steps = ladder_steps(game)
    assert len(steps) == 34
    assert [s[0] for s in steps[:30]] == ["keep"] * 30
    assert [s[1] for s in steps[:30]] == [0, 1] * 15
    assert steps[30:] == [("place", 0, "6C", 1), ("keep", 0, "6D", None), ("place", 1, "6H", 0),
                          ("keep", 1, "6S", None)]
    assert hands(game) == {
        0: "6D 6H 7C 7H 8C 8H 9C 9H TC TH JC JH QC QH KC KH AC AH",
        1: "6C 6S 7D 7S 8D 8S 9D 9S TD TS JD JS QD QS KD KS AD AS",
    }
    assert game.view(1).known == [["6H", "AC"], ["6C", "AD"]]
    assert game.to_move == 0  # 6D


def test_ace_is_followed_by_2_with_52_cards() -> None:
    """RULES.md 5.1.3: with 52 cards a 2 goes on an Ace (and a 6 does not)."""
    game = ladder_game(aces_first_deck(52, "2"), 2, dealer=1, deck_size=52)
    steps = ladder_steps(game)
    assert len(steps) == 50
    assert [s[0] for s in steps[:46]] == ["keep"] * 46
    assert steps[46:] == [("place", 0, "2C", 1), ("keep", 0, "2D", None), ("place", 1, "2H", 0),
                          ("keep", 1, "2S", None)]
    assert game.to_move == 0  # 2D, the lowest diamond of 52 cards


def test_starter_is_the_highest_pile_card_ties_in_deal_order() -> None:
    """RULES.md 5.1.2, 5b.9: dealer 0 deals to 1, 2, 0: KS (seat 2) and KD (seat 0) tie; seat 2 is first."""
    game = ladder_game("9H KS KD", 3, dealer=0)
    assert [e for e in game.events if isinstance(e, LadderStarted)] == \
        [LadderStarted(piles=["KD", "9H", "KS"], starter=2)]
    assert ladder_steps(game)[0][1] == 2


# -- phase 2: chain beating -------------------------------------------------------------------------------

def test_worked_example_chain() -> None:
    """RULES.md 5.2, 5.3, 5b.9, 10.5: beat-top, automatic takes of the bottom card, discard at N, out at once."""
    game = ff_position({0: "6D 9C QS", 1: "7D JC 8S", 2: "TC KH 9S"}, leader=0)
    assert legal(game) == {"lead 6D", "lead 9C", "lead QS"}
    play(game, "lead 9C")
    assert game.view(1).pile == ["9C"] and game.view(1).pile_limit == 3
    assert (game.to_move, legal(game)) == (1, {"beat-top JC"})  # 7D cannot beat a club
    mark = len(game.events)
    play(game, "beat-top JC")
    assert game.events[mark + 1:] == [PileTaken(seat=2, card="9C"), PileTaken(seat=0, card="JC")]
    assert hands(game) == {0: "6D JC QS", 1: "7D 8S", 2: "9C 9S TC KH"}
    assert game.view(1).known == [["JC"], [], ["9C"]]
    assert (game.to_move, game.phase, legal(game)) == (1, "lead", {"lead 7D", "lead 8S"})
    play(game, "lead 8S")
    assert (game.to_move, legal(game)) == (2, {"beat-top 9S"})
    play(game, "beat-top 9S")
    assert (game.to_move, legal(game)) == (0, {"beat-top 6D", "beat-top QS"})  # a diamond beats a spade
    play(game, "beat-top QS")
    assert PileDiscarded(cards=["8S", "9S", "QS"]) in game.events
    assert (game.to_move, legal(game)) == (0, {"lead 6D", "lead JC"})
    play(game, "lead 6D", "beat-top 7D")
    assert game.out == [[1]]
    assert hands(game) == {0: "7D JC", 1: "", 2: "6D 9C TC KH"}
    assert (game.to_move, game.phase) == (2, "lead")
    play(game, "lead 9C")
    assert game.view(0).pile_limit == 2  # only A and C hold cards
    assert legal(game) == {"beat-top JC"}
    play(game, "beat-top JC")
    assert (game.to_move, legal(game)) == (0, {"lead 7D"})
    play(game, "lead 7D")
    assert game.events[-1] == PileTaken(seat=2, card="7D")
    assert hand(game, 2) == "6D 7D TC KH"
    assert game.result == GameResult(order=[[1], [0], [2]], fools=[2], end="fool")


def test_pile_coming_back_to_its_top_layer_is_discarded_and_he_leads() -> None:
    """RULES.md 5b.9: A leads his last card (out, N = 3), B beats, C takes A's card; B's card comes back
    to B: it is discarded and B leads."""
    game = ff_position({0: "6H", 1: "8H 7C", 2: "9C TC"}, leader=0)
    play(game, "lead 6H")
    assert game.out == [[0]] and game.view(1).pile_limit == 3
    assert legal(game) == {"beat-top 8H"}
    play(game, "beat-top 8H")
    assert game.events[-2:] == [PileTaken(seat=2, card="6H"), PileDiscarded(cards=["8H"])]
    assert hands(game) == {0: "", 1: "7C", 2: "6H 9C TC"}
    assert (game.to_move, game.phase, legal(game)) == (1, "lead", {"lead 7C"})


@pytest.mark.parametrize(("top", "held", "beats"), [
    ("9C", "TC AD 6C KD", {"TC"}),  # clubs only by higher clubs: no diamond
    ("9S", "6D TS 8S 9H", {"6D", "TS"}),  # spades by a higher spade or any diamond
    ("9H", "7D 8H JH AS", {"7D", "JH"}),  # hearts likewise
    ("9D", "TD AS 6D AH", {"TD"}),  # diamonds only by higher diamonds
])
def test_chain_beating_rules(top: str, held: str, beats: set[str]) -> None:
    """RULES.md 5.2.1: diamonds are trump but cannot beat clubs."""
    game = ff_position({0: top + " 6S", 1: held}, leader=0)
    play(game, f"lead {top}")
    assert (game.to_move, legal(game)) == (1, {f"beat-top {c}" for c in beats})


def test_player_who_cannot_beat_takes_the_bottom_card_and_the_next_leads() -> None:
    """RULES.md 5.2.5: the only card taken: the next player with cards after the taker leads."""
    game = ff_position({0: "9C 6S", 1: "8C 7H", 2: "6D 7S"}, leader=0)
    play(game, "lead 9C")
    assert game.events[-1] == PileTaken(seat=1, card="9C")
    assert (game.to_move, game.phase) == (2, "lead")
    assert hands(game) == {0: "6S", 1: "7H 8C 9C", 2: "6D 7S"}
    assert game.view(0).known == [[], ["9C"], []]


def test_last_player_beating_with_his_last_card_makes_a_draw() -> None:
    """RULES.md 5.3, 5b.9: one player left and a card waiting: he answers once; his last card beats: draw."""
    game = ff_position({0: "6H", 1: "7D"}, leader=0)
    play(game, "lead 6H")
    assert game.out == [[0]] and legal(game) == {"beat-top 7D"}
    play(game, "beat-top 7D")
    assert game.result is not None
    assert (game.result.fools, game.result.end) == ([], "draw")


def test_last_player_beating_but_keeping_cards_is_the_fool() -> None:
    """RULES.md 5b.9: the last player beats the waiting card but still holds cards: he is the fool."""
    game = ff_position({0: "6H", 1: "7D 9C"}, leader=0)
    play(game, "lead 6H", "beat-top 7D")
    assert game.result == GameResult(order=[[0], [1]], fools=[1], end="fool")


def test_last_player_unable_to_beat_is_the_fool() -> None:
    """RULES.md 5b.9: the last player cannot beat the waiting card: he takes it and is the fool."""
    game = ff_position({0: "6C", 1: "7D 9H"}, leader=0)
    play(game, "lead 6C")
    assert game.events[-1] == PileTaken(seat=1, card="6C")
    assert game.result == GameResult(order=[[0], [1]], fools=[1], end="fool")
    assert hand(game, 1) == "6C 7D 9H"


@pytest.mark.parametrize(("action", "reason"), [
    ("lead 7D", "expects beat-top"),
    ("beat-top 7H", "7H does not beat 9C"),
    ("beat-top KC", "does not hold KC"),
    ("attack 7D", "expects beat-top"),
])
def test_illegal_chain_actions_name_the_reason(action: str, reason: str) -> None:
    """RULES.md 5.2: a beat-top must beat the top card with a held card; no lead while a pile waits."""
    game = ff_position({0: "9C 6S", 1: "7D JC 7H"}, leader=0)
    play(game, "lead 9C")
    with pytest.raises(IllegalActionError, match=reason):
        game.apply_str(action)


def test_lead_of_a_card_not_held_is_illegal() -> None:
    """RULES.md 5.2.3: the leader plays one of his cards."""
    game = ff_position({0: "9C 6S", 1: "7D JC 7H"}, leader=0)
    with pytest.raises(IllegalActionError, match="does not hold 9H"):
        game.apply_str("lead 9H")
    with pytest.raises(IllegalActionError, match="expects lead"):
        game.apply_str("beat-top 9C")


@pytest.mark.parametrize(("first_move", "leader"), [("from_under_fool", 2), ("under_fool", 0)])
def test_series_first_leader_follows_the_fool(first_move: str, leader: int) -> None:
    """RULES.md 7: later games: the fool's left neighbour leads (or his right one with under_fool)."""
    top = parse_cards(EXCERPT_10_4)
    order = top + sorted(set(deck(36)) - set(top))
    game = new_game(Rules(variant="fools_fool", first_move=first_move), 3,  # type: ignore[arg-type]
                    deck=order, dealer=1, fool=1)
    assert game.to_move == leader


def test_max_actions_caps_fools_fool() -> None:
    """RULES.md 1.12, 5b.8: decisions only are counted; the cap ends the game as a flagged draw."""
    game = ff_position({0: "9C 6S", 1: "8C 7H", 2: "6D 7S"}, leader=0, max_actions=2)
    play(game, "lead 9C")  # B's forced take is automatic: not counted
    assert game.result is None and game.to_move == 2
    play(game, "lead 6D")
    assert game.result == GameResult(order=[[0, 1, 2]], fools=[], end="action_cap")


def test_forfeit_in_fools_fool() -> None:
    """RULES.md 6.2: the forfeiter is the fool; players out keep their place; the rest share one."""
    game = ff_position({0: "6H", 1: "8H 7C", 2: "9C TC", 3: "JD"}, leader=0)
    play(game, "lead 6H")
    result = game.forfeit(3, "protocol", "bad json")
    assert (result.order, result.fools, result.end) == ([[0], [1, 2], [3]], [3], "forfeit")


def test_beating_to_n_with_the_last_card_passes_the_lead_on() -> None:
    """RULES.md 5.2.4: the pile reaches N with the beater's last card: he is out, the next with cards leads."""
    game = ff_position({0: "6H 9C", 1: "7H 8C", 2: "8H"}, leader=0)
    play(game, "lead 6H")
    assert legal(game) == {"beat-top 7H"}
    play(game, "beat-top 7H")
    assert (game.to_move, legal(game)) == (2, {"beat-top 8H"})
    play(game, "beat-top 8H")
    assert game.out == [[2]]
    assert PileDiscarded(cards=["6H", "7H", "8H"]) in game.events
    assert (game.to_move, game.phase, legal(game)) == (0, "lead", {"lead 9C"})
