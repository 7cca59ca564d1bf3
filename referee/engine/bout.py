"""The bout games: ``podkidnoy``, ``perevodnoy`` and ``chase`` (RULES.md 1-4, 5b).

One bout runs through three phases: ``lead`` (the attacker lays 1+ cards of one rank),
``defend`` (the defender beats unbeaten cards one at a time, transfers, or takes) and
``throw`` (the others, in priority order, throw in or pass). Refill, going out and the next
bout are automatic.
"""

from __future__ import annotations

from typing import Any, Final

from protocol.actions import ATTACK, BEAT, PASS, TAKE, THROW, TRANSFER, Action
from protocol.cards import CARD_NAMES, SUIT_SYMBOLS, Card, card_names, mask_of, rank_mask, rank_of, suit_of
from protocol.events import BoutEnded, CardsDrawn
from protocol.rules import BOUT_CARD_LIMIT, HAND_SIZE, Rules
from protocol.views import GameResult
from referee.engine.game import Game
from referee.engine.tables import (
    ATTACK_GROUPS,
    BEAT_ACTIONS,
    BEATERS,
    BOUT_STARTS,
    PASS_ACTION,
    TAKE_ACTION,
    THROW_GROUPS,
    TRANSFER_GROUPS,
    action_event,
    group_actions,
)

LEAD: Final = "lead"
DEFEND: Final = "defend"
THROW_IN: Final = "throw"
RANK_MASKS: Final = tuple(rank_mask(r) for r in range(2, 15))


