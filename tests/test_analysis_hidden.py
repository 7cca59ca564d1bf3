"""Hidden information holds in the analysis: a seat's analysis reads only what that seat was told.

The property: at one of a seat's decisions, permute the cards the seat cannot see (among the other hands and the
stock), play the game's actions again on that deal, keep only permutations under which the game plays the same
from the seat's side (every view and event it was told unchanged up to that decision), and the analysis of all
its decisions so far is identical. The control runs the same check on an analysis that is handed the full deal
(its worlds are the real game) and shows the test catching it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from protocol.actions import Action, parse_action
from protocol.cards import CARD_NAMES, deck_mask, mask_of, parse_card, parse_cards
from protocol.rules import Rules
from referee.analysis.analyze import Judgement, judge
from referee.analysis.evaluate import Settings, WorldSource, sampled_world
from referee.analysis.observe import Observation, decisions_of
from referee.analysis.playout import cheap_action
from referee.engine import BoutGame, Game, SeededRng, new_game, shuffled_deck
from referee.results.replay import ReplayHeader

#: Small effort: the property is about what the analysis reads, not how well it judges.
FAST = Settings(playouts=3, seed=7, exact_cards=6)
VARIANTS = ("podkidnoy", "perevodnoy", "chase", "fools_fool")


class Played:
    """A game dealt from ``deck`` (dealer 0; the rules name who leads) and played by ``actions``."""

    def __init__(self, rules: Rules, players: int, deck: Sequence[str], actions: Sequence[str]) -> None:
        self.rules, self.players, self.deck, self.actions = rules, players, list(deck), list(actions)

    def game(self, upto: int | None = None) -> Game:
        """The game after the first ``upto`` actions (all of them by default).

        :raises ValueError: the deal cannot be dealt without a draw by lot, or an action is illegal on it.
        """
        game = new_game(self.rules, self.players, deck=parse_cards(" ".join(self.deck)), dealer=0)
        for text in self.actions[:upto]:
            game.apply(parse_action(text))
        return game

    def header(self) -> ReplayHeader:
        return ReplayHeader(game="g", deal="d", names=[f"p{s}" for s in range(self.players)], rules=self.rules,
                            dealer=0, deck=self.deck)

    def analysis(self, seat: int, worlds: WorldSource) -> tuple[list[Observation], list[Judgement]]:
        """What ``seat`` was told at each of its decisions, and the analysis of each."""
        decisions = list(decisions_of(self.header(), self.game().events, seat))
        return [d.observation for d in decisions], [judge(d, FAST, worlds) for d in decisions]


def played_to_a_decision(variant: str, players: int, seed: int, moves: int) -> tuple[Played, int] | None:
    """A game of about ``moves`` actions (mostly the playout policy's) ending with a decision of the seat
    returned; None if the game ends first or its first attack would be drawn by lot."""
    rules = Rules(variant=variant)  # type: ignore[arg-type]
    deck = [CARD_NAMES[c] for c in shuffled_deck(rules.deck, SeededRng(seed))]
    try:
        game = Played(rules, players, deck, []).game()
    except ValueError:
        return None
    rng, actions = random.Random(seed), []
    for _ in range(moves):
        if game.result is not None:
            return None
        action = _policy(game, rng)
        actions.append(str(action))
        seat = game.to_move
        game.apply(action)
    assert seat is not None
    return Played(rules, players, deck, actions), seat


def _policy(game: Game, rng: random.Random) -> Action:
    legal = game.legal_actions()
    if isinstance(game, BoutGame) and rng.random() < 0.7:
        return cheap_action(legal, game.trump, len(game.stock))
    return rng.choice(legal)


def unseen(played: Played, seat: int) -> list[str]:
    """The cards ``seat`` cannot see at its last decision: not in its hand, not known to be in another hand, not
    on the table, the pile or the discard, not the face-up trump card."""
    view = played.game(len(played.actions) - 1).view(seat)
    seen = [*view.hand, *view.discard, *(c for cards in view.known for c in cards), *view.pile,
            *(c for pair in view.table for c in pair if c is not None), *([view.trump] if view.trump else [])]
    hidden = deck_mask(played.rules.deck) & ~mask_of(parse_card(c) for c in seen)
    return [c for c in played.deck if hidden >> parse_card(c) & 1]


def permuted(played: Played, seat: int, order: random.Random) -> Played:
    """The same actions on a deal with ``seat``'s unseen cards shuffled among their places."""
    cards = unseen(played, seat)
    shuffled = list(cards)
    order.shuffle(shuffled)
    swap = dict(zip(cards, shuffled, strict=True))
    return Played(played.rules, played.players, [swap.get(c, c) for c in played.deck], played.actions)


def full_deal(played: Played) -> WorldSource:
    """The control: worlds that are the real game at the decision, read from the deal (what must never be)."""
    def real_game(observation: Observation, rng: random.Random) -> Game:
        game = played.game(0)
        for text in played.actions:
            if len(game.events) >= len(observation.events):
                break
            game.apply(parse_action(text))
        return game

    return real_game


def differs(played: Played, seat: int, order_seed: int, leaky: bool) -> bool | None:
    """Whether ``seat``'s analysis differs between the deal and a permutation of its unseen cards; None when
    the seat could tell the two deals apart (the actions are illegal on the new one, or it was told otherwise)."""
    twin = permuted(played, seat, random.Random(order_seed))
    if twin.deck == played.deck:
        return None
    try:
        twin.game()
    except ValueError:
        return None
    seen, judged = played.analysis(seat, full_deal(played) if leaky else sampled_world)
    seen_twin, judged_twin = twin.analysis(seat, full_deal(twin) if leaky else sampled_world)
    if seen != seen_twin:
        return None
    return judged != judged_twin


positions = st.tuples(st.sampled_from(VARIANTS), st.integers(2, 4), st.integers(0, 2**32), st.integers(1, 40),
                      st.integers(0, 2**32))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(positions)
def test_permuting_the_cards_a_seat_cannot_see_leaves_its_analysis_identical(
        params: tuple[str, int, int, int, int]) -> None:
    variant, players, deal_seed, moves, order_seed = params
    found = played_to_a_decision(variant, players, deal_seed, moves)
    assume(found is not None)
    assert found is not None
    played, seat = found
    result = differs(played, seat, order_seed, leaky=False)
    assume(result is not None)
    assert result is False


def test_control_the_check_catches_an_analysis_given_the_full_deal() -> None:
    """The same check on an analysis whose worlds are the real game: it differs for most permutations."""
    caught = checked = 0
    for seed in range(30):
        found = played_to_a_decision(VARIANTS[seed % 4], 2 + seed % 3, seed, 3 + seed % 25)
        if found is None:
            continue
        played, seat = found
        result = differs(played, seat, seed, leaky=True)
        if result is None:
            continue
        checked += 1
        caught += result
        assert differs(played, seat, seed, leaky=False) is False
    assert checked >= 10 and caught >= checked * 3 // 4, (caught, checked)
