"""Determinization for search: a full game consistent with what one seat knows, the hidden cards sampled.

A seat knows its view (its hand, the table, the discard, hand sizes, the cards known to be in each hand, the
trump, whose turn it is) and the events it was told (who led the bout, who laid the Fool's Fool pile's top
card). :func:`determinize` deals every card the seat cannot see (the others' unknown cards, the stock above the
trump card) at random, so a bot can search several sampled worlds with ``copy()`` and ``apply``.
"""

from __future__ import annotations

from collections.abc import MutableSequence, Sequence
from typing import Any, Protocol

from protocol import actions
from protocol.cards import CardMask, card_list, deck_mask, mask_of, parse_card, suit_of
from protocol.events import ActionTaken, AnyEvent, BoutStarted
from protocol.rules import Rules
from protocol.views import PlayerView
from referee.engine.bout import DEFEND, LEAD, RANK_MASKS, THROW_IN, BoutGame
from referee.engine.fools_fool import FoolsFoolGame
from referee.engine.game import Game
from referee.engine.tables import BEATERS, FOOLS_FOOL_BEATERS

#: Deals tried before giving up on one that fits what the turn shows (one fits nearly always in a few).
_DEALS_TRIED = 1000


class Shuffler(Protocol):
    """What :func:`determinize` needs of a random source: ``random.Random`` and ``SeededRng`` both do."""

    def shuffle(self, x: MutableSequence[Any], /) -> None: ...


def determinize(rules: Rules, view: PlayerView, events: Sequence[AnyEvent], rng: Shuffler, *,
                dealer: int = 0) -> Game:
    """A game in which ``view.seat`` sees exactly ``view`` and has the same legal actions, the cards it cannot
    see dealt at random by ``rng``.

    ``events`` are every event of the game so far as the seat was told them (its requests' ``events``, in
    order); ``dealer`` is the game's dealer (``GameStart.dealer``). The game's ``events`` start as a copy of
    ``events``; its ``actions`` counts their action events (automatic passes too), so a game near the
    ``max_actions`` cap reaches it no later than the real one; its result never says
    ``first_attacker_by_lot`` (no view tells it). When another seat is to move and the engine asks it only
    because it holds a certain card (a beater of the Fool's Fool pile, a throw-in without
    ``ask_forced_passes``), only deals that give it one are drawn.

    :raises ValueError: the game is over, or ``view`` does not add up (a card twice, sizes that do not fit).
    """
    if view.phase == "over":
        raise ValueError("the game is over: there is nothing to search")
    game: BoutGame | FoolsFoolGame
    players = len(view.hand_sizes)
    if rules.variant == "fools_fool":
        game = FoolsFoolGame(rules, players, dealer)
        stock_known = _fools_fool_state(game, view, events)
    else:
        game = BoutGame(rules, players, dealer)
        stock_known = _bout_state(game, view, events)
    _common_state(game, view, events)
    _deal_hidden(game, view, stock_known, rng)
    return game


def _common_state(game: Game, view: PlayerView, events: Sequence[AnyEvent]) -> None:
    game.hands[view.seat] = mask_of(parse_card(c) for c in view.hand)
    game.known = [mask_of(parse_card(c) for c in cards) for cards in view.known]
    game.discard = mask_of(parse_card(c) for c in view.discard)
    game.out = [list(group) for group in view.out]
    for group in game.out:
        for seat in group:
            game._out_seats |= 1 << seat
    game.events = list(events)
    game.actions = sum(1 for event in events if isinstance(event, ActionTaken))
    game.to_move = view.to_move


def _bout_state(game: BoutGame, view: PlayerView, events: Sequence[AnyEvent]) -> list[int]:
    """Fill in a bout game's public state; returns the face-down stock's cards known to the seat (the trump)."""
    assert view.trump is not None and view.attacker is not None and view.defender is not None
    game.trump_card = parse_card(view.trump)
    game.trump = suit_of(game.trump_card)
    game._beaters = BEATERS[game.trump]
    game.chases = list(view.chases) if view.chases is not None else [0] * game.players
    limit = game.rules.first_bout_limit
    game._limit_active = limit is not None and view.bout_limit == limit
    game.attacker, game.defender = view.attacker, view.defender
    game.leader = _bout_leader(events, view.attacker)
    game.taking = view.taking
    if view.phase not in (LEAD, DEFEND, THROW_IN):
        raise ValueError(f"a bout game has no phase {view.phase!r}")
    game._phase = view.phase
    for attack, defence in view.table:
        assert attack is not None
        game.attacks.append(parse_card(attack))
        game.defences.append(None if defence is None else parse_card(defence))
        if defence is None:
            game.unbeaten += 1
    for card in (*game.attacks, *(d for d in game.defences if d is not None)):
        game.table_cards |= 1 << card
        game.table_ranks |= RANK_MASKS[card >> 2]
    if game._phase == THROW_IN:
        assert view.to_move is not None
        game._throw_order = game._throw_priority()
        game._throw_index = game._throw_order.index(view.to_move)
    return [game.trump_card] if view.stock else []


