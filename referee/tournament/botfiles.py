"""What identifies a bot: a SHA-256 over its folder's files, read the way untrusted input must be read.

A bot's folder is the entrant's: it may hold links to ``/proc/self/pagemap`` or ``/dev/zero``, a sparse
file of terabytes, a FIFO, or a million files. So links are never followed (a link counts by the text of
its target), only regular files are read, through descriptors opened below the folder's own descriptor
(no path is resolved twice), and the sizes, the file count and the time are capped: a cap hit is one
line naming the bot and the file (:class:`BotFilesError`), never a hang.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20
#: Folders and file suffixes :func:`bot_files_sha256` leaves out.
SKIPPED_DIRS = frozenset({"__pycache__", ".git"})
SKIPPED_SUFFIXES = (".pyc",)
#: What the referee itself writes and an organizer may keep in a bot's folder (results databases and their
#: journals, exports, logs): left out of a bot's files unless its ``files`` key names them.
OUTPUT_PATTERNS = ("*.db", "*.db-wal", "*.db-shm", "*.db-journal", "*.sqlite", "*.sqlite3", "*.jsonl", "*.log")
_CHUNK = MIB
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class BotFilesError(ValueError):
    """A bot's files that cannot be identified: a cap hit or a file unreadable; one line naming both."""


@dataclass(frozen=True)
class HashCaps:
    """How much identifying one bot's files may read, and for how long."""

    file_bytes: int = 128 * MIB  # one file
    total_bytes: int = 256 * MIB  # all files together
    files: int = 100_000  # entries (files and links) hashed
    seconds: float = 60.0  # the whole walk


CAPS = HashCaps()


def bot_files_sha256(dir: Path, *, bot: str | None = None, caps: HashCaps = CAPS) -> str:
    """SHA-256 (hex) over every file and link under ``dir`` (:func:`bot_files` with no patterns)."""
    return bot_files(dir, bot=bot, caps=caps).sha256


@dataclass(frozen=True)
class BotFiles:
    """A bot's files: each one's SHA-256 by its path relative to the folder, and the digest over them."""

    manifest: dict[str, str]
    sha256: str

    def changes(self, old: dict[str, str]) -> list[str]:
        """What differs from an older manifest, one entry per file: "bot.py changed", "notes.txt added"."""
        names = sorted(set(old) | set(self.manifest))
        return [f"{name} {'added' if name not in old else 'removed' if name not in self.manifest else 'changed'}"
                for name in names if old.get(name) != self.manifest.get(name)]


def bot_files(dir: Path, *, bot: str | None = None, include: Sequence[str] | None = None,
              exclude: Sequence[str] = (), caps: HashCaps = CAPS) -> BotFiles:
    """The files identifying a bot: every regular file and symbolic link under ``dir`` that ``include`` names
    (all when None) and ``exclude`` does not.

    Patterns are shell-style (:mod:`fnmatch`) and match the path relative to ``dir`` (``/``-separated; ``*``
    also matches ``/``, so ``lib/*`` is everything under ``lib``); an ``exclude`` pattern without ``/`` matches
    the file name in any folder too.

    The digest is taken over one line per entry, ``<sha256, hex>  <path>\\n`` (the ``sha256sum`` format),
    sorted by the paths' bytes. A regular file counts by the SHA-256 of its content; a symbolic link by the
    SHA-256 of ``b"symlink:"`` and its target as written, never followed (a file it points to inside the
    folder is hashed under its own path anyway). Left out: ``__pycache__`` and ``.git`` folders, ``*.pyc``
    files, and what is neither a file, a folder nor a link (FIFOs, sockets, devices).

    :raises FileNotFoundError: ``dir`` is no folder.
    :raises BotFilesError: a cap of ``caps`` is hit, an entry cannot be read, or an ``include`` pattern
        matches no file; the message names ``bot`` and the file.
    """
    root = Path(dir)
    if not root.is_dir():
        raise FileNotFoundError(f"bot folder {str(root)!r} not found")
    walk = _Walk(root, bot, caps, _Selection(include, exclude))
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        raise walk.error(str(root), f"cannot open: {exc.strerror}") from None
    try:
        walk.folder(fd, b"")
    finally:
        os.close(fd)
    for pattern in include or ():
        if not any(fnmatch.fnmatchcase(os.fsdecode(path), pattern) for path, _ in walk.lines):
            who = f"bot {bot!r}: " if bot is not None else ""
            raise BotFilesError(f"{who}files pattern {pattern!r} matches no file in {str(root)!r}")
    digest = hashlib.sha256()
    for path, content in sorted(walk.lines):
        digest.update(content.encode() + b"  " + path + b"\n")
    return BotFiles({os.fsdecode(path): content for path, content in sorted(walk.lines)}, digest.hexdigest())


