"""Background threads at the lowest CPU priority: the daemon's replay publisher and its board's refit, a tournament
page's writer. On a host shared with the games being played (their workers pinned to cores) and the web server,
those come first. Shared by every layer (it imports nothing of the referee)."""

from __future__ import annotations

import contextlib
import os
import threading

#: The niceness of background work: the lowest.
BACKGROUND_NICENESS = 19


def as_background() -> None:
    """Lower the calling thread's CPU priority to :data:`BACKGROUND_NICENESS` (on Linux a thread has a nice value of
    its own; elsewhere, or where it is refused, nothing changes)."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BACKGROUND_NICENESS)
