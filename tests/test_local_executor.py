"""The local executor's shutdown when a run is cancelled (an SPRT decided, Ctrl-C): the batches no worker has
taken are dropped, whatever the driving threads take meanwhile. Beside six CPU hogs, ``durak sprt --jobs 2``
once raised ``queue.Empty`` from it: the queue was seen non-empty, then a driving thread took its last batch
before the drop did."""

from __future__ import annotations

import queue
from typing import Any

from referee.tournament.executors.local import LocalExecutor


class TakenMeanwhile(queue.Queue[Any]):
    """A queue whose last batch a driving thread takes between the shutdown's look and its take."""

    def __init__(self, batches: int) -> None:
        super().__init__()
        for n in range(batches):
            self.put(n)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if not block and self.qsize() == 1:
            super().get()  # the driving thread's take
        return super().get(block, timeout)


def executor_over(batches: queue.Queue[Any]) -> LocalExecutor:
    """An executor with no worker (none is needed to drop batches) over ``batches``."""
    executor = LocalExecutor.__new__(LocalExecutor)
    executor._batches = batches
    executor._workers = []
    executor._threads = []
    return executor


def test_a_cancelled_shutdown_drops_the_batches_left_though_a_thread_takes_the_last() -> None:
    batches = TakenMeanwhile(3)
    executor_over(batches).shutdown(cancel=True)
    assert batches.empty()


def test_control_the_queue_does_take_the_last_batch_from_under_a_drop() -> None:
    batches = TakenMeanwhile(1)
    assert not batches.empty()
    try:
        batches.get_nowait()
    except queue.Empty:
        return
    raise AssertionError("the last batch was there to take: the race is not staged")
