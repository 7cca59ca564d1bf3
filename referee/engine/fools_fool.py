"""Fool's Fool (RULES.md 5, 5b.9): the ladder deal, played by the engine, then chain beating.

The ladder needs no decisions, so a new game is already in the chain phase: its events tell
the deal step by step. In the chain a player leads one card; each next player with cards
must beat the pile's top card if he can (a decision) or takes its bottom card (automatic).
"""

from __future__ import annotations

from typing import Any

from protocol.actions import BEAT_TOP, LEAD, Action
from protocol.cards import CARD_NAMES, LOWEST_RANK, Card, card_list, rank_of
from protocol.events import CardKept, CardPlaced, LadderEnded, LadderStarted, PileDiscarded, PileTaken
from protocol.rules import Rules
from protocol.views import GameResult
from referee.engine.game import Game
from referee.engine.tables import BEAT_TOP_ACTIONS, FOOLS_FOOL_BEATERS, LEAD_ACTIONS, action_event

CHAIN_LEAD, CHAIN_BEAT = "lead", "beat"


def ladder_starter(piles: list[Card], dealer: int) -> int:
    """The seat whose face-up card ranks highest; ties go first in deal order from the dealer's left."""
    players = len(piles)
    deal_order = [(dealer + 1 + i) % players for i in range(players)]
    return max(deal_order, key=lambda seat: (rank_of(piles[seat]), -deal_order.index(seat)))


