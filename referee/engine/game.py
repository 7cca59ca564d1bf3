"""What every Durak game shares: seats, hands, the decision loop, results and forfeits.

A :class:`Game` is a mutable state machine (python-chess ``Board``-style, with :meth:`copy`
for search): :attr:`to_move` names the seat that must decide, :meth:`legal_actions` lists its
choices in a fixed order, :meth:`apply` plays one, and automatic steps (dealing, refills,
automatic passes, forced takes) run inside the engine. Each step appends events to
:attr:`events`. The variants live in :mod:`referee.engine.bout` and
:mod:`referee.engine.fools_fool`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Final

import msgspec

from protocol.actions import Action, parse_action
from protocol.cards import card_names
from protocol.events import AnyEvent, PlayersOut
from protocol.rules import Rules
from protocol.views import GameResult, PlayerView
from referee.engine.errors import GameOverError, IllegalActionError

# Verdicts that end a game by forfeit (RULES.md 6); the referee's bot layer produces them.
#: ``resigned``: a person at the table gave up (``durak play --human``: Ctrl-C); never a bot.
VERDICTS: Final = ("timeout", "crash", "memory", "illegal", "protocol", "disqualified", "resigned")


class Game(ABC):
    """State shared by all variants. Hands and known cards are card bit masks per seat.

    ``Game(rules, players, dealer)`` is a table before the deal: a variant's ``dealt()`` deals it, and
    :meth:`copy` and :func:`referee.engine.determinize` fill it in.
    """

    rules: Rules
    players: int
    dealer: int
    hands: list[int]
    known: list[int]  # cards publicly known to be in each hand (RULES.md 5b.7)
    discard: int
    out: list[list[int]]  # groups of seats that went out together, first out first
    events: list[AnyEvent]
    actions: int  # decisions applied, for max_actions
    to_move: int | None
    result: GameResult | None
    deck: tuple[int, ...]  # the deck order this game was dealt from, top first
    first_attacker_by_lot: bool  # nobody held a trump and the lowest card tied (5b.6)

    def __init__(self, rules: Rules, players: int, dealer: int) -> None:
        self.rules = rules
        self.players = players
        self.dealer = dealer
        self.hands = [0] * players
        self.known = [0] * players
        self.discard = 0  # every card discarded so far: public
        self.out = []
        self.events = []
        self.actions = 0
        self.to_move = None
        self.result = None
        self.deck = ()
        self.first_attacker_by_lot = False
        self._out_seats = 0  # bit mask of the seats in ``out``
        self._max_actions = rules.max_actions
        self._legal: list[Action] | None = None

    # -- the public interface ------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.result is not None

    def legal_actions(self) -> list[Action]:
        """Every legal action of :attr:`to_move`, in a fixed order; empty once the game is over."""
        if self._legal is None:
            self._legal = [] if self.result is not None else self._generate_legal()
        return self._legal

    def apply(self, action: Action) -> None:
        """Play ``action`` for :attr:`to_move`, then every automatic step that follows.

        :raises GameOverError: the game has ended.
        :raises IllegalActionError: ``action`` is not legal here; the message says which rule.
        """
        if self.result is not None:
            raise GameOverError(f"the game is over; {action} cannot be played")
        why = self.why_illegal(action)
        if why is not None:
            raise IllegalActionError(f"{action} is illegal for seat {self.to_move}: {why}")
        self.apply_unchecked(action)

    def why_illegal(self, action: Action) -> str | None:
        """None if ``action`` is legal now, else the rule it breaks, in words."""
        if self.result is not None:
            return "the game is over"
        if action in self.legal_actions():
            return None
        return self._explain_illegal(action)

    def apply_str(self, text: str) -> Action:
        """Parse and :meth:`apply` an action string; returns the action.

        :raises InvalidActionError: the string is malformed.
        """
        action = parse_action(text)
        self.apply(action)
        return action

    def apply_unchecked(self, action: Action) -> None:
        """Apply an action taken from :meth:`legal_actions` without checking it again."""
        self._legal = None
        self.actions += 1
        self._apply(action)
        if self.result is None and self.actions >= self._max_actions:
            self._finish(GameResult(order=self._ranking_so_far([]), fools=[], end="action_cap",
                                    chases=self._chases()))

    def forfeit(self, seat: int, verdict: str, reason: str = "") -> GameResult:
        """End the game because ``seat``'s bot failed (RULES.md 6): it is the fool, the others
        keep their order so far and those still holding cards share a place."""
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r}: expected one of {', '.join(VERDICTS)}")
        if self.result is not None:
            raise GameOverError("the game is over; nobody can forfeit it")
        if not 0 <= seat < self.players:
            raise ValueError(f"seat {seat} is not at this table of {self.players}")
        order = self._ranking_so_far([seat])
        return self._finish(GameResult(order=[*order, [seat]], fools=[seat], end="forfeit", chases=self._chases(),
                                       forfeit_seat=seat, verdict=verdict, reason=reason))

    @abstractmethod
    def copy(self) -> Game:
        """An independent copy, for search: every mutable part is copied; events (immutable) are shared
        up to now, then diverge."""

    def _copy_common(self, twin: Game) -> None:
        twin.hands = list(self.hands)
        twin.known = list(self.known)
        twin.discard = self.discard
        twin.out = [list(group) for group in self.out]
        twin._out_seats = self._out_seats
        twin.events = list(self.events)
        twin.actions = self.actions
        twin.to_move = self.to_move
        twin.result = self.result
        twin.deck = self.deck
        twin.first_attacker_by_lot = self.first_attacker_by_lot

    def hand_size(self, seat: int) -> int:
        return self.hands[seat].bit_count()

    def has_cards(self, seat: int) -> bool:
        return self.hands[seat] != 0

    def next_seat_with_cards(self, seat: int) -> int | None:
        """The first seat after ``seat``, clockwise, holding cards (``seat`` itself last)."""
        for step in range(1, self.players + 1):
            other = (seat + step) % self.players
            if self.hands[other]:
                return other
        return None

    def view(self, seat: int) -> PlayerView:
        """Exactly what ``seat`` may know now (RULES.md 9)."""
        return PlayerView(
            seat=seat,
            phase="over" if self.result is not None else self.phase,
            to_move=self.to_move,
            hand=card_names(self.hands[seat]),
            hand_sizes=[h.bit_count() for h in self.hands],
            known=[card_names(h & k) for h, k in zip(self.hands, self.known, strict=True)],
            discard=card_names(self.discard),
            out=[list(g) for g in self.out],
            **self._variant_view(),
        )

    # -- for the variants ----------------------------------------------------------------

    @property
    @abstractmethod
    def phase(self) -> str:
        """The kind of decision awaited: lead, defend, throw (bout games); lead, beat (Fool's Fool)."""

    @abstractmethod
    def _variant_view(self) -> dict[str, Any]:
        """The view's fields that only this variant has (public ones: the same for every seat)."""

    @abstractmethod
    def _generate_legal(self) -> list[Action]: ...

    @abstractmethod
    def _apply(self, action: Action) -> None: ...

    @abstractmethod
    def _explain_illegal(self, action: Action) -> str: ...

    def _chases(self) -> list[int] | None:
        return None

    def _players_left(self) -> int:
        """How many seats still hold cards."""
        count = 0
        for hand in self.hands:
            if hand:
                count += 1
        return count

    def _is_out(self, seat: int) -> bool:
        return bool(self._out_seats >> seat & 1)

    def _go_out(self, seats: list[int]) -> None:
        self.out.append(seats)
        for seat in seats:
            self._out_seats |= 1 << seat
        self.events.append(PlayersOut(seats=seats, place=sum(len(g) for g in self.out) - len(seats) + 1))

    def _ranking_so_far(self, excluded: list[int]) -> list[list[int]]:
        """Out groups in order, then everyone else still in as one shared place."""
        order = [[s for s in group if s not in excluded] for group in self.out]
        order = [group for group in order if group]
        rest = [s for s in range(self.players) if s not in excluded and not self._is_out(s)]
        return [*order, rest] if rest else order

    def _finish(self, result: GameResult) -> GameResult:
        if self.first_attacker_by_lot:
            result = msgspec.structs.replace(result, first_attacker_by_lot=True)
        self.result = result
        self.to_move = None
        self._legal = None
        return result

    def _finish_normally(self) -> None:
        """The game ended by the rules: one player left (the fool) or nobody (a draw)."""
        rest = [s for s in range(self.players) if not self._is_out(s)]
        order = [list(g) for g in self.out]
        if rest:
            order.append(rest)
        self._finish(GameResult(order=order, fools=rest, end="fool" if rest else "draw", chases=self._chases()))
