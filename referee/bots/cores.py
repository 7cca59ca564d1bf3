"""Which core a game's referee and its bots run on: one core of their own, claimed across every referee of the
machine, as a tournament gives each game (``durak play`` and ``check-bot`` test a bot the way it will play)."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
from collections.abc import Iterator

LOGGER = logging.getLogger("durak")


def claim_core() -> tuple[int, int | None]:
    """A core of this process's for a new game's referee, and the lock file's descriptor that holds it (close it to
    give the core back).

    Every referee that claims one (Dask workers' referees of any run, ``durak play``, ``check-bot``) takes a lock
    on ``$TMPDIR/durak-cores-<uid>/<core>``; with every core held, cores are shared (a warning says so), as
    ``--jobs`` beyond the cores does locally.
    """
    cores = sorted(os.sched_getaffinity(0))
    folder = os.path.join(tempfile.gettempdir(), f"durak-cores-{os.geteuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    for core in cores:
        fd = os.open(os.path.join(folder, str(core)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return core, fd
        except BlockingIOError:
            os.close(fd)
    core = cores[os.getpid() % len(cores)]
    LOGGER.warning("every core of this machine holds a referee: games will share core %d", core)
    return core, None


@contextlib.contextmanager
def one_core() -> Iterator[int]:
    """Hold the calling thread, and so the bots it launches (their control group's cpuset is the launching
    thread's cores), to one claimed core for the block; its affinity and the claim are given back after."""
    before = os.sched_getaffinity(0)
    core, lock = claim_core()
    try:
        os.sched_setaffinity(0, {core})
        yield core
    finally:
        os.sched_setaffinity(0, before)
        if lock is not None:
            os.close(lock)
