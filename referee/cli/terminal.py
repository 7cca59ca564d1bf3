"""A person at a terminal (``durak play --human SEAT``): the :class:`referee.games.human.Person` that draws the
table and reads the answers.

Everything drawn comes from the messages the seat received (its own view, the legal actions, the events as the
seat may see them), never from the game itself: the screen cannot show what a bot in that seat would not know.
Input is read with select() on stdin up to the seat's deadline, so the clock holds while the person thinks; as the
clock passes its marks (the move time running into the bank, a minute, 30 and 10 s before the forfeit) a line says
so and the prompt comes again with the time left. Ctrl-C (SIGINT) is a resignation, which the seat turns into the
``resigned`` verdict.
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

from protocol.events import AnyEvent
from protocol.messages import GameOver, GameStart, Request
from protocol.views import PlayerView
from referee.games.human import ClockReading, SeatMessage
from referee.hand_order import sorted_hand
from referee.results.narrate import describe_event, describe_result
from referee.text import visible

#: How often a wait for input looks at the resign flag (a Ctrl-C lands in the handler, which cannot wake select).
_POLL = 0.1
_RED_SUITS = "DH"
#: Seconds before the forfeit at which the person is warned (those that fall inside the decision's time).
_FINAL_MARKS = (60, 30, 10)
#: Seconds before the move time runs into the bank at which the person is warned.
_BANK_MARK = 10
#: A mark closer than this to the prompt, or to another mark, is not said: the prompt has just said the time.
_MARK_GAP = 0.5


def colours_wanted(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Colours only on a terminal that shows them, and never where NO_COLOR (https://no-color.org) is set."""
    env = os.environ if environ is None else environ
    return stream.isatty() and env.get("TERM", "dumb") != "dumb" and not env.get("NO_COLOR")


