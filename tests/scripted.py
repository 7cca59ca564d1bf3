"""An in-memory bot double for the match layer: duck-types ``referee.bots.session.BotClient`` as
``referee.games.match`` uses it, answers from a policy or a script, and raises a chosen bot error at a
chosen decision, so that the match's forfeit rules are tested in milliseconds, without processes."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from protocol.messages import GameOver, GameStart, Message, Request
from protocol.records import StderrChunk
from referee.bots.errors import BotError

Policy = Callable[[Request], str]
M = TypeVar("M")


def first_legal(request: Request) -> str:
    """The policy of a deterministic bot: the first action the request lists."""
    return request.legal[0]


@dataclass(frozen=True)
class Fault:
    """Raise ``error`` instead of answering decision ``move`` (1-based, per game) of game ``game`` (1-based,
    counted by ``new_game``); ``move=0`` fails the handshake (:meth:`ScriptedBot.start`) of that game."""

    error: BotError
    move: int
    game: int = 1


@dataclass
class ScriptedBot:
    """A bot that plays ``script`` (action strings, in order; ``None`` defers to ``policy``), then ``policy``.

    Like ``BotClient``: ``start`` starts it only when it is not running (``starts`` counts the starts), a
    stopped bot is not sent its game over, and ``stop`` may be called twice. ``received`` holds every message
    delivered, in order (queued ones go out with the next request or game over, as BotClient sends them).
    """

    name: str
    policy: Policy = first_legal
    script: Sequence[str | None] = ()
    faults: Sequence[Fault] = ()
    received: list[Message] = field(default_factory=list)
    stops: list[float] = field(default_factory=list)  # the grace of every stop, running or not
    starts: int = 0
    games: int = 0
    running: bool = False
    move_times: list[float] = field(default_factory=list)
    strikes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue: list[Message] = []
        self._ids = itertools.count(1)
        self._script: list[str | None] = []

    # -- what play_game calls ------------------------------------------------------------------------

    def new_game(self) -> None:
        self.games += 1
        self.move_times, self.strikes, self._queue = [], [], []
        self._script = list(self.script)

    def send_later(self, message: Message) -> None:
        self._queue.append(message)

    def start(self) -> None:
        if self.running:
            return
        self.starts += 1
        self.running = True
        fault = self._fault(0)
        if fault is not None:
            self.stop()  # as BotClient does when its handshake fails
            raise fault

    def next_request_id(self) -> int:
        return next(self._ids)

    def time_for_move(self) -> float:
        return 1.0

    def resignation(self) -> str | None:
        return None

    def ask(self, request: Request, *, stderr_mark: int | None = None) -> str:
        assert self.running, f"{self.name} was asked while not running"
        self._deliver(request)
        fault = self._fault(len(self.move_times) + 1)
        if fault is not None:
            raise fault
        self.move_times.append(0.001)
        action = self._script.pop(0) if self._script else None
        return action if action is not None else self.policy(request)

    def game_over(self, message: GameOver, *, offender: bool = False) -> None:
        if self.running:
            self._deliver(message)
        self._queue = []

    def stop(self, grace: float = 0.5) -> None:
        self.stops.append(grace)
        self.running = False

    def mark_stderr(self, after: int) -> None:
        pass

    def take_stderr(self) -> list[StderrChunk]:
        return []

    # -- for the tests ----------------------------------------------------------------------------------

    def of_type(self, kind: type[M]) -> list[M]:
        """The messages of one type this bot received, in order."""
        return [message for message in self.received if isinstance(message, kind)]

    @property
    def game_overs(self) -> list[GameOver]:
        return self.of_type(GameOver)

    @property
    def game_starts(self) -> list[GameStart]:
        return self.of_type(GameStart)

    def _deliver(self, message: Message) -> None:
        self.received += [*self._queue, message]
        self._queue = []

    def _fault(self, move: int) -> BotError | None:
        return next((f.error for f in self.faults if f.game == self.games and f.move == move), None)


class QuietProcess:
    """The half of ``BotProcess`` that a stand-in process whose bot never strays needs no more of: nothing waits
    unasked, no CPU is accounted (no timeout is ever judged busy or idle), pausing and closing do nothing, no
    stderr. A stand-in subclasses it and writes ``exchange``, ``write_line`` and ``read_line``; one place to
    follow ``BotProcess``'s interface when it grows."""

    def drain_pending(self) -> list[bytes]:
        return []

    def tree_cpu_ns(self) -> int | None:
        return None

    def pause(self) -> None: ...

    def resume(self) -> None: ...

    def close(self, grace: float = 0.5) -> None: ...

    def take_stderr(self) -> list[StderrChunk]:
        return []

    def mark_stderr(self, after: int, *, drain: bool = True) -> None: ...
