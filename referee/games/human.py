"""A person's seat at the table: the human time control, and a :class:`Person` asked for each decision.

The seat is a :class:`referee.games.seat.Seat` like any bot: the match sends it the same messages it would send
a bot in that seat (the game start, each request with the seat's own view, the legal actions and the events as
that seat may see them, the game over), and the seat hands exactly those messages to its :class:`Person`. What a
person is shown is built from them alone, so a person can learn nothing a bot in that seat could not.

Where the person sits is the :class:`Person`'s business: a terminal (``referee.cli.terminal``), or a browser
whose relay passes the messages to a web server and its answers back. The seat owns the clock: a person who has
not answered by the deadline forfeits with a ``timeout`` verdict, as a bot does; one who resigns (Ctrl-C, a
button) forfeits with ``resigned``, on its turn or between moves.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from protocol.messages import GameOver, GameStart, Message, Request
from protocol.records import StderrChunk
from referee.bots.errors import BotError, BotTimeout

#: What a person is shown: the messages a bot in the seat would receive.
SeatMessage = GameStart | Request | GameOver


class Resigned(BotError):
    """The person gave up the game (Ctrl-C at the terminal, a resign button): a forfeit, verdict ``resigned``."""

    verdict = "resigned"


@dataclass(frozen=True, slots=True)
class HumanClock:
    """A person's time control: ``move_time`` seconds per decision, then a ``bank`` shared by a game's moves.

    The defaults give a person time to think; tests and quick games set them lower (``--human-time``,
    ``--human-bank``). A move that takes longer than ``move_time`` draws the rest from the bank; one that takes
    longer than both is a timeout. No grace and no strikes: a person's reply is not late by jitter.
    """

    move_time: float = 60.0
    bank: float = 300.0

    def __post_init__(self) -> None:
        if self.move_time <= 0:
            raise ValueError(f"a person's move time must be positive, not {self.move_time}")
        if self.bank < 0:
            raise ValueError(f"a person's time bank must not be negative, not {self.bank}")


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The seat's clock as a person is shown it: ``deadline`` (monotonic seconds) for a pending decision."""

    move_time: float
    bank: float
    deadline: float | None = None

    def left(self, now: float) -> float:
        """Seconds to the deadline (0 once past; the move time and bank without a pending decision)."""
        if self.deadline is None:
            return self.move_time + self.bank
        return max(0.0, self.deadline - now)

    def split(self, now: float) -> tuple[float, float]:
        """(move time left, bank left) at ``now``: a decision spends its move time first, then the bank, which
        :meth:`HumanSeat.ask` charges only for the time past the move time."""
        left = self.left(now)
        return max(0.0, left - self.bank), min(self.bank, left)


class Person(Protocol):
    """Someone at the table, wherever they sit (terminal, browser); it knows nothing of the rules or the clock's
    enforcement, and must not assume a terminal: it is shown messages and asked for answers.
    """

    def show(self, message: SeatMessage, clock: ClockReading) -> None:
        """A message the seat received (in order: the game start, each request, the game over), with the clock."""

    def choose(self, request: Request, deadline: float) -> str | None:
        """An answer to ``request``: one of ``request.legal`` (another string is asked again), or None when the
        monotonic ``deadline`` passed or the person resigned. Should return by the deadline: the seat judges
        the time taken whatever it returns."""

    def resigned(self) -> str | None:
        """Why the person gave up (``"Ctrl-C"``), asked at any moment; None while playing on."""


class HumanSeat:
    """A :class:`Person` at a seat, under a :class:`HumanClock`; ``now`` is monotonic (a test's fake clock)."""

    def __init__(self, name: str, person: Person, clock: HumanClock | None = None, *,
                 now: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.person = person
        self.clock = clock or HumanClock()
        self.move_times: list[float] = []
        self.strikes: list[int] = []  # always empty: a person has no grace to strike in
        self.bank = self.clock.bank
        self._now = now
        self._request_ids = itertools.count(1)

    def new_game(self) -> None:
        self.bank = self.clock.bank
        self.move_times = []

    def send_later(self, message: Message) -> None:
        """Shown at once: nothing to pause here, and the person sees the deal while the bots start."""
        if isinstance(message, GameStart | Request | GameOver):
            self.person.show(message, self.reading())

    def start(self) -> None:
        """A person needs no start-up."""

    def next_request_id(self) -> int:
        return next(self._request_ids)

    def time_for_move(self) -> float:
        return self.clock.move_time + self.bank

    def reading(self, deadline: float | None = None) -> ClockReading:
        return ClockReading(move_time=self.clock.move_time, bank=self.bank, deadline=deadline)

    def ask(self, request: Request, *, stderr_mark: int | None = None) -> str:
        """The person's legal answer, asked again after one that is not legal.

        :raises Resigned: the person resigned.
        :raises BotTimeout: no legal answer by the move time plus the bank.
        """
        allowed = self.time_for_move()
        sent = self._now()
        deadline = sent + allowed
        self.person.show(request, self.reading(deadline))
        while True:
            self._check_resigned()
            answer = self.person.choose(request, deadline)
            self._check_resigned()
            elapsed = self._now() - sent
            if elapsed > allowed or answer is None:
                raise BotTimeout(f"no answer before the deadline; move {len(self.move_times) + 1} had "
                                 f"{self.clock.move_time:g} s + {self.bank:.1f} s of bank")
            if answer in request.legal:
                break
        self.move_times.append(elapsed)
        self.bank = max(0.0, self.bank - max(0.0, elapsed - self.clock.move_time))
        return answer

    def _check_resigned(self) -> None:
        reason = self.person.resigned()
        if reason is not None:
            raise Resigned(reason)

    def resignation(self) -> str | None:
        return self.person.resigned()

    def mark_stderr(self, after: int) -> None:
        """A person writes no stderr."""

    def game_over(self, message: GameOver, *, offender: bool = False) -> None:
        self.person.show(message, self.reading())

    def stop(self, grace: float = 0.5) -> None:
        """Nothing to stop: the person's terminal or page is its own."""

    def take_stderr(self) -> list[StderrChunk]:
        return []
