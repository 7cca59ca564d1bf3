"""A league's bot store: each version's files, copied from its author's folder into a folder that only the daemon's
user may write (beside the database: ``league.db`` keeps them in ``league-bots/BOT/N``), and run only from there.

A version is a snapshot: what the folder held when it was added, never a link to it, so an author who changes the
folder later changes nothing the league plays. The folder is untrusted input, read as tournaments read a bot's
files (:mod:`referee.tournament.botfiles`): nothing is followed, a link of any kind is refused (it could name
``/etc/shadow`` or another bot's folder, read by the root process that copies), so are devices, FIFOs and
sockets, and the sizes and the count are capped.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from referee.tournament.botfiles import CAPS, BotFilesError, HashCaps, bot_files_sha256

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class SnapshotError(ValueError):
    """A bot folder that cannot be a version: one line naming the folder and what is wrong with it."""


@dataclass(frozen=True)
class Snapshot:
    """A version's copy in the store and the SHA-256 over its files (as tournaments identify a bot's files)."""

    dir: Path
    sha256: str


def store_root(db_path: Path) -> Path:
    """The league's bot store, beside its database."""
    return db_path.with_name(f"{db_path.stem}-bots")


def folder_problem(source: Path) -> str | None:
    """Why ``source`` cannot be a bot's folder (missing, not a folder, or holding a link), or None: the check a
    lifecycle command makes before it asks for anything, so that a bad folder is refused at once."""
    if source.is_symlink() or not source.is_dir():
        return f"no folder {str(source)!r}"
    try:
        _walk(source, None, CAPS)
    except SnapshotError as exc:
        return str(exc)
    return None


def folder_sha256(source: Path) -> str:
    """The SHA-256 over the folder's files, as its snapshot would have it (an update that changed nothing is
    refused before anything is copied). :raises SnapshotError: a cap is hit."""
    try:
        return bot_files_sha256(source, caps=CAPS)
    except (BotFilesError, OSError) as exc:
        raise SnapshotError(str(exc)) from None


def take_snapshot(source: Path, root: Path, bot: str, number: int, caps: HashCaps = CAPS) -> Snapshot:
    """Copy ``source`` into ``root/bot/number`` (made, mode 755 folders and 644 or 755 files, owned by this
    process's user) and hash the copy. Nothing is left behind on failure.

    :raises SnapshotError: the folder holds a link or a special file, or exceeds ``caps``.
    """
    target = root / bot / str(number)
    os.makedirs(root, mode=0o755, exist_ok=True)
    os.chmod(root, 0o755)  # others may enter (a bot's uid reads its own copy) but never write
    os.makedirs(target.parent, mode=0o755, exist_ok=True)
    if target.exists():  # a copy an interrupted add left: not a version, redone
        shutil.rmtree(target)
    os.mkdir(target, 0o755)
    try:
        _walk(source, target, caps)
        return Snapshot(target, folder_sha256(target))
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise


def remove_snapshot(snapshot: Path) -> None:
    shutil.rmtree(snapshot, ignore_errors=True)


def _walk(source: Path, target: Path | None, caps: HashCaps) -> None:
    """Check every entry under ``source`` through descriptors (nothing followed) and, with a ``target``, copy it
    there. :raises SnapshotError: a link, a special file, or a cap."""
    try:
        top = os.open(source, _DIR_FLAGS)
    except OSError as exc:
        raise SnapshotError(f"cannot read the bot folder {str(source)!r}: {exc.strerror}") from None
    budget = {"files": caps.files, "bytes": caps.total_bytes}
    try:
        _walk_dir(top, source, target, caps, budget)
    finally:
        os.close(top)


def _walk_dir(fd: int, where: Path, target: Path | None, caps: HashCaps, budget: dict[str, int]) -> None:
    for entry in sorted(os.scandir(fd), key=lambda e: e.name):
        path = where / entry.name
        if entry.is_symlink():
            raise SnapshotError(f"the bot folder holds a link, {str(path)!r}: copy what it points to instead "
                                "(a version is a snapshot of files)")
        budget["files"] -= 1
        if budget["files"] < 0:
            raise SnapshotError(f"the bot folder holds more than {caps.files} files (at {str(path)!r})")
        if entry.is_dir(follow_symlinks=False):
            child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            try:
                if target is not None:
                    os.mkdir(target / entry.name, 0o755)
                _walk_dir(child, path, None if target is None else target / entry.name, caps, budget)
            finally:
                os.close(child)
        elif entry.is_file(follow_symlinks=False):
            _copy_file(fd, entry.name, path, target, caps, budget)
        else:
            raise SnapshotError(f"the bot folder holds {str(path)!r}, which is no file or folder (a device, FIFO "
                                "or socket)")


def _copy_file(fd: int, name: str, path: Path, target: Path | None, caps: HashCaps, budget: dict[str, int]) -> None:
    source = os.open(name, _FILE_FLAGS, dir_fd=fd)
    try:
        info = os.fstat(source)
        if not stat.S_ISREG(info.st_mode):
            raise SnapshotError(f"the bot folder holds {str(path)!r}, which changed from a file while read")
        if info.st_size > caps.file_bytes:
            raise SnapshotError(f"{str(path)!r} is {info.st_size} bytes, over the {caps.file_bytes} a bot's file "
                                "may hold")
        budget["bytes"] -= info.st_size
        if budget["bytes"] < 0:
            raise SnapshotError(f"the bot folder holds over {caps.total_bytes} bytes (at {str(path)!r})")
        if target is None:
            return
        mode = 0o755 if info.st_mode & 0o111 else 0o644
        out = os.open(target / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        try:
            copied = 0
            while chunk := os.read(source, _CHUNK):
                copied += len(chunk)
                if copied > caps.file_bytes:  # grew while read (a sparse or growing file): the cap holds anyway
                    raise SnapshotError(f"{str(path)!r} grew past the {caps.file_bytes} bytes a bot's file may hold")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view):]
            os.fchmod(out, mode)
        finally:
            os.close(out)
    finally:
        os.close(source)
