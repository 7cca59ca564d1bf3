"""Ctrl-C and SIGTERM in a run: raised like Ctrl-C while a run opens, only noted while its loop or its abandon runs.

Python runs signal handlers in the main thread only; elsewhere these managers change nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt."""


def stop_name(stop: KeyboardInterrupt) -> str:
    """How a progress line names the stop: ``SIGTERM`` or ``Ctrl-C``."""
    return "SIGTERM" if isinstance(stop, Terminated) else "Ctrl-C"


def stop_signal_number(stop: KeyboardInterrupt) -> int:
    """The signal that stopped the run (its exit code is 128 + it)."""
    return signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT


def _raise_stop(signum: int) -> None:
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


class NotedStops:
    """The stop signals that came while a :func:`noted_stop_signals` block ran, in order."""

    def __init__(self) -> None:
        self.signals: list[int] = []

    def note(self, signum: int) -> None:
        self.signals.append(signum)

    @property
    def any(self) -> bool:
        return bool(self.signals)

    def raise_if_noted(self) -> None:
        """Raise the first noted signal's stop (:class:`Terminated` or KeyboardInterrupt), if one came."""
        if self.signals:
            _raise_stop(self.signals[0])


@contextmanager
def _handled(signals: tuple[int, ...], handle: Callable[[int], None]) -> Iterator[None]:
    """``handle(signum)`` for ``signals`` until the block ends, then the previous handlers again."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        handle(signum)

    previous = {signum: signal.signal(signum, handler) for signum in signals}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops the run like Ctrl-C (:class:`Terminated`, a KeyboardInterrupt) until the block ends."""
    with _handled((signal.SIGTERM,), _raise_stop):
        yield


@contextmanager
def noted_stop_signals() -> Iterator[NotedStops]:
    """Ctrl-C and SIGTERM only noted until the block ends, for the block to act on where it is safe: shared by
    the coordinator's loop (:func:`deferred_stop_signals`) and the local executor's abandon of its workers."""
    stops = NotedStops()
    with _handled((signal.SIGINT, signal.SIGTERM), stops.note):
        yield stops


@contextmanager
def deferred_stop_signals() -> Iterator[Callable[[], None]]:
    """Ctrl-C and SIGTERM only noted while the coordinator's loop runs; the loop calls the yielded function at a
    safe point, which raises them (KeyboardInterrupt, :class:`Terminated`). Raised from a signal handler they
    could land inside a lock that a driving thread or the shutdown needs next (a future's condition, the
    batch queue's mutex) and hang the stop, or between a batch's storing and its counting."""
    with noted_stop_signals() as stops:
        yield stops.raise_if_noted
    stops.raise_if_noted()  # one that came as the loop ended is not lost
