"""A bot as the game sees it: the handshake, decisions under a clock, game over, shutdown.

It speaks the messages of :mod:`protocol.messages` over a :class:`BotProcess` and knows
nothing of the rules: the match hands it views and legal-action strings, it returns the
bot's chosen string and how long the bot took. Messages that need no reply are queued and
written with the bot's next request (or game over), so a bot that is not being asked (and
may be paused) is never written to mid-game.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable

import msgspec

from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    GameOver,
    Hello,
    Message,
    Reply,
    Request,
    Shutdown,
    bot_decoder,
    encoder,
)
from protocol.records import StderrChunk
from referee import __version__
from referee.bots.errors import BotError, BotProtocolError, BotTimeout
from referee.bots.launcher import BotCommand
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.process import BotProcess
from referee.bots.sandbox.isolation import PLAIN, Isolation

_GAME_OVER_WRITE_TIME = 1.0  # seconds a bot gets to accept its game-over line
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
#: A bot whose tree used at least this share of a core over a missed deadline was busy computing (a JIT compiling,
#: a search too deep); at most :data:`IDLE_SHARE`, it was waiting (on a reply stuck in its stdout buffer, say).
BUSY_SHARE = 0.5
IDLE_SHARE = 0.1


class BotClient:
    """One bot program, started on demand and kept across games until it fails or is closed."""

    def __init__(self, name: str, command: BotCommand, *, limits: ResourceLimits | None = None,
                 time_control: TimeControl | None = None, isolation: Isolation = PLAIN,
                 now: Callable[[], float] = time.monotonic) -> None:
        """``time_control`` also says whether the bot is frozen between its turns (``pause``); ``now`` is the
        referee's monotonic clock, which only a test with a fake process replaces."""
        self.name = name
        self.command = command
        self.limits = limits or ResourceLimits()
        self.clock = time_control or TimeControl()
        self.isolation = isolation
        self.hello: BotHello | None = None  # the bot's handshake reply, once started
        self.move_times: list[float] = []  # seconds per decision in the current game
        self.strikes: list[int] = []  # the current game's moves (1 = its first) answered inside the grace
        self.starts = 0  # how many processes were started for this bot
        self.last_stderr: list[StderrChunk] = []  # what the last process stopped wrote and nobody took yet
        self._process: BotProcess | None = None
        self._queue: list[bytes] = []
        self._bank = 0.0
        self._now = now
        # Request ids count this bot's own requests over its whole life: a stale reply never matches a
        # later request, and the ids reveal nothing of how often the others were asked.
        self._request_ids = itertools.count(1)

    def next_request_id(self) -> int:
        return next(self._request_ids)

    @property
    def is_running(self) -> bool:
        return self._process is not None

    def mark_stderr(self, after: int) -> None:
        """What the bot writes to stderr from now on belongs beside ``events[after:]`` of its game (the match
        marks each of the bot's moves, and the game's end)."""
        if self._process is not None:
            self._process.mark_stderr(after)

    def take_new_stderr(self) -> str:
        """What the bot wrote to stderr since the last call, for a live view; the game's record keeps it too."""
        return self._process.take_new_stderr() if self._process is not None else ""

    def take_stderr(self) -> list[StderrChunk]:
        """The (capped) stderr the bot wrote since the last call, also from a process stopped since."""
        chunks, self.last_stderr = self.last_stderr, []
        if self._process is not None:
            chunks += self._process.take_stderr()
        return chunks

    def start(self) -> BotHello:
        """Launch the bot (if it is not running) and complete the handshake within the startup time.

        :raises BotError: the bot could not be started, or its handshake was late or wrong.
        """
        if self._process is not None and self.hello is not None:
            return self.hello
        self.starts += 1
        self._process = BotProcess(self.command, self.limits, isolation=self.isolation)
        try:
            hello = Hello(protocol=PROTOCOL_VERSION, referee=f"durak-referee {__version__}",
                          time_ms=int(self.clock.startup_time * 1000))
            started = time.monotonic()
            try:
                line, _ = self._process.exchange(encoder.encode(hello), self.clock.startup_time + self.clock.grace)
            except BotTimeout as exc:
                raise BotTimeout(f"{exc.reason}; the handshake {self._allowed(self.clock.startup_time)}"
                                 f"{self._cpu_spent(0, time.monotonic() - started)}") from None
            reply = self._decode(line)
            if not isinstance(reply, BotHello):
                raise BotProtocolError("expected a hello reply to the handshake, got an action")
            if reply.protocol != PROTOCOL_VERSION:
                raise BotProtocolError(f"the bot speaks protocol {reply.protocol}; "
                                       f"this referee speaks protocol {PROTOCOL_VERSION}")
        except BotError:
            self.stop()
            raise
        self.hello = reply
        self._set_paused(True)
        return reply

    def new_game(self) -> None:
        """Reset the per-game clock: the time bank is full again, and no strikes."""
        self._bank = self.clock.time_bank or 0.0
        self.move_times = []
        self.strikes = []
        self._queue = []

    def send_later(self, message: Message) -> None:
        """Queue a message that needs no reply; it goes out with the next request or game over."""
        self._queue.append(encoder.encode(message))

    def resignation(self) -> str | None:
        """A bot never resigns: it forfeits only by a verdict on its replies (a person's seat may resign)."""
        return None

    def time_for_move(self) -> float:
        """Seconds the bot may use on its next decision: the move time plus what is left in its bank."""
        return self.clock.move_time + self._bank

    def ask(self, request: Request, *, stderr_mark: int | None = None) -> str:
        """Send ``request`` (after any queued messages) and return the action string the bot chose. With
        ``stderr_mark``, what the bot writes to stderr from now on is marked so (:meth:`mark_stderr`).

        :raises BotError: timeout (no reply by the deadline, or the last of ``clock.strikes`` replies
            inside the grace), crash, or a protocol error (not JSON, wrong shape, wrong id, a line the
            bot sent unasked).
        """
        process = self._running()
        allowed = self.time_for_move()
        self._set_paused(False)
        cpu_before = process.tree_cpu_ns()  # a timeout's reason says how busy the bot was meanwhile
        unasked = process.drain_pending()  # which also takes in what waits on its stderr
        if stderr_mark is not None:
            process.mark_stderr(stderr_mark, drain=False)
        if unasked:
            raise BotProtocolError(f"sent a line nobody asked for: {_quote(unasked[0])}")
        sent = self._now()
        deadline = sent + allowed + self.clock.grace
        try:
            for line in self._queue:
                process.write_line(line, deadline)
            self._queue = []
            payload = encoder.encode(request)
            sent = self._now()  # before the write: on one core the bot may run, and answer, inside it
            process.write_line(payload, sent + allowed + self.clock.grace)
            answer = process.read_line(sent + allowed + self.clock.grace)
        except BotTimeout as exc:
            raise BotTimeout(f"{exc.reason}; move {len(self.move_times) + 1} {self._allowed(allowed)}"
                             f"{self._cpu_spent(cpu_before, self._now() - sent)}") from None
        elapsed = self._now() - sent
        self._set_paused(True)
        self.move_times.append(elapsed)
        self._bank = max(0.0, self._bank - max(0.0, elapsed - self.clock.move_time))
        if elapsed > allowed:
            self._strike(elapsed, allowed)
        reply = self._decode(answer)
        if not isinstance(reply, Reply):
            raise BotProtocolError(f"expected an action reply to request {request.id}, got a hello")
        if reply.id != request.id:
            raise BotProtocolError(f"replied to request {reply.id} while request {request.id} was asked")
        return reply.action

    def _allowed(self, seconds: float) -> str:
        """"had 1000 ms + 50 ms grace": the limit a timeout reason names."""
        return f"had {seconds * 1000:.0f} ms + {self.clock.grace * 1000:.0f} ms grace"

    def _cpu_spent(self, before_ns: int | None, wall: float) -> str:
        """"; its processes used 312 ms of CPU in those 1050 ms: busy, still computing": the CPU time of the bot's
        tree (its control group's) over the ``wall`` seconds of a missed move or handshake that began at
        ``before_ns``, and whether that is a bot still computing or one waiting; a hint to flush where it cannot be
        told (no CPU accounting by group here)."""
        now = self._process.tree_cpu_ns() if self._process is not None else None
        if now is None or before_ns is None:
            return "; its CPU time is unknown here (is stdout flushed after each line?)"
        used = max(0, now - before_ns) / 1e9
        figure = f"; its processes used {used * 1000:.0f} ms of CPU in those {wall * 1000:.0f} ms"
        share = used / wall if wall > 0 else 0.0
        if share >= BUSY_SHARE:
            return f"{figure}: busy, still computing at the deadline"
        if share <= IDLE_SHARE:
            return f"{figure}: idle, waiting (is stdout flushed after each line?)"
        return f"{figure}: partly idle (slowed down, or waiting on something?)"

    def _strike(self, elapsed: float, allowed: float) -> None:
        """A reply after the time allowed but inside the grace is a strike; the ``clock.strikes``-th in
        one game is a timeout (CodinGame's rule: the grace absorbs jitter, not a bot's habit)."""
        move = len(self.move_times)
        self.strikes.append(move)
        if len(self.strikes) >= self.clock.strikes:
            count = len(self.strikes)
            nth = _ORDINALS[count - 1] if count <= len(_ORDINALS) else f"{count}th"
            raise BotTimeout(f"{nth} reply inside the grace (strikes at moves "
                             f"{', '.join(map(str, self.strikes))}; move {move} took {elapsed * 1000:.0f} ms "
                             f"of {allowed * 1000:.0f} ms allowed)")

    def game_over(self, message: GameOver, *, offender: bool = False) -> None:
        """Deliver the game's end and any queued events; a bot that cannot take them is stopped
        (at once if it is the game's ``offender``, which is stopped anyway)."""
        if self._process is None:
            return
        self._queue.append(encoder.encode(message))
        try:
            self._set_paused(False)
            deadline = time.monotonic() + _GAME_OVER_WRITE_TIME
            for line in self._queue:
                self._process.write_line(line, deadline)
            self._set_paused(True)
        except BotError:
            self.stop(grace=0.0 if offender else 0.5)
        self._queue = []

    def stop(self, grace: float = 0.5) -> None:
        """Ask the bot to exit (shutdown message), then make sure it does; safe to call twice."""
        process, self._process, self.hello = self._process, None, None
        if process is None:
            return
        try:
            process.resume()
            process.write_line(encoder.encode(Shutdown(grace_ms=int(grace * 1000))), time.monotonic() + 0.1)
        except (BotError, OSError, ValueError):
            pass  # it is going down anyway
        process.close(grace)
        self.last_stderr += process.take_stderr()

    def move_time_summary(self) -> tuple[float, float] | None:
        """Median and max seconds per decision in the current game, or None without decisions."""
        if not self.move_times:
            return None
        return statistics.median(self.move_times), max(self.move_times)

    def _running(self) -> BotProcess:
        if self._process is None:
            raise RuntimeError(f"bot {self.name!r} is not running: call start() first")
        return self._process

    def _set_paused(self, paused: bool) -> None:
        if self.clock.pause and self._process is not None:
            if paused:
                self._process.pause()
            else:
                self._process.resume()

    @staticmethod
    def _decode(line: bytes) -> BotHello | Reply:
        try:
            return bot_decoder.decode(line)
        except msgspec.DecodeError as exc:  # ValidationError is a DecodeError too
            raise BotProtocolError(f"invalid message {_quote(line)}: {exc}") from None
        except RecursionError:
            raise BotProtocolError(f"invalid message {_quote(line)}: nested too deeply") from None


def _quote(line: bytes, limit: int = 80) -> str:
    text = line[:limit].decode("utf-8", "replace")
    return repr(text + ("..." if len(line) > limit else ""))
