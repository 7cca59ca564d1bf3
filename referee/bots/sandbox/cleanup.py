"""Removing what a bot left behind, whatever it built: iterative (no recursion limit), bounded in entries and
time, never following a link, and never raising into the game that called it: a failure is logged."""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import time

LOGGER = logging.getLogger("durak")

#: Entries (files and folders) one removal may delete before it gives up and logs what is left.
MAX_ENTRIES = 1_000_000
#: Seconds one removal may take before it gives up.
MAX_SECONDS = 30.0

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_BATCH = 512  # names read from a folder before acting on them (the folder shrinks while it is read)


class _GiveUp(Exception):
    """The tree is larger, slower or stranger than a removal may bear."""


class _Budget:
    """What one removal may still spend: entries deleted, and time."""

    def __init__(self, entries: int, seconds: float) -> None:
        self.entries, self.deadline, self.limit = entries, time.monotonic() + seconds, entries

    def spend(self) -> None:
        self.entries -= 1
        if self.entries < 0 or time.monotonic() > self.deadline:
            raise _GiveUp(f"gave up after {self.limit - max(self.entries, 0)} entries (too many, or too slow)")


def remove_tree(path: str, *, max_entries: int = MAX_ENTRIES, max_seconds: float = MAX_SECONDS) -> bool:
    """Remove the folder ``path`` and everything in it; True if it is gone (or was never there).

    Works through file descriptors one folder at a time, so depth is no limit (a 5,000-deep chain is fine,
    though its paths exceed PATH_MAX), modes are no obstacle (folders are made writable first) and links
    are removed, never followed. Climbing back up checks each parent's identity, so a folder moved during
    the walk cannot lead it outside ``path``. Never raises: what it cannot remove is logged and left.
    """
    try:
        _remove(path, _Budget(max_entries, max_seconds))
    except FileNotFoundError:
        return True
    except (OSError, _GiveUp) as exc:
        LOGGER.warning("could not remove bot folder %s: %s", path, exc)
        return False
    return True


def _remove(path: str, budget: _Budget) -> None:
    fd = os.open(path, _DIR_FLAGS)
    # The folders from ``path`` down to the current one: the name each has in its parent, and its identity.
    trail: list[tuple[str, int, int]] = [("", *_identity(fd))]
    try:
        while True:
            with contextlib.suppress(OSError):
                os.fchmod(fd, 0o700)  # a bot may have made its folder unreadable or read-only
            child = _empty_out(fd, budget)
            if child is not None:  # go down into a subfolder and come back here once it is empty
                name, child_fd = child
                os.close(fd)
                fd = child_fd
                trail.append((name, *_identity(fd)))
                continue
            if len(trail) == 1:
                break
            name = trail.pop()[0]
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            if _identity(fd) != trail[-1][1:]:
                raise _GiveUp("a folder was moved while it was being removed")
            os.rmdir(name, dir_fd=fd)
            budget.spend()
    finally:
        os.close(fd)
    os.rmdir(path)


def _empty_out(fd: int, budget: _Budget) -> tuple[str, int] | None:
    """Unlink every non-folder in the open folder ``fd``; return the first subfolder (name, opened fd) met,
    or None once the folder is empty."""
    while True:
        with os.scandir(fd) as entries:
            batch = [entry.name for _, entry in zip(range(_BATCH), entries, strict=False)]
        if not batch:
            return None
        for name in batch:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                return name, os.open(name, _DIR_FLAGS, dir_fd=fd)
            os.unlink(name, dir_fd=fd)
            budget.spend()


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino
