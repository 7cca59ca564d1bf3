"""A league's bot store: each version's files, copied from its author's folder into a folder that only the daemon's
user may write (beside the database: ``league.db`` keeps them in ``league-bots/BOT/N``), and run only from there.

The store is the only place the daemon takes files from. A folder on the host enters it by the organizer's own
command (``durak league add/update --dir``), which copies it into the store's staging area (``.staged/NAME``,
:func:`stage_folder`) as the organizer and names the copy in its request; an upload is extracted into
``.uploads/ID`` by the daemon. The database and its folder are writable by the web server's user, so the store is
checked before every use (:func:`checked_store`): a folder owned by the daemon's user that no one else may write,
and never a link.

A version is a snapshot: what the folder held when it was added, never a link to it, so an author who changes the
folder later changes nothing the league plays. The folder is untrusted input, read as tournaments read a bot's
files (:mod:`referee.tournament.botfiles`): nothing is followed, a link of any kind is refused (it could name
``/etc/shadow`` or another bot's folder, read by the root process that copies), so are devices, FIFOs and
sockets, and the sizes and the count are capped.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from referee.results.league_store import bot_store
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


#: The store's staging area for folders the organizer's commands copy in, and the form of a staged copy's name.
STAGED = ".staged"
_STAGED_NAME = re.compile(r"[0-9a-f]{32}")
#: How old a staged copy that no pending request names may grow before the daemon removes it.
STAGED_MAX_AGE = 3600.0


def store_root(db_path: Path) -> Path:
    """The league's bot store, beside its database."""
    return bot_store(db_path)


def checked_store(root: Path, *, create: bool = True) -> Path:
    """``root``, made if missing (mode 755) and checked as the daemon's own: a folder (not a link) owned by this
    process's user that neither its group nor others may write. Its parent, the database's folder, is writable by
    the web server's user, who could otherwise have made the store first, or a link in its place.

    :raises SnapshotError: it is not so (one line naming it).
    """
    if create:
        try:
            os.mkdir(root, 0o755)
        except FileExistsError:
            pass
        except OSError as exc:
            raise SnapshotError(f"cannot make the bot store {str(root)!r}: {exc.strerror}") from None
    check_own_folder(root, "the bot store", 0o022)
    return root


def check_own_folder(folder: Path, what: str, forbidden: int) -> None:
    """:raises SnapshotError: ``folder`` is a link, no folder, another user's, or has a ``forbidden`` mode bit."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise SnapshotError(f"{what} {str(folder)!r} cannot be used: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise SnapshotError(f"{what} {str(folder)!r} is no folder (a link is never followed): remove it")
    if info.st_uid != os.geteuid() or info.st_mode & forbidden:
        raise SnapshotError(f"{what} {str(folder)!r} is not this user's own (owner uid {info.st_uid}, mode "
                            f"{stat.S_IMODE(info.st_mode):o}): another user may have made it; remove it")


def stage_folder(source: Path, root: Path, caps: HashCaps = CAPS) -> str:
    """Copy a bot's folder on the host into the store's staging area, as this process's user (the organizer's
    ``durak league add/update``), and return the copy's name for the request. Nothing is left on failure.

    :raises SnapshotError: the store is not ours, or the folder holds a link or a special file, or exceeds ``caps``.
    """
    area = _staging_area(checked_store(root))
    name = secrets.token_hex(16)
    target = area / name
    os.mkdir(target, 0o755)
    try:
        _walk(source, target, caps)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return name


def staged_folder(root: Path, name: str) -> Path:
    """The staged copy a request names, checked: a name of the staged form, in the store's own staging area, a
    folder of this user's (never a link).

    :raises SnapshotError: no such copy, or not of that form.
    """
    if not _STAGED_NAME.fullmatch(name):
        raise SnapshotError(f"no staged folder {name[:40]!r} in the bot store")
    area = _staging_area(checked_store(root, create=False), create=False)
    folder = area / name
    try:
        check_own_folder(folder, "the staged folder", 0o022)
    except SnapshotError:
        raise SnapshotError(f"no staged folder {name!r} in the bot store (durak league add/update copies one; "
                            "ask again with the command)") from None
    return folder


def remove_staged(root: Path, name: str) -> None:
    if _STAGED_NAME.fullmatch(name):
        shutil.rmtree(root / STAGED / name, ignore_errors=True)


def prune_staged(root: Path, keep: Collection[str], max_age: float = STAGED_MAX_AGE) -> list[str]:
    """Remove the staged copies that no pending request names (``keep``) and that are older than ``max_age``
    seconds (a command that died between its copy and its request); their names. Nothing is removed unless the
    store and its staging area are this user's own (never through a link another user planted)."""
    try:
        area = _staging_area(checked_store(root, create=False), create=False)
        names = os.listdir(area)
    except (SnapshotError, OSError):
        return []
    pruned = []
    for name in names:
        try:
            old = time.time() - os.lstat(area / name).st_mtime > max_age
        except OSError:
            continue
        if name not in keep and old:
            shutil.rmtree(area / name, ignore_errors=True)
            pruned.append(name)
    return pruned


def _staging_area(root: Path, *, create: bool = True) -> Path:
    area = root / STAGED
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(area, 0o700)
    check_own_folder(area, "the bot store's staging area", 0o077)
    return area


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
    if bot.startswith(".") or "/" in bot:  # the league's name rule says so too: a belt to its braces
        raise SnapshotError(f"bad bot name {bot!r} for the bot store")
    target = root / bot / str(number)
    checked_store(root)  # others may enter (a bot's uid reads its own copy) but never write
    try:
        os.mkdir(target.parent, 0o755)
    except FileExistsError:
        check_own_folder(target.parent, "the bot's folder in the store", 0o022)
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
