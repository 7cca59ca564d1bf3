"""One bot child process: lines of bytes in and out over its pipes, under deadlines, with failures reported.

Synchronous by design: non-blocking pipe fds and one epoll selector per bot, since asyncio costs tens of
microseconds per round trip. Every wait also drains stderr (a bot blocked on a full stderr pipe would look
like a timeout) and watches a pidfd, which reports the bot's exit even while a grandchild holds its pipes.
The exited bot stays unreaped until ``close()``, so its pid, the id of its process group, cannot be reused
by another process while signals may still be sent to that group. Needs Linux 5.4 or later (pidfds).
How a bot is isolated (its uid, TMPDIR, PID namespace, sandbox) is the launcher's business: see
:mod:`referee.bots.sandbox.isolation`; here it only changes who gets the signals and whose CPU time is read.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable
from typing import IO, Self

from protocol.records import StderrChunk
from referee.bots.errors import BotCrashed, BotError, BotOutOfMemory, BotProtocolError, BotTimeout
from referee.bots.launched import LaunchedBot
from referee.bots.launcher import BotCommand, launch
from referee.bots.limits import ResourceLimits
from referee.bots.sandbox.isolation import PLAIN, Isolation
from referee.bots.stderr_log import StderrLog

_CHUNK = 64 * 1024  # the default pipe capacity: one read empties a full pipe
_EXIT_SETTLE = 0.05  # a bot whose pipe closed gets this long to exit, and so be judged crashed
_TERM_WAIT = 0.1  # how long close() waits after SIGTERM before SIGKILL
_MARK_READS = 16  # pipe reads at most when a mark (or a live view) takes what is waiting
_STDERR_LINES = 5  # stderr lines kept in a BotCrashed
_QUOTE = 200  # characters of the stderr line that states the error, quoted in a crash message


class BotProcess:
    """A running bot and its three pipes; use it as a context manager, so that it is always stopped.

    Not thread-safe: one thread drives a bot, and should be the thread that started it (see ``launch``).
    """

    def __init__(
        self,
        command: BotCommand,
        limits: ResourceLimits | None = None,
        *,
        max_line: int = 64 * 1024,
        stderr_cap: int = 64 * 1024,
        isolation: Isolation = PLAIN,
    ) -> None:
        """Launch the bot; ``max_line`` caps a line and all unread output in bytes, ``stderr_cap`` the log.

        ``isolation`` defaults to none, for the referee's own helpers; bots should get
        ``referee.bots.sandbox.isolation.DEFAULT`` (or the run's sandbox).
        """
        self.command = command
        self.isolation = isolation
        self.max_line = max_line
        self.stderr_log = StderrLog(stderr_cap)
        self._out = bytearray()  # stdout read but not yet returned
        self._stdout_eof = self._stderr_eof = self._exited = self._closed = False
        self._final_cpu: float | None = None
        with contextlib.ExitStack() as undo:
            self._poller = _Poller()
            undo.callback(self._poller.close)
            self._bot: LaunchedBot = launch(command, limits or ResourceLimits(), isolation)
            undo.callback(self._bot.release)  # last: TMPDIR and uid go once the bot is reaped
            self._popen = undo.enter_context(self._bot.popen)
            undo.callback(os.killpg, self._popen.pid, signal.SIGKILL)  # before the Popen's exit reaps it
            self._pidfd = os.pidfd_open(self._popen.pid)
            undo.callback(os.close, self._pidfd)
            self._pipes = _pipes(self._popen)
            self._stdin, self._stdout, self._stderr = (_nonblocking(pipe) for pipe in self._pipes)
            self._poller.register(self._stdout, select.EPOLLIN, self._read_stdout)
            self._poller.register(self._stderr, select.EPOLLIN, self._read_stderr)
            self._poller.register(self._pidfd, select.EPOLLIN, self._on_exit)
            undo.pop_all()

    @property
    def pid(self) -> int:
        """The bot's process id, which is also the id of its session and process group.

        Under a PID namespace it is the id of the wrapper that holds the namespace: the bot is its child.
        """
        return self._popen.pid

    @property
    def launched(self) -> LaunchedBot:
        """What the launcher set up for this bot: its uid, TMPDIR, PID namespace."""
        return self._bot

    def tree_cpu_ns(self) -> int | None:
        """CPU nanoseconds of the bot's whole tree so far (its control group's), or None where not accounted."""
        return self._bot.tree_cpu_ns()

    @property
    def returncode(self) -> int | None:
        """The exit code, or minus the number of the signal that killed the bot; None while it runs."""
        if self._popen.returncode is not None or self._closed:
            code = self._popen.returncode
            return None if code is None else self._bot.exit_code(code)
        status = os.waitid(os.P_PIDFD, self._pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        if status is None:
            return None
        return self._bot.exit_code(status.si_status if status.si_code == os.CLD_EXITED else -status.si_status)

    def describe_exit(self) -> str:
        """How the bot ended: "exit code 3", "killed by signal 9 (SIGKILL)", or "still running"."""
        code = self.returncode
        if code is None:
            return "still running"
        if code >= 0:
            return f"exit code {code}"
        return f"killed by signal {-code} ({_signal_name(-code)})"

    def write_line(self, data: bytes, deadline: float) -> None:
        """Send ``data`` and a newline, waiting no later than ``deadline`` for a bot that is slow to read."""
        self._require_open()
        if b"\n" in data:
            raise ValueError("a line for a bot must not contain a newline")
        line = memoryview(data + b"\n")
        sent = self._write(line)
        if sent < len(line):
            self._poller.register(self._stdin, select.EPOLLOUT, None)
            try:
                self._finish_write(line, sent, deadline)
            finally:
                self._poller.unregister(self._stdin)

    def read_line(self, deadline: float) -> bytes:
        """The bot's next line, without its newline and otherwise untouched; waits until ``deadline`` at most.

        Raises BotTimeout at the deadline (on ``time.monotonic()``), BotCrashed if the bot exited, and
        BotProtocolError for a line longer than ``max_line`` or a stdout closed by a living bot.
        """
        self._require_open()
        at_deadline = False
        while (line := self._take_line()) is None:
            if self._exited and self._read_stdout():
                continue  # what the bot wrote before it exited is still its output
            if self._stdout_eof or self._exited:
                raise self._lost("closed its stdout")
            if at_deadline:
                raise self._no_reply()
            at_deadline = time.monotonic() >= deadline  # then one last look, not waiting, before giving up
            self._pump(deadline)
        return line

    def exchange(self, request: bytes, timeout: float) -> tuple[bytes, float]:
        """Send a request and read one reply line, within ``timeout`` seconds for both.

        Returns the reply and the seconds from the start of the write to the reply's newline read. The
        clock starts before the write: a bot on the same core may run, and answer, inside the write call.
        """
        sent = time.monotonic()
        self.write_line(request, sent + timeout)
        reply = self.read_line(sent + timeout)
        return reply, time.monotonic() - sent

    def drain_pending(self) -> list[bytes]:
        """Every complete line the bot has sent unasked, taken without waiting; call it before a request."""
        self._require_open()
        self._pump(time.monotonic())
        lines = []
        while (line := self._take_line()) is not None:
            lines.append(line)
        return lines

    def mark_stderr(self, after: int, *, drain: bool = True) -> None:
        """Take what is in the stderr pipe now (unless the caller just has, ``drain=False``), then mark the log
        (:meth:`StderrLog.mark`): what the bot wrote before is told with the move before, what it writes
        after with the move to come."""
        if drain:
            self._drain_stderr()
        self.stderr_log.mark(after)

    def take_new_stderr(self) -> str:
        """What the bot wrote to stderr since the last call, for a live view (:meth:`StderrLog.take_new`)."""
        self._drain_stderr()
        return self.stderr_log.take_new()

    def _drain_stderr(self) -> None:
        for _ in range(_MARK_READS):  # bounded: a bot that is not paused may write on and on
            if self._closed or not self._read_stderr():
                break

    def take_stderr(self) -> list[StderrChunk]:
        """The stderr logged since launch or the last call, for one game's record; the log starts afresh."""
        chunks = self.stderr_log.chunks()
        self.stderr_log = StderrLog(self.stderr_log.cap, self.stderr_log.tail_cap)
        return chunks

    def pause(self) -> None:
        """Stop the bot's whole tree so that it cannot think on others' time: its control group frozen (the
        kernel finishes that on its own; :meth:`resume` checks it did), or else SIGSTOP to its group and every
        process of its PID namespace.

        :raises BotTimeout: the freeze could not be started. :raises BotOutOfMemory: one of its processes
            was killed for memory.
        """
        self._require_open()
        self._bot.pause()

    def resume(self) -> None:
        """Let a paused bot's tree run again.

        :raises BotTimeout: its tree was not frozen by now (within ``FREEZE_TIMEOUT``): it is judged.
        """
        self._require_open()
        self._bot.resume()

    def cpu_time(self) -> float:
        """User plus system CPU seconds of the bot's threads (not its children), to a clock tick (10 ms).

        Under a PID namespace, once the bot is closed: also the children it waited for.
        """
        if self._final_cpu is not None:
            return self._final_cpu
        return self._bot.cpu_seconds()

    def close(self, grace: float = 0.5) -> None:
        """Stop the bot and its process group, reap it and close every fd; a second call does nothing.

        The bot gets EOF on stdin and ``grace`` seconds to exit, then SIGTERM and a moment more, then its
        group gets SIGKILL. Its stdout is closed at once (nothing it says now is read), its stderr is logged.
        """
        if self._closed:
            return
        self._closed = True
        try:
            self._stop(grace)
        finally:
            self._poller.close()
            os.close(self._pidfd)
            for pipe in self._pipes:
                pipe.close()
            self._bot.release()  # its TMPDIR and uid, the bot being reaped

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<BotProcess pid={self.pid} {self.command.argv[0]!r} {self.describe_exit()}>"

    def _require_open(self) -> None:
        if self._closed:
            raise ValueError("the bot process is closed")

    def _pump(self, deadline: float) -> None:
        """Wait until some pipe is ready or the deadline passes, and service what is ready."""
        self._poller.service(max(deadline - time.monotonic(), 0.0))

    def _read_stdout(self) -> bool:
        """Buffer what the bot wrote to stdout; False if there was nothing (yet, or ever again)."""
        chunk = None if self._stdout_eof else _read_chunk(self._stdout)
        if chunk == b"":
            self._stdout_eof = True
            self._poller.unregister(self._stdout)
        if not chunk:
            return False
        self._out += chunk
        if len(self._out) > self.max_line + 1:  # room for one longest line and its newline
            raise self._overflow()
        return True

    def _read_stderr(self) -> bool:
        """Log what the bot wrote to stderr; False if there was nothing (yet, or ever again)."""
        chunk = None if self._stderr_eof else _read_chunk(self._stderr)
        if chunk == b"":
            self._stderr_eof = True
            self._poller.unregister(self._stderr)
        if not chunk:
            return False
        self.stderr_log.append(chunk)
        return True

    def _on_exit(self) -> None:
        self._exited = True
        self._poller.unregister(self._pidfd)

    def _take_line(self) -> bytes | None:
        end = self._out.find(b"\n")
        if end < 0:
            return None
        line = bytes(self._out[:end])
        del self._out[: end + 1]
        return line

    def _write(self, data: memoryview) -> int:
        try:
            return os.write(self._stdin, data)
        except BlockingIOError:
            return 0
        except BrokenPipeError:
            raise self._lost("closed its stdin") from None

    def _finish_write(self, line: memoryview, sent: int, deadline: float) -> None:
        at_deadline = False
        while sent < len(line):
            if self._exited:
                raise self._lost("stopped reading its stdin")
            if at_deadline:
                raise BotTimeout("bot did not read its input before the deadline")
            at_deadline = time.monotonic() >= deadline
            self._pump(deadline)
            sent += self._write(line[sent:])

    def _wait_for_exit(self, deadline: float) -> bool:
        while not self._exited and time.monotonic() < deadline:
            self._pump(deadline)
        return self._exited

    def _lost(self, what: str) -> BotError:
        """The error for a bot whose pipe closed: a crash once it has exited, else a protocol error."""
        if self._wait_for_exit(time.monotonic() + _EXIT_SETTLE):
            return self._crash()
        return BotProtocolError(f"bot {what}")

    def _crash(self) -> BotError:
        self._read_stderr()  # its last words may still be in the pipe
        tail = self.stderr_log.last_lines(_STDERR_LINES)
        message = f"bot exited: {self.describe_exit()}"
        stated = self.stderr_log.error_line()
        if stated is not None:
            message += f" (stderr: {stated[:_QUOTE]})"
        return self._memory_or(BotCrashed(message, tail))

    def _no_reply(self) -> BotError:
        detail = f"{len(self._out)} bytes without a newline" if self._out else "nothing received"
        return self._memory_or(BotTimeout(f"bot sent no line before the deadline ({detail})"))

    def _memory_or(self, error: BotError) -> BotError:
        """``error``, unless the kernel killed a process of the bot for memory: that is the verdict then."""
        try:
            self._bot.check_memory()
        except BotOutOfMemory as memory:
            return memory
        return error

    def _overflow(self) -> BotProtocolError:
        if self._out.find(b"\n", 0, self.max_line + 1) < 0:
            return BotProtocolError(f"bot sent a line longer than {self.max_line} bytes")
        return BotProtocolError(f"bot sent more than {self.max_line} bytes that were not asked for")

    def _signal_group(self, signum: signal.Signals) -> None:
        self._bot.signal(signum)

    def _stop(self, grace: float) -> None:
        self._signal_group(signal.SIGCONT)  # a paused bot could not exit
        self._bot.stopping()
        stdin, stdout, _ = self._pipes
        stdin.close()  # EOF: a well-behaved bot exits now
        if not self._stdout_eof:
            self._poller.unregister(self._stdout)
            self._stdout_eof = True
        stdout.close()
        if not self._wait_for_exit(time.monotonic() + grace):
            self._signal_group(signal.SIGTERM)
            self._wait_for_exit(time.monotonic() + _TERM_WAIT)
        self._signal_group(signal.SIGKILL)  # whatever else is left in the group
        os.waitid(os.P_PIDFD, self._pidfd, os.WEXITED | os.WNOWAIT)  # exited, and still unreaped:
        self._final_cpu = self._bot.final_cpu_seconds()  # its /proc entry is still there
        self._popen.wait()
        self._read_stderr()  # its last words may still be in the pipe


def _pipes(popen: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes], IO[bytes]]:
    assert popen.stdin and popen.stdout and popen.stderr, "launch() pipes all three"
    return popen.stdin, popen.stdout, popen.stderr


def _nonblocking(pipe: IO[bytes]) -> int:
    fd = pipe.fileno()
    os.set_blocking(fd, False)
    return fd


class _Poller:
    """epoll over the bot's fds, each with its handler (None: the caller retries what it waited for)."""

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._handlers: dict[int, Callable[[], object] | None] = {}

    def register(self, fd: int, events: int, handler: Callable[[], object] | None) -> None:
        self._epoll.register(fd, events)
        self._handlers[fd] = handler

    def unregister(self, fd: int) -> None:
        self._epoll.unregister(fd)
        del self._handlers[fd]

    def service(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for a ready fd, and call the handlers of those ready."""
        for fd, _ in self._epoll.poll(timeout):
            handler = self._handlers.get(fd)
            if handler is not None:
                handler()

    def close(self) -> None:
        self._epoll.close()


def _read_chunk(fd: int) -> bytes | None:
    """Up to a pipe's worth of bytes; None if none are there yet, b"" at end of file."""
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return None


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "unknown signal"
