"""The search API: ``game.copy()`` is independent, and ``determinize`` builds a game consistent with one seat's
knowledge (its view and legal actions unchanged) whose hidden cards are sampled."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_rules_properties import assert_cards_accounted, games, rules_for

from protocol.events import AnyEvent, event_for_seat
from protocol.rules import Rules
from protocol.views import PlayerView
from referee.engine import BoutGame, Game, SeededRng, determinize, new_game


def random_position(params: tuple[str, int, int, int, int], ask: bool) -> tuple[Game, random.Random] | None:
    variant, players, deck, deal_seed, choice_seed = params
    game = new_game(rules_for(variant, deck, ask), players, SeededRng(deal_seed))
    rng = random.Random(choice_seed)
    for _ in range(rng.randrange(150)):
        if game.result is not None:
            return None
        game.apply(rng.choice(game.legal_actions()))
    return (game, rng) if game.result is None else None


def seat_knowledge(game: Game, seat: int) -> tuple[PlayerView, list[AnyEvent]]:
    """What ``seat``'s bot was told: its view, and every event as its seat sees it."""
    return game.view(seat), [event_for_seat(event, seat) for event in game.events]


def play_out(game: Game, rng: random.Random) -> None:
    while game.result is None:
        game.apply(rng.choice(game.legal_actions()))
        assert_cards_accounted(game)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games, st.booleans(), st.integers(0, 2**32))
@example(("fools_fool", 3, 52, 70541767, 4742), False, 15)  # another seat to move must hold a beater
def test_a_determinized_game_shows_the_seat_its_view_and_its_legal_actions(
        params: tuple[str, int, int, int, int], ask: bool, sample_seed: int) -> None:
    found = random_position(params, ask)
    if found is None:
        return
    game, rng = found
    to_move = game.to_move
    assert to_move is not None
    for seat in {to_move, rng.randrange(game.players)}:
        view, events = seat_knowledge(game, seat)
        twin = determinize(game.rules, view, events, random.Random(sample_seed), dealer=game.dealer)
        assert twin.view(seat) == view
        assert twin.events == events
        assert_cards_accounted(twin)
        for other in range(game.players):
            assert twin.hand_size(other) == game.hand_size(other)
            assert twin.known[other] == game.known[other] & game.hands[other]
        if seat == to_move:
            assert [str(a) for a in twin.legal_actions()] == [str(a) for a in game.legal_actions()]
        play_out(twin, rng)


def test_hidden_cards_are_sampled_and_known_cards_stay_put() -> None:
    """Seat 0 of a 3-player game after a take: the taker's picked-up cards are where they were; the rest of
    the others' hands and the stock vary with the sample."""
    game = new_game(Rules(), 3, SeededRng(5))
    while game.view(0).known[game.defender if isinstance(game, BoutGame) else 0] == []:
        legal = game.legal_actions()
        take = [a for a in legal if a.kind == "take"]
        game.apply(take[0] if take else legal[0])
    assert isinstance(game, BoutGame)
    view, events = seat_knowledge(game, 0)
    samples = [determinize(game.rules, view, events, random.Random(seed)) for seed in range(20)]
    for twin in samples:
        assert isinstance(twin, BoutGame)
        assert twin.hands[0] == game.hands[0]
        for seat in (1, 2):
            assert twin.hands[seat] & game.known[seat] == game.known[seat] & game.hands[seat]
        assert twin.stock[0] == game.stock[0] == game.trump_card
    assert len({(t.hands[1], t.hands[2], tuple(t.stock)) for t in samples}) == 20


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["podkidnoy", "perevodnoy", "chase", "fools_fool"]), st.integers(0, 2**32),
       st.integers(0, 2**32), st.booleans())
def test_with_nothing_hidden_the_determinized_game_is_the_real_one(variant: str, deal_seed: int,
                                                                     choice_seed: int, ask: bool) -> None:
    """Two players, the stock drawn: the other hand is every unseen card, so the determinized game must play
    on exactly as the real one (the bout's leader, the throw-in order and the pile's layer included)."""
    game = new_game(rules_for(variant, 36, ask), 2, SeededRng(deal_seed))
    rng = random.Random(choice_seed)
    while game.result is None and isinstance(game, BoutGame) and game.stock:
        game.apply(rng.choice(game.legal_actions()))
    for _ in range(rng.randrange(10)):
        if game.result is None:
            game.apply(rng.choice(game.legal_actions()))
    if game.result is not None:
        return
    view, events = seat_knowledge(game, 0)
    twin = determinize(game.rules, view, events, random.Random(0), dealer=game.dealer)
    assert twin.hands == game.hands
    start = len(events)
    while game.result is None:
        action = rng.choice(game.legal_actions())
        assert twin.legal_actions() == game.legal_actions()
        game.apply(action)
        twin.apply(action)
    assert twin.events[start:] == game.events[start:]
    assert game.result is not None  # no view tells whether the first attacker was drawn by lot: not asked for
    assert twin.result == msgspec.structs.replace(game.result, first_attacker_by_lot=False)


def test_a_view_that_does_not_add_up_is_refused() -> None:
    game = new_game(Rules(), 2, SeededRng(1))
    view, events = seat_knowledge(game, 0)
    too_big = PlayerView(**{**{f: getattr(view, f) for f in view.__struct_fields__}, "hand_sizes": [6, 30]})
    with pytest.raises(ValueError, match="does not add up"):
        determinize(game.rules, too_big, events, random.Random(0))
    game.forfeit(0, "timeout")
    with pytest.raises(ValueError, match="over"):
        determinize(game.rules, game.view(0), events, random.Random(0))


def test_copy_is_independent_of_the_original() -> None:
    """A copy played to the end leaves the original's state, view and events as they were."""
    for variant in ("podkidnoy", "perevodnoy", "chase", "fools_fool"):
        game = new_game(rules_for(variant, 36, True), 4, SeededRng(3))
        rng = random.Random(3)
        for _ in range(30):
            game.apply(rng.choice(game.legal_actions()))
        views, events, legal = [game.view(s) for s in range(4)], list(game.events), game.legal_actions()
        twin = game.copy()
        assert type(twin) is type(game) and [twin.view(s) for s in range(4)] == views
        play_out(twin, rng)
        assert [game.view(s) for s in range(4)] == views
        assert game.events == events and game.legal_actions() == legal and game.result is None


def test_the_readme_search_example_picks_a_legal_action() -> None:
    """README's flat Monte Carlo example, run as written on a real request of a 3-player game."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    block = readme.split("**Searching with it.**")[1].split("```python\n")[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(block, namespace)
    choose = namespace["choose"]
    assert callable(choose)
    game = new_game(Rules(variant="perevodnoy"), 3, SeededRng(4))
    rng = random.Random(4)
    for _ in range(12):
        game.apply(rng.choice(game.legal_actions()))
    seat = game.to_move
    assert seat is not None
    view, events = seat_knowledge(game, seat)
    legal = [str(a) for a in game.legal_actions()]
    assert choose(game.rules, game.dealer, view, events, legal, random.Random(1), samples=3) in legal