def _bout_leader(events: Sequence[AnyEvent], attacker: int) -> int:
    """Who led the current bout's first card (the refill starts with him): the bout's first attack."""
    for index in range(len(events) - 1, -1, -1):
        if isinstance(events[index], BoutStarted):
            for event in events[index + 1:]:
                if isinstance(event, ActionTaken) and event.action.startswith(actions.ATTACK + " "):
                    return event.seat
            break
    return attacker


def _fools_fool_state(game: FoolsFoolGame, view: PlayerView, events: Sequence[AnyEvent]) -> list[int]:
    game.pile = [parse_card(c) for c in view.pile]
    game.pile_limit = view.pile_limit if view.pile_limit is not None else 0
    chain = (actions.LEAD, actions.BEAT_TOP)
    plays = [e for e in events if isinstance(e, ActionTaken) and e.action.split(" ")[0] in chain]
    game.lead_seat = plays[0].seat if plays else (view.to_move if view.to_move is not None else 0)
    game._pile_layer = plays[-1].seat if plays and game.pile else None
    return []


def _deal_hidden(game: BoutGame | FoolsFoolGame, view: PlayerView, stock_known: list[int], rng: Shuffler) -> None:
    """Deal the cards ``view.seat`` cannot see: into the others' hands beside their known cards, and into the
    stock above ``stock_known`` (the face-up trump card)."""
    seen: CardMask = game.hands[view.seat] | game.discard | mask_of(stock_known)
    for known in game.known:
        seen |= known
    if isinstance(game, BoutGame):
        seen |= game.table_cards
    else:
        seen |= mask_of(game.pile)
    unseen = card_list(deck_mask(game.rules.deck) & ~seen)
    needs = [0 if seat == view.seat else size - game.known[seat].bit_count()
             for seat, size in enumerate(view.hand_sizes)]
    stock_hidden = view.stock - len(stock_known) if isinstance(game, BoutGame) else 0
    if min(needs) < 0 or sum(needs) + stock_hidden != len(unseen) or seen & ~deck_mask(game.rules.deck):
        raise ValueError(f"the view does not add up: {len(unseen)} unseen cards for hands missing {sum(needs)} "
                         f"and a stock missing {stock_hidden}")
    must_hold = _turn_shows(game, view)
    for _ in range(_DEALS_TRIED):  # rejection sampling: every deal that fits the turn is as likely
        rng.shuffle(unseen)
        hands, start = list(game.known), 0
        for seat, need in enumerate(needs):
            hands[seat] |= mask_of(unseen[start:start + need])
            start += need
        if must_hold is None or hands[view.to_move or 0] & must_hold:
            break
    else:
        raise ValueError(f"no deal of the unseen cards lets seat {view.to_move} hold the card its turn shows")
    for seat in range(game.players):
        if seat != view.seat:
            game.hands[seat] = hands[seat]
    if isinstance(game, BoutGame):
        game.stock = [*stock_known, *unseen[start:]]  # drawn with pop(): the trump card is drawn last


def _turn_shows(game: BoutGame | FoolsFoolGame, view: PlayerView) -> CardMask | None:
    """Cards of which another seat to move must hold one, because the engine asks it only then: a beater of the
    Fool's Fool pile's top card (else it takes automatically), or a throw-in without ``ask_forced_passes``."""
    if view.to_move is None or view.to_move == view.seat:
        return None
    if isinstance(game, FoolsFoolGame):
        return FOOLS_FOOL_BEATERS[game.pile[-1]] if game.pile else None
    if game._phase == THROW_IN and not game._ask_forced_passes:
        return game.table_ranks
    return None
