"""Helpers for scenario tests: build a game from the hands you want, play it, read its state.

Hands, tables and action sets are compared as card strings (RULES.md 0.1, 0.3), so a test reads
like the worked examples of RULES.md 10:

    game = bout_game(hands={0: "6C 7C 8H 9D TH KC", 1: "6H 8C 8D 9S JH AD"}, trump="QS", dealer=1, fool=1)
    play(game, "attack 6C", "beat 6C 8C")
    assert legal(game) == {"throw 8H", "pass"}

``deal_deck`` builds a full deck order in the dealing convention of RULES.md 8.1; ``position``
builds a later-game position (small hands, a short or empty stock) with the bout engine's own
constructor, for endgames that a full deal would take dozens of moves to reach.
"""

from __future__ import annotations

from collections.abc import Iterable

from protocol.cards import Card, card_list, deck, format_cards, mask_of, parse_card, parse_cards
from protocol.events import ActionTaken, CardsDrawn, Event
from protocol.rules import HAND_SIZE, Rules
from referee.engine import BoutGame, FoolsFoolGame, Game, SeededRng, new_game


def cards(text: str) -> str:
    """``text``'s cards in ascending card order (rank, then suit C<D<H<S), as one string."""
    return format_cards(sorted(parse_cards(text)))


def deal_deck(hands: dict[int, str], trump: str | None = None, stock: str = "", dealer: int | None = None,
              deck_size: int = 36) -> list[Card]:
    """A full deck order (top first) that deals ``hands`` (seat -> 6 cards) from ``dealer``'s left.

    Then the trump card (omit it for 36 cards and 6 players, where the dealer's last card is
    trump), then ``stock`` top first, then every other card of the deck in ascending order.
    ``dealer`` defaults to the last seat, so seat 0 gets the first card.
    """
    players = len(hands)
    assert sorted(hands) == list(range(players)), "hands needs seats 0..N-1"
    if dealer is None:
        dealer = players - 1
    parsed = {seat: parse_cards(text) for seat, text in hands.items()}
    for seat, hand in parsed.items():
        assert len(hand) == HAND_SIZE, f"seat {seat} needs {HAND_SIZE} cards, has {len(hand)}"
    order: list[Card] = []
    for round_ in range(HAND_SIZE):
        for i in range(players):
            order.append(parsed[(dealer + 1 + i) % players][round_])
    if trump is not None:
        order.append(parse_card(trump))
    order += parse_cards(stock)
    assert len(set(order)) == len(order), "a card is used twice"
    order += sorted(set(deck(deck_size)) - set(order))
    return order


def bout_game(hands: dict[int, str], trump: str | None = None, stock: str = "", *, variant: str = "podkidnoy",
              dealer: int | None = None, deck_size: int = 36, rng: SeededRng | None = None,
              fool: int | None = None, **options: object) -> BoutGame:
    """A new bout game (``variant`` with ``options``) dealt from :func:`deal_deck`."""
    players = len(hands)
    if dealer is None:
        dealer = players - 1
    order = deal_deck(hands, trump, stock, dealer, deck_size)
    rules = Rules(variant=variant, deck=deck_size, **options)  # type: ignore[arg-type]
    game = new_game(rules, players, rng, deck=order, dealer=dealer, fool=fool)
    assert isinstance(game, BoutGame)
    return game


def position(hands: dict[int, str], trump: str, attacker: int, stock: str = "", *, variant: str = "podkidnoy",
             dealer: int = 0, **options: object) -> BoutGame:
    """A bout game at the start of a bout led by ``attacker``, later in a game.

    ``hands`` may hold any number of cards. ``stock`` lists the cards still to draw, top first; when
    not empty its last card must be ``trump``, the face-up trump card drawn last. With an empty
    stock, ``trump`` only names the trump suit (pick a card nobody holds: it was played earlier).
    """
    players = len(hands)
    hand_cards = [parse_cards(hands[seat]) for seat in range(players)]
    trump_card = parse_card(trump)
    stock_cards = parse_cards(stock)
    if stock_cards:
        assert stock_cards[-1] == trump_card, "the trump card is the stock's last card"
    else:
        assert all(trump_card not in hand for hand in hand_cards), "with no stock, nobody holds the trump card"
    rules = Rules(variant=variant, **options)  # type: ignore[arg-type]
    return BoutGame.dealt(rules, dealer, hand_cards, stock_cards, trump_card, attacker)


def ff_position(hands: dict[int, str], leader: int, *, dealer: int = 0, **options: object) -> FoolsFoolGame:
    """A Fool's Fool game in the chain phase with ``hands`` (shortened, as in RULES.md 10.5); ``leader`` leads."""
    players = len(hands)
    rules = Rules(variant="fools_fool", **options)  # type: ignore[arg-type]
    game = new_game(rules, players, deck=deck(rules.deck), dealer=dealer)
    assert isinstance(game, FoolsFoolGame)
    game.hands = [mask_of(parse_cards(hands[seat])) for seat in range(players)]
    game.known = [0] * players
    game.to_move = leader
    return game


def play(game: Game, *actions: str) -> None:
    """Apply each action string in turn (for whoever is to move)."""
    for action in actions:
        game.apply_str(action)


def legal(game: Game) -> set[str]:
    return {str(action) for action in game.legal_actions()}


def hand(game: Game, seat: int) -> str:
    return format_cards(card_list(game.hands[seat]))


def hands(game: Game) -> dict[int, str]:
    return {seat: hand(game, seat) for seat in range(game.players)}


def known(game: Game, seat: int) -> str:
    """The cards publicly known in ``seat``'s hand, as any seat's view shows them."""
    return " ".join(game.view((seat + 1) % game.players).known[seat])


def table(game: BoutGame) -> str:
    """The table as ``"6C/8C 8H/-"``: attack card / beating card, in the order laid."""
    return " ".join(f"{a}/{d or '-'}" for a, d in game.view(0).table)


def stock(game: BoutGame) -> str:
    """The stock, top first (the trump card last)."""
    return format_cards(reversed(game.stock))


def discard(game: Game) -> str:
    return format_cards(card_list(game.discard))  # type: ignore[attr-defined]


def actions_taken(events: Iterable[Event]) -> list[tuple[int, str]]:
    """Every decision and automatic pass, as (seat, action string)."""
    return [(e.seat, e.action) for e in events if isinstance(e, ActionTaken)]


def draws(events: Iterable[Event]) -> list[tuple[int, str]]:
    """Every refill draw, as (seat, cards drawn)."""
    return [(e.seat, " ".join(e.cards or [])) for e in events if isinstance(e, CardsDrawn)]


def events_since(game: Game, mark: int) -> list[Event]:
    return game.events[mark:]
