"""Property tests: random legal play in every variant, 2-6 players, both decks, never breaks an invariant.

Checked after every step: every card accounted for exactly once (RULES.md 1.1); the game ends under
the action cap; no view or event a seat receives names a card that seat may not know (RULES.md 9);
every listed action applies; unlisted actions raise; a request whose only action is ``pass`` comes only
with ``ask_forced_passes`` and room on the table (5b.2). And with ``ask_forced_passes`` on, two games
whose deals differ only in hidden cards ask the same seats in the same order (5b.2, 9.3).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.actions import BEAT, BEAT_TOP, LEAD, PASS, TAKE, Action
from protocol.cards import CARD_NAMES, card_list, deck_mask, parse_card
from protocol.events import AnyEvent, event_for_seat
from protocol.rules import BOUT_VARIANTS, HAND_SIZE, VARIANTS, Rules
from protocol.views import PlayerView
from referee.engine import BoutGame, FoolsFoolGame, Game, IllegalActionError, SeededRng, new_game, shuffled_deck

games = st.tuples(st.sampled_from(VARIANTS), st.integers(2, 6), st.sampled_from([36, 52]),
                  st.integers(0, 2**32), st.integers(0, 2**32))
bout_games = st.tuples(st.sampled_from(sorted(BOUT_VARIANTS)), st.integers(2, 6), st.sampled_from([36, 52]),
                       st.integers(0, 2**32), st.integers(0, 2**32))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def card_locations(game: Game) -> list[int]:
    """Every place a card can be, as masks; together they must partition the deck."""
    places = list(game.hands)
    if isinstance(game, BoutGame):
        places += [game.table_cards, game.discard, sum(1 << c for c in game.stock)]
    else:
        assert isinstance(game, FoolsFoolGame)
        places += [sum(1 << c for c in game.pile), game.discard]
    return places


def assert_cards_accounted(game: Game) -> None:
    places = card_locations(game)
    union = 0
    for mask in places:
        assert union & mask == 0, "a card is in two places"
        union |= mask
    assert union == deck_mask(game.rules.deck)
    assert sum(m.bit_count() for m in places) == game.rules.deck


def public_cards(game: Game, events: Sequence[AnyEvent]) -> int:
    """Cards the rules make public (RULES.md 9.1) by ``events`` of ``game``: the trump card, every card named
    in an action, and in Fool's Fool every pile card. Derived from the rules, not from the events' own fields."""
    public = 0
    if isinstance(game, BoutGame):
        public |= 1 << game.trump_card
    for event in events:
        action = getattr(event, "action", None)
        if action is not None:
            for word in action.split()[1:]:
                public |= 1 << parse_card(word)
        for name in ("piles",):
            for text in getattr(event, name, []) or []:
                public |= 1 << parse_card(text)
        if type(event).__name__ == "CardPlaced":
            public |= 1 << parse_card(event.card)  # type: ignore[attr-defined]
        if type(event).__name__ == "PileTaken":
            public |= 1 << parse_card(event.card)  # type: ignore[attr-defined]
    return public


def cards_named(obj: object) -> set[str]:
    """Every card string anywhere inside a view or event."""
    names: set[str] = set()
    if isinstance(obj, str):
        names.update(w for w in obj.split() if w in CARD_NAMES)
    elif isinstance(obj, list | tuple):
        for item in obj:
            names |= cards_named(item)
    elif hasattr(obj, "__struct_fields__"):
        for field in obj.__struct_fields__:  # type: ignore[attr-defined]
            names |= cards_named(getattr(obj, field))
    return names


class LeakCheck:
    """After each step: no view or event a seat receives names a card it may not know (RULES.md 9).

    What a seat may know (the public cards and every card it ever held) only grows during a game, so each
    event is checked once, when it first appears, against the smallest set it must fit: checking it again at
    every later step (as this check once did, a cost quadratic in the game's length) cannot fail where that
    first check passed. Views change at every step and are checked at every step.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.public = 0
        self.checked = 0  # events checked so far

    def __call__(self, ever_held: list[int]) -> None:
        game = self.game
        new = game.events[self.checked:]
        self.public |= public_cards(game, new)
        for seat in range(game.players):
            allowed = {CARD_NAMES[c] for c in card_list(self.public | ever_held[seat])}
            view = game.view(seat)
            assert set(view.hand) == {CARD_NAMES[c] for c in card_list(game.hands[seat])}
            assert cards_named(view) <= allowed, f"seat {seat} sees {cards_named(view) - allowed}"
            for other, known in enumerate(view.known):
                assert {parse_card(c) for c in known} <= set(card_list(game.hands[other]))
            for event in new:
                seen = cards_named(event_for_seat(event, seat))
                assert seen <= allowed, f"seat {seat} is told {seen - allowed} by {event}"
        self.checked += len(new)


def probe_unlisted(game: Game, rng: random.Random) -> None:
    """A few actions that are not listed must raise and change nothing."""
    legal = set(game.legal_actions())
    cards = list(range(52))
    candidates = [Action(TAKE), Action(PASS), Action(LEAD, (rng.choice(cards),)),
                  Action(BEAT_TOP, (rng.choice(cards),)), Action(BEAT, (rng.choice(cards), rng.choice(cards)))]
    for kind in ("attack", "throw", "transfer"):
        candidates.append(Action(kind, (rng.choice(cards),)))
    for action in candidates:
        if action in legal:
            continue
        before = (list(game.hands), game.to_move, len(game.events))
        try:
            game.apply(action)
        except IllegalActionError:
            pass
        else:
            raise AssertionError(f"unlisted {action} was accepted")
        assert (list(game.hands), game.to_move, len(game.events)) == before


def has_room(view: PlayerView) -> bool:
    """RULES.md 5b.2, from public facts only: fewer attack cards than the bout limit, and fewer unbeaten
    cards than the defender holds."""
    assert view.bout_limit is not None and view.defender is not None
    unbeaten = sum(1 for _, beaten_by in view.table if beaten_by is None)
    return len(view.table) < view.bout_limit and unbeaten < view.hand_sizes[view.defender]


def assert_pass_only_requests_are_public(game: Game, legal: list[Action]) -> None:
    """RULES.md 5b.2: a request with pass alone is made only with ask_forced_passes and room on the table."""
    if legal == [Action(PASS)]:
        assert game.rules.ask_forced_passes, "with ask_forced_passes off a forced pass is automatic"
        assert game.to_move is not None and has_room(game.view(game.to_move)), "asked with no room"


def rules_for(variant: str, deck: int, ask_forced_passes: bool) -> Rules:
    options = {"ask_forced_passes": ask_forced_passes} if variant in BOUT_VARIANTS else {}
    return Rules(variant=variant, deck=deck, **options)  # type: ignore[arg-type]


def play_random(variant: str, players: int, deck: int, deal_seed: int, choice_seed: int,
                check_views: bool, ask_forced_passes: bool = True) -> Game:
    game = new_game(rules_for(variant, deck, ask_forced_passes), players, SeededRng(deal_seed))
    rng = random.Random(choice_seed)
    ever_held = list(game.hands)
    check_leaks = LeakCheck(game)
    steps = 0
    while game.result is None:
        assert_cards_accounted(game)
        legal = game.legal_actions()
        assert legal, "a seat must always have a legal action"
        assert len(set(legal)) == len(legal), "legal actions are listed once"
        assert game.to_move is not None and not game._is_out(game.to_move)
        assert_pass_only_requests_are_public(game, legal)
        if check_views:
            check_leaks(ever_held)
        if steps % 7 == 0:
            probe_unlisted(game, rng)
        game.apply(rng.choice(legal))
        ever_held = [e | h for e, h in zip(ever_held, game.hands, strict=True)]
        steps += 1
    assert_cards_accounted(game)
    assert game.legal_actions() == []
    return game


@SETTINGS
@given(games, st.booleans())
def test_random_play_keeps_every_invariant(params: tuple[str, int, int, int, int], ask: bool) -> None:
    variant, players, deck, deal_seed, choice_seed = params
    game = play_random(variant, players, deck, deal_seed, choice_seed, check_views=True, ask_forced_passes=ask)
    result = game.result
    assert result is not None
    assert result.end in ("fool", "draw"), "random play ends well under the 5000-action cap"
    placed = [seat for group in result.order for seat in group]
    assert sorted(placed) == list(range(players)), "every seat has exactly one place"
    assert result.order[-1] == result.fools or not result.fools
    if variant == "chase":
        assert result.chases is not None and len(result.chases) == players


@settings(max_examples=150, deadline=None)
@given(games)
def test_every_listed_action_applies(params: tuple[str, int, int, int, int]) -> None:
    """Every legal action at a random point applies to a copy without error (RULES.md 0.3)."""
    variant, players, deck, deal_seed, choice_seed = params
    game = new_game(Rules(variant=variant, deck=deck), players, SeededRng(deal_seed))  # type: ignore[arg-type]
    rng = random.Random(choice_seed)
    for _ in range(rng.randrange(60)):
        if game.result is not None:
            return
        game.apply(rng.choice(game.legal_actions()))
    for action in game.legal_actions():
        twin = game.copy()
        twin.apply(action)
        assert_cards_accounted(twin)
    assert_cards_accounted(game)


@settings(max_examples=40, deadline=None)
@given(games, st.sampled_from(["timeout", "crash", "illegal", "protocol"]))
def test_forfeit_at_any_point_ranks_every_seat(params: tuple[str, int, int, int, int], verdict: str) -> None:
    """RULES.md 6.2: the offender is the fool, everyone else keeps a place."""
    variant, players, deck, deal_seed, choice_seed = params
    game = new_game(Rules(variant=variant, deck=deck), players, SeededRng(deal_seed))  # type: ignore[arg-type]
    rng = random.Random(choice_seed)
    for _ in range(rng.randrange(80)):
        if game.result is not None:
            return
        game.apply(rng.choice(game.legal_actions()))
    if game.result is not None:
        return
    seat = game.to_move
    assert seat is not None
    result = game.forfeit(seat, verdict, "test")
    assert result.fools == [seat] and result.order[-1] == [seat]
    assert sorted(s for group in result.order for s in group) == list(range(players))
    assert game.legal_actions() == [] and game.to_move is None


# -- who is asked never depends on a hand (RULES.md 5b.2, 9.3) ---------------------------------------


def twin_games(variant: str, players: int, deck: int, deal_seed: int, ask: bool) -> tuple[Game, Game] | None:
    """Two games dealt from one shuffled deck, except that two dealt cards of neighbouring seats are swapped:
    they differ only in hidden hands. None when the swap changes who attacks first (a trump moved)."""
    rng = SeededRng(deal_seed)
    cards = shuffled_deck(deck, rng)
    dealer = rng.randbelow(players)
    dealt = players * HAND_SIZE
    # cards k and k+1 go to neighbouring seats; with no stock (36 cards, 6 players) the last dealt card is the
    # face-up trump card, which is public: it stays where it is
    k = rng.randbelow(dealt - 1 if dealt < deck else dealt - 2)
    swapped = list(cards)
    swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
    rules = rules_for(variant, deck, ask)
    first = new_game(rules, players, SeededRng(deal_seed), deck=cards, dealer=dealer)
    second = new_game(rules, players, SeededRng(deal_seed), deck=swapped, dealer=dealer)
    return (first, second) if first.to_move == second.to_move else None


def public_view(game: Game, seat: int) -> PlayerView:
    return msgspec.structs.replace(game.view(seat), hand=[])


def first_divergence(first: Game, second: Game, rng: random.Random) -> str | None:
    """Play both games alike (random actions legal in both) while neither hidden card is played; the
    first step at which a different seat is asked, or the public views differ, else None."""
    while first.result is None and second.result is None:
        if (first.to_move, first.phase) != (second.to_move, second.phase):
            return (f"after {first.actions} decisions: seat {first.to_move} asked to {first.phase} vs seat "
                    f"{second.to_move} asked to {second.phase}")
        for seat in range(first.players):
            if public_view(first, seat) != public_view(second, seat):
                return f"after {first.actions} decisions: seat {seat}'s public view differs"
        in_both = set(map(str, second.legal_actions()))
        common = [action for action in first.legal_actions() if str(action) in in_both]
        if not common:
            return None  # only the differing cards could be played: the games part here, as they may
        action = rng.choice(common)
        first.apply(action)
        second.apply(action)
    return None if first.result == second.result else "the results differ"


@settings(max_examples=150, deadline=None)
@given(bout_games)
def test_who_is_asked_depends_only_on_public_facts(params: tuple[str, int, int, int, int]) -> None:
    """RULES.md 5b.2, 9.3: with ask_forced_passes on, games that differ only in hidden cards ask the same
    seat at every step, in the same phase, with the same public views, until a differing card is played."""
    variant, players, deck, deal_seed, choice_seed = params
    twins = twin_games(variant, players, deck, deal_seed, ask=True)
    if twins is None:
        return
    assert first_divergence(*twins, random.Random(choice_seed)) is None


def test_with_automatic_passes_who_is_asked_depends_on_the_hand() -> None:
    """RULES.md 5b.2: the check above has teeth: with ask_forced_passes off, hidden cards change who is
    asked (the leak the option closes) in some of the first 40 deals."""
    diverged = 0
    for seed in range(40):
        twins = twin_games("podkidnoy", 3, 36, seed, ask=False)
        if twins is not None and first_divergence(*twins, random.Random(seed)) is not None:
            diverged += 1
    assert diverged >= 5, diverged