class FoolsFoolGame(Game):
    """A game of Fool's Fool. Build it with :func:`referee.engine.new_game`.

    ``FoolsFoolGame(rules, players, dealer)`` is the table before the deal; :meth:`dealt` deals it.
    """

    def __init__(self, rules: Rules, players: int, dealer: int) -> None:
        super().__init__(rules, players, dealer)
        self._ace_follower = LOWEST_RANK[rules.deck]
        self.pile: list[Card] = []
        self.pile_limit = 0
        self._pile_layer: int | None = None  # who laid the pile's top card
        self.lead_seat = 0

    @classmethod
    def dealt(cls, rules: Rules, players: int, dealer: int, deck: list[Card], leader: int | None) -> FoolsFoolGame:
        """The game after the ladder deal of ``deck`` (top first); ``leader`` (None: the lowest diamond's
        holder) leads the chain."""
        game = cls(rules, players, dealer)
        game._play_ladder(deck)
        game.lead_seat = leader if leader is not None else game._lowest_diamond_holder()
        game._lead_from(game.lead_seat)
        return game

    def copy(self) -> FoolsFoolGame:
        twin = FoolsFoolGame(self.rules, self.players, self.dealer)
        self._copy_common(twin)
        twin.pile = list(self.pile)
        twin.pile_limit = self.pile_limit
        twin._pile_layer = self._pile_layer
        twin.lead_seat = self.lead_seat
        return twin

    # -- phase 1: the ladder -------------------------------------------------------------

    def _play_ladder(self, deck: list[Card]) -> None:
        players = self.players
        piles: list[list[Card]] = [[] for _ in range(players)]
        for i in range(players):
            piles[(self.dealer + 1 + i) % players].append(deck[i])
        kept = [0] * players
        stock = deck[players:]
        seat = ladder_starter([p[0] for p in piles], self.dealer)
        self.events.append(LadderStarted(piles=[CARD_NAMES[p[0]] for p in piles], starter=seat))
        for card in stock:
            onto = self._ladder_target(piles, seat, card)
            if onto is None:
                kept[seat] |= 1 << card
                self.events.append(CardKept(seat=seat, card=CARD_NAMES[card]))
                seat = (seat + 1) % players
            else:
                piles[onto].append(card)
                self.events.append(CardPlaced(seat=seat, card=CARD_NAMES[card], onto=onto))
        for seat in range(players):
            pile_mask = sum(1 << c for c in piles[seat])
            self.hands[seat] = pile_mask | kept[seat]
            self.known[seat] = pile_mask
        self.events.append(LadderEnded(hand_sizes=[h.bit_count() for h in self.hands]))

    def _ladder_target(self, piles: list[list[Card]], seat: int, card: Card) -> int | None:
        """The nearest other pile, clockwise from ``seat``'s left, whose top card ranks one below."""
        rank = rank_of(card)
        below = 14 if rank == self._ace_follower else rank - 1
        for step in range(1, self.players):
            other = (seat + step) % self.players
            if rank_of(piles[other][-1]) == below:
                return other
        return None

    def _lowest_diamond_holder(self) -> int:
        for card in range(1, 52, 4):  # diamonds, lowest first
            for seat in range(self.players):
                if self.hands[seat] >> card & 1:
                    return seat
        raise AssertionError("the whole deck is dealt, so somebody holds a diamond")

    # -- phase 2: chain beating ----------------------------------------------------------

    @property
    def phase(self) -> str:
        return CHAIN_BEAT if self.pile else CHAIN_LEAD

    def _generate_legal(self) -> list[Action]:
        seat = self.to_move
        assert seat is not None
        hand = self.hands[seat]
        if not self.pile:
            return [LEAD_ACTIONS[c] for c in card_list(hand)]
        return [BEAT_TOP_ACTIONS[c] for c in card_list(hand & FOOLS_FOOL_BEATERS[self.pile[-1]])]

    def _apply(self, action: Action) -> None:
        seat = self.to_move
        assert seat is not None
        card = action.cards[0]
        self.events.append(action_event(seat, action))
        if action.kind == LEAD:
            self.pile_limit = self._players_left()
        self.hands[seat] &= ~(1 << card)
        self.known[seat] &= ~(1 << card)
        self.pile.append(card)
        self._pile_layer = seat
        if not self.hands[seat]:
            self._go_out([seat])
        if len(self.pile) == self.pile_limit:
            self._discard_pile()
            self._lead_from(seat)
        else:
            self._pass_pile_on(seat)

    def _discard_pile(self) -> None:
        for card in self.pile:
            self.discard |= 1 << card
        self.events.append(PileDiscarded(cards=[CARD_NAMES[c] for c in self.pile]))
        self.pile = []
        self._pile_layer = None

    def _lead_from(self, seat: int) -> None:
        """``seat`` leads next, or the next player with cards clockwise if he has none."""
        if self._players_left() <= 1:
            self._finish_normally()
            return
        seat %= self.players
        self.to_move = seat if self.hands[seat] else self.next_seat_with_cards(seat)

    def _pass_pile_on(self, seat: int) -> None:
        """Offer the pile to the next player with cards; forced takes run here (5b.9)."""
        while True:
            responder = self.next_seat_with_cards(seat)
            if responder is None:  # the last card beaten with a player's last card: a draw
                self._finish_normally()
                return
            if responder == self._pile_layer:  # it came back round to him
                self._discard_pile()
                self._lead_from(responder)
                return
            if self.hands[responder] & FOOLS_FOOL_BEATERS[self.pile[-1]]:
                self.to_move = responder
                return
            bottom = self.pile.pop(0)
            self.hands[responder] |= 1 << bottom
            self.known[responder] |= 1 << bottom
            self.events.append(PileTaken(seat=responder, card=CARD_NAMES[bottom]))
            if self._players_left() <= 1:  # the last player answered once and could not beat
                self._finish_normally()
                return
            if not self.pile:
                self._pile_layer = None
                self._lead_from(responder + 1)
                return
            seat = responder

    def _explain_illegal(self, action: Action) -> str:
        seat = self.to_move
        expected = BEAT_TOP if self.pile else LEAD
        if action.kind != expected:
            return f"Fool's Fool expects {expected} here (RULES.md 5, phase 2)"
        card = action.cards[0]
        if seat is None or not self.hands[seat] >> card & 1:
            return f"seat {seat} does not hold {CARD_NAMES[card]}"
        return (f"{CARD_NAMES[card]} does not beat {CARD_NAMES[self.pile[-1]]}: a higher card of the suit, or a "
                "diamond on hearts or spades; clubs only by higher clubs (RULES.md 5, phase 2)")

    def _variant_view(self) -> dict[str, Any]:
        return {
            "trump_suit": "D",
            "pile": [CARD_NAMES[c] for c in self.pile],
            "pile_limit": self.pile_limit if self.pile else None,
        }



__all__ = ["FoolsFoolGame", "GameResult", "ladder_starter"]