class BoutGame(Game):
    """A game of podkidnoy, perevodnoy or chase. Build it with :func:`referee.engine.new_game`.

    ``BoutGame(rules, players, dealer)`` is the table before the deal; :meth:`dealt` deals it.
    """

    def __init__(self, rules: Rules, players: int, dealer: int) -> None:
        super().__init__(rules, players, dealer)
        self.trump_card = 0
        self.trump = 0
        self._beaters = BEATERS[0]
        self.stock: list[Card] = []  # drawn with pop(): the top card is last, the trump card first
        self.chases = [0] * players
        self._is_chase = rules.variant == "chase"
        self._has_transfers = rules.has_transfers
        self._transfer_after_beat = bool(rules.transfer_after_beat)
        self._discard_pairs_on_transfer = rules.transfer_beaten_pairs == "discard"
        self._throw_in_after_take = bool(rules.throw_in_after_take)
        self._defender_draws_last = bool(rules.defender_draws_last)
        self._ask_forced_passes = bool(rules.ask_forced_passes)
        self._first_bout_limit = rules.first_bout_limit
        self._limit_active = rules.first_bout_limit is not None
        self.attacker = 0  # the primary attacker: first in throw-in priority
        self.defender = 0
        self.leader = 0  # who led the bout's first card: the refill starts with him
        self.taking = False
        self._phase = LEAD
        self._throw_order: list[int] = []
        self._throw_index = 0
        self._clear_table()

    @classmethod
    def dealt(cls, rules: Rules, dealer: int, hands: list[list[Card]], stock: list[Card], trump_card: Card,
              attacker: int) -> BoutGame:
        """The game with ``hands`` dealt (one per seat: their number is the table's), ``stock`` left (top first,
        the face-up ``trump_card`` last, or empty when the dealer's last card fixed trump) and ``attacker``
        leading the first bout."""
        game = cls(rules, len(hands), dealer)
        for seat, cards in enumerate(hands):
            for card in cards:
                game.hands[seat] |= 1 << card
        game.trump_card = trump_card
        game.trump = suit_of(trump_card)
        game._beaters = BEATERS[game.trump]
        game.stock = stock[::-1]
        if not stock:  # 36 cards, 6 players: the dealer's last card was shown (RULES.md 1, Deal)
            game.known[dealer] |= 1 << trump_card
        game._start_bout(attacker)
        return game

    def copy(self) -> BoutGame:
        twin = BoutGame(self.rules, self.players, self.dealer)
        self._copy_common(twin)
        twin.trump_card = self.trump_card
        twin.trump = self.trump
        twin._beaters = self._beaters
        twin.stock = list(self.stock)
        twin.chases = list(self.chases)
        twin._limit_active = self._limit_active
        twin.attacker = self.attacker
        twin.defender = self.defender
        twin.leader = self.leader
        twin.taking = self.taking
        twin._phase = self._phase
        twin._throw_order = list(self._throw_order)
        twin._throw_index = self._throw_index
        twin.attacks = list(self.attacks)
        twin.defences = list(self.defences)
        twin.unbeaten = self.unbeaten
        twin.table_cards = self.table_cards
        twin.table_ranks = self.table_ranks
        return twin

    # -- bout state ----------------------------------------------------------------------

    def _start_bout(self, attacker: int) -> None:
        defender = self.next_seat_with_cards(attacker)
        assert defender is not None and defender != attacker
        self.attacker = attacker
        self.defender = defender
        self.leader = attacker
        self._clear_table()
        self.taking = False
        self._phase = LEAD
        self.to_move = attacker
        self._throw_order = []
        self._throw_index = 0
        self.events.append(BOUT_STARTS[attacker][defender])

    def _clear_table(self) -> None:
        self.attacks: list[Card] = []
        self.defences: list[Card | None] = []
        self.unbeaten = 0
        self.table_cards = 0  # mask of every card on the table
        self.table_ranks = 0  # mask of every card whose rank is on the table: what may be thrown in

    @property
    def phase(self) -> str:
        return self._phase

    @property
    def bout_limit(self) -> int:
        """Attack cards allowed on the table in this bout (RULES.md 5b.4)."""
        limit = self._first_bout_limit
        return limit if self._limit_active and limit is not None else BOUT_CARD_LIMIT

    def _throw_capacity(self) -> int:
        return min(self.bout_limit - len(self.attacks), self.hand_size(self.defender) - self.unbeaten)

    def _transfer_target(self) -> int | None:
        """The seat a transfer would pass to, if a transfer is possible at all (RULES.md 5b.5)."""
        if not self._has_transfers or self.taking:
            return None
        if self.unbeaten != len(self.attacks) and not self._transfer_after_beat:
            return None
        target = self.next_seat_with_cards(self.defender)
        return None if target == self.defender else target

    # -- legal actions -------------------------------------------------------------------

    def _generate_legal(self) -> list[Action]:
        seat = self.to_move
        assert seat is not None
        hand = self.hands[seat]
        phase = self._phase
        if phase == LEAD:
            return group_actions(ATTACK_GROUPS, hand, min(self.bout_limit, self.hand_size(self.defender)))
        if phase == THROW_IN:
            actions = self._throw_ins(hand)
            actions.append(PASS_ACTION)
            return actions
        return self._defences(hand)

    def _throw_ins(self, hand: int) -> list[Action]:
        capacity = self._throw_capacity()
        if capacity <= 0:
            return []
        return group_actions(THROW_GROUPS, hand & self.table_ranks, capacity)

    def _defences(self, hand: int) -> list[Action]:
        actions = []
        beaters = self._beaters
        defences = self.defences
        for index, target in enumerate(self.attacks):  # no zip: the compiled build makes no tuples this way
            if defences[index] is None:
                row = BEAT_ACTIONS[target]
                mask = hand & beaters[target]
                while mask:
                    low = mask & -mask
                    actions.append(row[low.bit_length() - 1])
                    mask ^= low
        actions.extend(self._transfers(hand))
        actions.append(TAKE_ACTION)
        return actions

    def _transfers(self, hand: int) -> list[Action]:
        target = self._transfer_target()
        if target is None:
            return []
        rank = rank_of(self.attacks[self.defences.index(None)])  # all unbeaten cards share one rank
        on_table = self.unbeaten if self._discard_pairs_on_transfer else len(self.attacks)
        cap = min(self.bout_limit - on_table, self.hand_size(target) - self.unbeaten)
        if cap <= 0:
            return []
        return group_actions(TRANSFER_GROUPS, hand & rank_mask(rank), cap)

    # -- applying actions ----------------------------------------------------------------

    def _apply(self, action: Action) -> None:
        seat = self.to_move
        assert seat is not None
        self.events.append(action_event(seat, action))
        kind = action.kind
        if kind == BEAT:
            self._beat(action.cards[0], action.cards[1])
        elif kind == PASS:
            self._throw_index += 1
            self._advance_throw_round()
        elif kind == TAKE:
            self._take()
        elif kind == TRANSFER:
            self._transfer(action.cards)
        else:
            self._lay(seat, action.cards)
            if kind == ATTACK:
                self.leader = seat
            self._after_attack_cards()

    def _to_table(self, seat: int, cards: tuple[Card, ...]) -> None:
        laid = 0
        for card in cards:
            laid |= 1 << card
            self.table_ranks |= RANK_MASKS[card >> 2]
        self.hands[seat] &= ~laid
        self.known[seat] &= ~laid
        self.table_cards |= laid

    def _lay(self, seat: int, cards: tuple[Card, ...]) -> None:
        """Lead or throw in ``cards``; in chase, k >= 2 cards at once score k // 2 (RULES.md 4)."""
        self._to_table(seat, cards)
        self.attacks.extend(cards)
        self.defences.extend([None] * len(cards))
        self.unbeaten += len(cards)
        if len(cards) >= 2 and self._is_chase:
            self.chases[seat] += len(cards) // 2

    def _after_attack_cards(self) -> None:
        """After a lead or throw-in: the defender answers, or (taking) priority restarts (5b.1)."""
        if self.taking:
            self._start_throw_round()
        else:
            self._phase = DEFEND
            self.to_move = self.defender

    def _beat(self, target: Card, card: Card) -> None:
        self._to_table(self.defender, (card,))
        self.defences[self.attacks.index(target)] = card
        self.unbeaten -= 1
        if self.unbeaten == 0:
            self._start_throw_round()

    def _take(self) -> None:
        self.taking = True
        if self._throw_in_after_take:
            self._start_throw_round()
        else:
            self._end_bout()

    def _transfer(self, cards: tuple[Card, ...]) -> None:
        target = self._transfer_target()
        assert target is not None
        old_defender = self.defender
        if self._discard_pairs_on_transfer:
            for attack, defence in zip(self.attacks, self.defences, strict=True):
                if defence is not None:
                    pair = (1 << attack) | (1 << defence)
                    self.discard |= pair
                    self.table_cards &= ~pair
            self.attacks = [a for a, d in zip(self.attacks, self.defences, strict=True) if d is None]
            self.defences = [None] * len(self.attacks)
            self.table_ranks = 0
            for card in self.attacks:
                self.table_ranks |= RANK_MASKS[card >> 2]
        self._to_table(old_defender, cards)
        self.attacks.extend(cards)
        self.defences.extend([None] * len(cards))
        self.unbeaten += len(cards)
        self.attacker = old_defender
        self.defender = target
        self.to_move = target

    def _start_throw_round(self) -> None:
        """Offer throw-ins from the primary attacker clockwise (RULES.md 1, 5b.1-3)."""
        self._phase = THROW_IN
        self._throw_order = self._throw_priority()
        self._throw_index = 0
        self._advance_throw_round()

    def _throw_priority(self) -> list[int]:
        """The seats offered throw-ins, in order: the primary attacker, then clockwise; not the defender, not
        those out."""
        order = []
        for step in range(self.players):
            seat = (self.attacker + step) % self.players
            if seat != self.defender and not self._is_out(seat):
                order.append(seat)
        return order

    def _advance_throw_round(self) -> None:
        """Ask the next seat in priority order, or announce its automatic pass (RULES.md 5b.2).

        With room on the table (public), ``ask_forced_passes`` asks every seat holding cards, so
        whether a seat is asked never depends on its hand; without the option only seats with a
        legal throw-in are asked. Without room nobody is asked.
        """
        order = self._throw_order
        has_room = self._throw_capacity() > 0
        ask_all = has_room and self._ask_forced_passes
        throwable = self.table_ranks if has_room else 0  # a seat holding one of these has a throw-in
        while self._throw_index < len(order):
            seat = order[self._throw_index]
            hand = self.hands[seat]
            if hand:
                if ask_all or hand & throwable:
                    self.to_move = seat
                    return
                self.events.append(action_event(seat, PASS_ACTION))
            self._throw_index += 1
        self._end_bout()

    # -- end of a bout -------------------------------------------------------------------

    def _end_bout(self) -> None:
        table = self.table_cards
        cards = card_names(table)
        defender = self.defender
        if self.taking:
            self.hands[defender] |= table
            self.known[defender] |= table
            self.events.append(BoutEnded("taken", defender, cards))
        else:
            self.discard |= table
            self._limit_active = False
            self.events.append(BoutEnded("discarded", defender, cards))
        self._clear_table()
        self._refill()
        if not self.stock:
            emptied = [s for s in range(self.players) if not self.hands[s] and not self._is_out(s)]
            if emptied:
                self._go_out(emptied)
        if self._players_left() <= 1:
            self._end_game()
            return
        beat_all_and_still_in = not self.taking and self.hands[defender]
        attacker = defender if beat_all_and_still_in else self.next_seat_with_cards(defender)
        assert attacker is not None
        self._start_bout(attacker)

    def _refill(self) -> None:
        """Draw up to 6, the bout's first attacker first, then clockwise (RULES.md 1, Refill)."""
        order = [(self.leader + step) % self.players for step in range(self.players)]
        if self._defender_draws_last:
            order.remove(self.defender)
            order.append(self.defender)
        for seat in order:
            if not self.stock:
                return
            need = HAND_SIZE - self.hands[seat].bit_count()
            if need <= 0 or self._is_out(seat):
                continue
            drawn = [self.stock.pop() for _ in range(min(need, len(self.stock)))]
            shown = []
            self.hands[seat] |= mask_of(drawn)
            if not self.stock and drawn[-1] == self.trump_card:
                self.known[seat] |= 1 << self.trump_card
                shown.append(CARD_NAMES[self.trump_card])
            self.events.append(CardsDrawn(seat, len(drawn), [CARD_NAMES[c] for c in drawn], shown))

    def _end_game(self) -> None:
        if self._is_chase:
            self._finish(chase_result(self.out, self.players, self.chases))
        else:
            self._finish_normally()

    def _chases(self) -> list[int] | None:
        return list(self.chases) if self._is_chase else None

    # -- explaining illegal actions ------------------------------------------------------

    def _explain_illegal(self, action: Action) -> str:
        seat = self.to_move
        assert seat is not None
        hand = self.hands[seat]
        expected = {LEAD: (ATTACK,), DEFEND: (BEAT, TRANSFER, TAKE), THROW_IN: (THROW, PASS)}[self.phase]
        if action.kind not in expected:
            return (f"the {self.phase} phase allows only {', '.join(expected)} "
                    f"(RULES.md 5b.1)")
        played = action.cards[1:] if action.kind == BEAT else action.cards
        missing = [CARD_NAMES[c] for c in played if not hand >> c & 1]
        if missing:
            return f"seat {seat} does not hold {' '.join(missing)}"
        if action.kind == BEAT:
            target, card = action.cards
            if target not in self.attacks or self.defences[self.attacks.index(target)] is not None:
                return f"{CARD_NAMES[target]} is not an unbeaten card on the table"
            return f"{CARD_NAMES[card]} does not beat {CARD_NAMES[target]} (RULES.md 1, Beating)"
        if action.kind == THROW and not self.table_ranks & (1 << action.cards[0]):
            return "a throw-in must match a rank on the table (RULES.md 1)"
        if action.kind == TRANSFER:
            return self._explain_illegal_transfer(action)
        return (f"at most {self.bout_limit} attack cards per bout and never more unbeaten cards than the "
                f"defender holds (RULES.md 5b.4)")

    def _explain_illegal_transfer(self, action: Action) -> str:
        if not self._has_transfers:
            return f"{self.rules.variant} has no transfers (RULES.md 3)"
        if self._transfer_target() is None:
            return "no transfer here: after a beat only with transfer_after_beat (RULES.md 5b.5)"
        unbeaten = [c for c, d in zip(self.attacks, self.defences, strict=True) if d is None]
        if rank_of(action.cards[0]) != rank_of(unbeaten[0]):
            return "a transfer must match the rank of the unbeaten cards (RULES.md 3)"
        return ("the next defender must hold at least as many cards as will be unbeaten, within the "
                "6-card bout limit (RULES.md 3, 5b.4)")

    # -- the view ------------------------------------------------------------------------

    def _variant_view(self) -> dict[str, Any]:
        return {
            "trump_suit": SUIT_SYMBOLS[self.trump],
            "trump": CARD_NAMES[self.trump_card],
            "stock": len(self.stock),
            "table": [[CARD_NAMES[a], None if d is None else CARD_NAMES[d]]
                      for a, d in zip(self.attacks, self.defences, strict=True)],
            "attacker": self.attacker,
            "defender": self.defender,
            "taking": self.taking,
            "bout_limit": self.bout_limit,
            "chases": self._chases(),
        }



def chase_result(out: list[list[int]], players: int, chases: list[int]) -> GameResult:
    """The fewest chases lose; ties go to the one out last, the player left last of all (RULES.md 4, 5b.8)."""
    still_in = [s for s in range(players) if not any(s in g for g in out)]
    groups = [list(g) for g in out] + ([still_in] if still_in else [])
    fewest = min(chases)
    fools: list[int] = []
    for group in reversed(groups):
        fools = [s for s in group if chases[s] == fewest]
        if fools:
            break
    if len(fools) == players:
        return GameResult(order=[list(range(players))], fools=[], end="draw", chases=list(chases))
    order = [[s for s in g if s not in fools] for g in groups]
    order = [g for g in order if g]
    return GameResult(order=[*order, fools], fools=fools, end="fool", chases=list(chases))
