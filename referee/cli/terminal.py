"""A person at a terminal (``durak play --human SEAT``): the :class:`referee.games.human.Person` that draws the
table and reads the answers.

Everything drawn comes from the messages the seat received (its own view, the legal actions, the events as the
seat may see them), never from the game itself: the screen cannot show what a bot in that seat would not know.
Input is read with select() on stdin up to the seat's deadline, so the clock holds while the person thinks;
Ctrl-C (SIGINT) is a resignation, which the seat turns into the ``resigned`` verdict.
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


def colours_wanted(stream: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Colours only on a terminal that shows them, and never where NO_COLOR (https://no-color.org) is set."""
    env = os.environ if environ is None else environ
    return stream.isatty() and env.get("TERM", "dumb") != "dumb" and not env.get("NO_COLOR")


class TerminalPerson:
    """Draws the seat's table on ``out`` after each message and reads answers from the file descriptor ``fd``.

    ``rules_summary`` is what ``?`` prints. ``now`` is monotonic, as the seat's deadline.
    """

    def __init__(self, out: TextIO, fd: int, rules_summary: str, *, colour: bool = False,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.out = out
        self.fd = fd
        self.rules_summary = rules_summary
        self.colour = colour
        self._now = now
        self._names: list[str] = []
        self._seat = 0
        self._trump_suit = ""
        self._pending = b""
        self._resigned: str | None = None

    # -- Person ----------------------------------------------------------------------------------------

    def show(self, message: SeatMessage, clock: ClockReading) -> None:
        if isinstance(message, GameStart):
            self._start(message)
            self._draw(message.view, clock, turn=False)
        elif isinstance(message, Request):
            self._narrate(message.events)
            self._draw(message.view, clock, turn=True)
            for number, action in enumerate(message.legal, 1):
                self._say(f"  {number:>2}. {action}")
        elif isinstance(message, GameOver):
            self._narrate(message.events)
            self._say(self._bold("game over: " + describe_result(message.result, self._names)))
        self.out.flush()

    def choose(self, request: Request, deadline: float) -> str | None:
        """Read a number, an action string or ``?``; a wrong entry gets one line and the same question."""
        legal = request.legal
        while self._resigned is None:
            left = deadline - self._now()
            if left <= 0:
                return None
            self.out.write(f"your move [1-{len(legal)}, an action, ? for the rules; {left:.0f} s]: ")
            self.out.flush()
            line = self._read_line(deadline)
            if line is None:
                return None
            answer = line.strip()
            if answer == "?":
                self._say(self.rules_summary)
                continue
            if answer.isdigit() and 1 <= int(answer) <= len(legal):
                return legal[int(answer) - 1]
            chosen = next((action for action in legal if action.lower() == " ".join(answer.lower().split())), None)
            if chosen is not None:
                return chosen
            self._say(f"not a legal answer: {visible(answer)!r}; type 1-{len(legal)}, an action as listed, or ?")
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

    # -- drawing ---------------------------------------------------------------------------------------

    def _start(self, message: GameStart) -> None:
        self._seat = message.seat
        self._names = [visible(name) for name in message.names]
        self._names[message.seat] += " (you)"
        self._trump_suit = message.view.trump_suit
        self._say(self._bold(f"{message.rules.variant}, {message.players} players, {message.rules.deck} cards; "
                             f"you are seat {message.seat}; dealer {self._names[message.dealer]}"))

    def _narrate(self, events: Sequence[AnyEvent]) -> None:
        for event in events:
            line = describe_event(event, self._names)
            if line is not None:
                self._say(line)

    def _draw(self, view: PlayerView, clock: ClockReading, *, turn: bool) -> None:
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
        for seat, size in enumerate(view.hand_sizes):
            if seat != self._seat:
                known = f" (known: {' '.join(self._card(c) for c in view.known[seat])})" if view.known[seat] else ""
                self._say(f"  {self._names[seat]}: {size} card(s){known}")
        hand = sorted_hand(view.hand, self._trump_suit)
        self._say(self._bold("your hand: ") + (" ".join(self._card(card) for card in hand) or "empty"))
        mover = self._names[view.to_move] if view.to_move is not None else "nobody"
        self._say(f"to move: {mover}   your clock: {clock.move_time:g} s a move + bank {clock.bank:.0f} s"
                  + (f", {clock.left(self._now()):.0f} s left" if turn else ""))

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

    def _read_line(self, deadline: float) -> str | None:
        """A line from ``fd`` by ``deadline``; None when the deadline passed or the person resigned. The end of
        input (a closed terminal, ssh gone) resigns: nobody is left to answer."""
        while b"\n" not in self._pending:
            left = deadline - self._now()
            if left <= 0 or self._resigned is not None:
                return None
            readable, _, _ = select.select([self.fd], [], [], min(left, _POLL))
            if not readable:
                continue
            chunk = os.read(self.fd, 4096)
            if not chunk:
                self.resign("end of input")
                return None
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", "replace")
