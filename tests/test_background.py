"""Background threads (referee/background.py: the replay publisher, a tournament page's writer, the league's refit)
lower their own CPU priority, and only their own: the thread that started them keeps its niceness."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from referee.background import BACKGROUND_NICENESS, as_background


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own niceness is Linux's")
def test_a_background_thread_lowers_its_own_priority_only() -> None:
    seen: list[int] = []

    def work() -> None:
        as_background()
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [BACKGROUND_NICENESS] != [before]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