@dataclass(frozen=True)
class _Selection:
    include: Sequence[str] | None
    exclude: Sequence[str]

    def wants(self, relative: bytes) -> bool:
        path = os.fsdecode(relative)
        name = path.rpartition("/")[2]
        if any(fnmatch.fnmatchcase(path, p) or ("/" not in p and fnmatch.fnmatchcase(name, p))
               for p in self.exclude):
            return False
        return self.include is None or any(fnmatch.fnmatchcase(path, p) for p in self.include)


class _Walk:
    """One walk over a bot's folder: the lines found so far and what is left of each cap."""

    def __init__(self, root: Path, bot: str | None, caps: HashCaps, selection: _Selection) -> None:
        self.root = root
        self.bot = bot
        self.caps = caps
        self.selection = selection
        self.deadline = time.monotonic() + caps.seconds
        self.total = 0
        self.lines: list[tuple[bytes, str]] = []

    def error(self, path: str, problem: str) -> BotFilesError:
        who = f"bot {self.bot!r}: " if self.bot is not None else ""
        return BotFilesError(f"{who}{path}: {problem} (a bot's files are hashed to identify it; the caps are "
                             f"{self.caps.file_bytes // MIB} MiB a file, {self.caps.total_bytes // MIB} MiB and "
                             f"{self.caps.files} files in all, {self.caps.seconds:g} s)")

    def shown(self, relative: bytes) -> str:
        return str(self.root / os.fsdecode(relative))

    def check_time(self, relative: bytes) -> None:
        if time.monotonic() > self.deadline:
            raise self.error(self.shown(relative), f"hashing the bot's files took over {self.caps.seconds:g} s")

    def folder(self, fd: int, prefix: bytes) -> None:
        try:
            entries = [(os.fsencode(entry.name), entry) for entry in os.scandir(fd)]
        except OSError as exc:
            raise self.error(self.shown(prefix) if prefix else str(self.root),
                             f"cannot list the folder: {exc.strerror}") from None
        for name, entry in entries:
            relative = prefix + name
            self.check_time(relative)
            if entry.is_symlink():
                if not _skipped(name) and self.selection.wants(relative):
                    self.add(relative, hashlib.sha256(b"symlink:" + os.readlink(name, dir_fd=fd)).hexdigest())
            elif entry.is_dir(follow_symlinks=False):
                if name.decode(errors="replace") not in SKIPPED_DIRS:
                    self.subfolder(fd, name, relative)
            elif entry.is_file(follow_symlinks=False) and not _skipped(name) and self.selection.wants(relative):
                content = self.content(fd, name, relative)
                if content is not None:
                    self.add(relative, content)

    def subfolder(self, parent: int, name: bytes, relative: bytes) -> None:
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self.error(self.shown(relative), f"cannot open the folder: {exc.strerror}") from None
        try:
            self.folder(fd, relative + b"/")
        finally:
            os.close(fd)

    def add(self, relative: bytes, content: str) -> None:
        if len(self.lines) >= self.caps.files:
            raise self.error(self.shown(relative), f"the bot's folder holds over {self.caps.files} files")
        self.lines.append((relative, content))

    def content(self, parent: int, name: bytes, relative: bytes) -> str | None:
        """The SHA-256 of a regular file's content; None if it is no longer a regular file."""
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self.error(self.shown(relative), f"cannot read: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None  # replaced since the folder was listed
            if info.st_size > self.caps.file_bytes:
                raise self.error(self.shown(relative), f"the file is {_size(info.st_size)}, over the cap")
            return self.read(fd, relative)
        finally:
            os.close(fd)

    def read(self, fd: int, relative: bytes) -> str:
        """Hash what ``fd`` yields, counting every chunk against the caps: a file's size may lie (/proc)."""
        digest = hashlib.sha256()
        size = 0
        while chunk := self.chunk(fd, relative):
            size += len(chunk)
            self.total += len(chunk)
            if size > self.caps.file_bytes:
                raise self.error(self.shown(relative), f"the file yields over {_size(self.caps.file_bytes)}")
            if self.total > self.caps.total_bytes:
                raise self.error(self.shown(relative), f"the bot's files exceed {_size(self.caps.total_bytes)}")
            self.check_time(relative)
            digest.update(chunk)
        return digest.hexdigest()

    def chunk(self, fd: int, relative: bytes) -> bytes:
        try:
            return os.read(fd, _CHUNK)
        except OSError as exc:
            raise self.error(self.shown(relative), f"cannot read: {exc.strerror}") from None


def _skipped(name: bytes) -> bool:
    return name.endswith(tuple(suffix.encode() for suffix in SKIPPED_SUFFIXES))


def _size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"