class TerminalPerson:
    """Draws the seat's table on ``out`` after each message and reads answers from the file descriptor ``fd``.

    ``rules_summary`` is what ``?`` prints. ``now`` is monotonic, as the seat's deadline; ``poll`` how long one
    wait for input lasts at most (a test's fake clock sets 0).
    """

    def __init__(self, out: TextIO, fd: int, rules_summary: str, *, colour: bool = False,
                 now: Callable[[], float] = time.monotonic, poll: float = _POLL) -> None:
        self.out = out
        self.fd = fd
        self.rules_summary = rules_summary
        self.colour = colour
        self._now = now
        self._poll = poll
        self._names: list[str] = []
        self._seat = 0
        self._trump_suit = ""
        self._pending = b""
        self._resigned: str | None = None
        self._clock: ClockReading | None = None  # the pending decision's, as the seat showed it

    # -- Person ----------------------------------------------------------------------------------------

    def show(self, message: SeatMessage, clock: ClockReading) -> None:
        if isinstance(message, GameStart):  # the table is drawn at the first request, after the events that
            self._start(message)              # dealt it (Fool's Fool's ladder): drawn now, it would come unexplained
        elif isinstance(message, Request):
            self._clock = clock
            self._narrate(message.events)
            self._draw(message.view, clock)
            for number, action in enumerate(message.legal, 1):
                self._say(f"  {number:>2}. {action}")
        elif isinstance(message, GameOver):
            self._narrate(message.events)
            self._say(self._bold("game over: " + describe_result(message.result, self._names)))
        self.out.flush()

    def choose(self, request: Request, deadline: float) -> str | None:
        """Read a number, an action string or ``?`` (with one legal action, Enter takes it); a wrong entry gets one
        line and the same question. The clock's marks are said as they pass."""
        legal = request.legal
        marks = self._marks(deadline)
        while self._resigned is None:
            if deadline - self._now() <= 0:
                return None
            self._prompt(legal, deadline)
            line = self._read_line(deadline, lambda: self._prompt(legal, deadline), marks)
            if line is None:
                return None
            answer = line.strip()
            if answer == "?":
                self._say(self.rules_summary)
                continue
            if answer == "" and len(legal) == 1:
                return legal[0]
            if answer.isdigit() and 1 <= int(answer) <= len(legal):
                return legal[int(answer) - 1]
            chosen = next((action for action in legal if action.lower() == " ".join(answer.lower().split())), None)
            if chosen is not None:
                return chosen
            how = "press Enter or type 1 for the only action," if len(legal) == 1 else \
                f"type 1-{len(legal)}, an action as listed,"
            self._say(f"not a legal answer: {visible(answer)!r}; {how} or ?")
        return None

    def resigned(self) -> str | None:
        return self._resigned

    def resign(self, why: str) -> None:
        """Give up the game (the SIGINT handler; also the end of input)."""
        if self._resigned is None:
            self._resigned = why

    @contextmanager
    def ctrl_c_resigns(self) -> Iterator[None]:
        """While in effect, Ctrl-C resigns instead of raising KeyboardInterrupt: the game ends as a forfeit and
        is recorded; the handler that was there before comes back after."""

        def handler(signum: int, frame: FrameType | None) -> None:
            self.resign("Ctrl-C")

        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    # -- the prompt and the clock ----------------------------------------------------------------------

    def _prompt(self, legal: Sequence[str], deadline: float) -> None:
        choices = "Enter or 1 for the only action" if len(legal) == 1 else f"1-{len(legal)}, an action"
        self.out.write(f"your move [{choices}, ? for the rules; {self._time_left(deadline)}]: ")
        self.out.flush()

    def _reading(self, deadline: float) -> ClockReading:
        """The pending decision's clock (a seat that showed none: all of it move time)."""
        clock = self._clock
        if clock is None or clock.deadline != deadline:
            return ClockReading(move_time=max(0.0, deadline - self._now()), bank=0.0, deadline=deadline)
        return clock

    def _time_left(self, deadline: float) -> str:
        """``45 s + bank 300 s`` while the move time runs; ``bank: 280 s left`` once the bank does."""
        clock = self._reading(deadline)
        move, bank = clock.split(self._now())
        if clock.bank == 0:
            return f"{move:.0f} s left"
        return f"{move:.0f} s + bank {bank:.0f} s" if move > 0 else f"bank: {bank:.0f} s left"

    def _marks(self, deadline: float) -> list[tuple[float, str]]:
        """The moments of this decision at which the person is warned, with what is said, in time order: before
        the move time runs into the bank, as it does, and a minute, 30 and 10 s before the forfeit. A mark too
        close to the prompt or to an earlier one is left out; where two fall together, the bank's is said."""
        clock = self._reading(deadline)
        now = self._now()
        marks: list[tuple[float, int, str]] = []  # (when, 0 for the bank's marks, what)
        if clock.bank > 0:
            starts = deadline - clock.bank
            marks += [(starts - _BANK_MARK, 0, f"{_BANK_MARK} s of move time left, then your bank "
                                               f"({clock.bank:.0f} s)"),
                      (starts, 0, f"move time up: your bank runs, {clock.bank:.0f} s before a timeout forfeit")]
        marks += [(deadline - mark, 1, f"{mark} s left before a timeout forfeit") for mark in _FINAL_MARKS]
        kept: list[tuple[float, str]] = []
        for at, _, text in sorted(marks):
            if at - now >= _MARK_GAP and (not kept or at - kept[-1][0] >= _MARK_GAP):
                kept.append((at, text))
        return kept

    # -- drawing ---------------------------------------------------------------------------------------

    def _start(self, message: GameStart) -> None:
        self._seat = message.seat
        # "1:js", as --verbose labels seats: a name alone does not say where a player sits
        self._names = [f"{seat}:{visible(name)}" for seat, name in enumerate(message.names)]
        self._names[message.seat] += " (you)"
        self._trump_suit = message.view.trump_suit
        self._say(self._bold(f"{message.rules.variant}, {message.players} players, {message.rules.deck} cards; "
                             f"you are seat {message.seat}; dealer {self._names[message.dealer]}"))
        self._say(self._seating())

    def _seating(self) -> str:
        """The seats in turn order, and which way play passes (seeds/RULES.md 1: to the left, the next seat)."""
        ring = " -> ".join([*self._names, self._names[0]])
        return f"seating: {ring} (play passes to the left: each player attacks the next one with cards)"

    def _narrate(self, events: Sequence[AnyEvent]) -> None:
        for event in events:
            line = describe_event(event, self._names)
            if line is not None:
                self._say(line)

    def _draw(self, view: PlayerView, clock: ClockReading) -> None:
        trump = f"trump {self._card(view.trump)}" if view.trump else f"trump suit {self._suit(view.trump_suit)}"
        self._say(self._bold("-" * 60))
        if view.pile_limit is not None:  # Fool's Fool: one pile to beat
            top = " ".join(self._card(card) for card in view.pile) or "empty"
            self._say(f"{trump}   pile (discarded at {view.pile_limit}): {top}   discard {len(view.discard)}")
        else:
            self._say(f"{trump}   stock {view.stock}   discard {len(view.discard)}")
            pairs = "  ".join(f"{self._card(attack)}/{self._card(beat) if beat else '--'}"
                              for attack, beat in view.table)
            who = ""
            if view.attacker is not None and view.defender is not None:
                who = f" ({self._names[view.attacker]} attacks {self._names[view.defender]}" \
                      f"{', taking' if view.taking else ''})"
            self._say(f"table{who}: {pairs or 'empty'}")
        self._say("seats, in turn to the left:")
        for seat, size in enumerate(view.hand_sizes):
            known = f" (known: {' '.join(self._card(c) for c in view.known[seat])})" \
                if seat != self._seat and view.known[seat] else ""
            self._say(f"  {self._names[seat]}: {size} card{'' if size == 1 else 's'}{known}")
        hand = sorted_hand(view.hand, self._trump_suit)
        self._say(self._bold("your hand: ") + (" ".join(self._card(card) for card in hand) or "empty"))
        mover = self._names[view.to_move] if view.to_move is not None else "nobody"
        self._say(f"to move: {mover}   your clock: {clock.move_time:g} s a move, then a bank of {clock.bank:.0f} s")

    def _card(self, card: str | None) -> str:
        if card is None:
            return "--"
        if self.colour and card[1] in _RED_SUITS:
            return f"\x1b[31m{card}\x1b[0m"
        return card

    def _suit(self, suit: str) -> str:
        return f"\x1b[31m{suit}\x1b[0m" if self.colour and suit in _RED_SUITS else suit

    def _bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.colour else text

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")

    # -- input -----------------------------------------------------------------------------------------

    def _read_line(self, deadline: float, prompt: Callable[[], None], marks: list[tuple[float, str]]) -> str | None:
        """A line from ``fd`` by ``deadline``; None when the deadline passed or the person resigned. The end of
        input (a closed terminal, ssh gone) resigns: nobody is left to answer. Each of ``marks`` (consumed) that
        passes meanwhile is said on a line of its own, and the ``prompt`` is written again below it (what was
        typed so far stays in the terminal's line, to be finished)."""
        while b"\n" not in self._pending:
            now = self._now()
            left = deadline - now
            if left <= 0 or self._resigned is not None:
                return None
            if marks and marks[0][0] <= now:
                self._say("\n" + self._bold(f"! {marks.pop(0)[1]}"))
                prompt()
                continue
            wait = min(left, self._poll, marks[0][0] - now) if marks else min(left, self._poll)
            readable, _, _ = select.select([self.fd], [], [], wait)
            if not readable:
                continue
            chunk = os.read(self.fd, 4096)
            if not chunk:
                self.resign("end of input")
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", "replace")
