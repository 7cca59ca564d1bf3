"""A bot upload (a ``.tar.gz``, a plain tar or a ``.zip``) checked member by member, then extracted into the bot store.

The archive is the entrant's and the daemon that extracts it runs as root, while Debian's Python 3.11 has no
tarfile data filter. So nothing of a header is trusted: pass one (:func:`check_archive`) reads only headers and
refuses, at the first problem, any name that could leave the target or fool a reader, any member that is not a
file or a folder, and anything over :class:`ArchiveCaps`; pass two (:func:`extract_archive`) checks everything
again while it writes through folder descriptors (nothing followed, nothing replaced) and counts the bytes it
actually decompresses, so a header that lies about a size is stopped at the cap. The formats are read by
:mod:`.archive_formats`.
An archive of a single top-level folder and nothing else is extracted from inside that folder.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from typing import IO

from referee.league.archive_formats import (
    CAPS,
    CHUNK,
    NOT_ARCHIVE,
    ArchiveCaps,
    ArchiveError,
    Entry,
    Reader,
    open_reader,
)
from referee.text import visible

_IN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC

__all__ = ["CAPS", "ArchiveCaps", "ArchiveError", "ArchiveSource", "ExtractedTree", "Member", "check_archive",
           "extract_archive"]


@dataclass(frozen=True)
class Member:
    """A file or folder of an archive that passed the checks."""

    name: str  # as the archive names it, normalised: no leading ``./``, no trailing ``/``
    path: str  # where it lands below the target: ``name`` less the single top-level folder, if stripped
    is_dir: bool
    size: int  # as declared by its header; 0 for a folder
    executable: bool  # an execute bit set in the archive: extracted 0755, else 0644


@dataclass(frozen=True)
class ExtractedTree:
    """What :func:`extract_archive` wrote."""

    root: Path  # the target
    paths: tuple[str, ...]  # every file and folder written, relative to ``root``, in archive order
    files: int
    bytes: int  # decompressed and written


ArchiveSource = str | os.PathLike[str] | IO[bytes]


def check_archive(source: ArchiveSource, caps: ArchiveCaps = CAPS) -> list[Member]:
    """Pass one: every member's header checked, nothing written, the first problem refused.

    The format is told by content, not by name: gzip-compressed tar, plain tar (what a sandboxed build hands
    back) or zip. If the archive holds a single top-level folder and nothing else (authors archive their
    folder), that folder is stripped: each :attr:`Member.path` is below it, and the folder itself is not listed.

    :param source: a path (opened without following a link) or an open binary stream, read from its start: a
        stream that cannot seek (a build's tar output on a pipe) is first copied, up to ``caps.archive_bytes``,
        into an unlinked temporary file, so that both passes read the same bytes.
    :raises ArchiveError: the first problem found.
    :raises OSError: ``source`` cannot be opened (the caller's path, not the author's archive).
    """
    with _opened(source, caps) as archive:
        return _stripped(_checked(archive, caps))


def extract_archive(source: ArchiveSource, target: Path, caps: ArchiveCaps = CAPS) -> ExtractedTree:
    """Check ``source`` (:func:`check_archive`), then extract it into ``target``, made with mode 0755.

    Files are written 0644, or 0755 when the archive sets an execute bit; folders 0755; no owner, setuid,
    setgid or sticky bit is taken from the archive. Every file and folder is made below a descriptor of its
    parent with ``O_NOFOLLOW | O_EXCL``, so nothing is followed or replaced even if the tree changed meanwhile.

    :raises ArchiveError: the first problem found; ``target`` is then removed, whatever was written.
    :raises FileExistsError: ``target`` exists.
    :raises OSError: ``source`` cannot be opened or ``target`` written (``target`` is removed too).
    """
    if os.path.lexists(target):
        raise FileExistsError(f"the extraction target {str(target)!r} exists")
    with _opened(source, caps) as archive:
        planned = _checked(archive, caps)
        os.mkdir(target, 0o755)
        try:
            return _extract(archive, Path(target), planned, caps)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise


# -- the source --------------------------------------------------------------------------------------------------


@contextmanager
def _opened(source: ArchiveSource, caps: ArchiveCaps) -> Iterator[IO[bytes]]:
    """The archive as a seekable file no larger than the cap: a path opened without following a link, a stream
    copied into an anonymous temporary file (it may not seek, and it must not change between the passes)."""
    if not isinstance(source, str | os.PathLike):
        if source.seekable():  # read from its start, as it is
            if (size := source.seek(0, os.SEEK_END)) > caps.archive_bytes:
                raise ArchiveError(_archive_over(size, caps))
            yield source
            return
        with tempfile.TemporaryFile() as spool:  # unlinked: the archive's bytes only, never a member
            _spool(source, spool, caps)
            yield spool
        return
    with os.fdopen(os.open(source, _IN_FLAGS), "rb") as archive:
        info = os.fstat(archive.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ArchiveError(f"the upload is no regular file, so {NOT_ARCHIVE}")
        if info.st_size > caps.archive_bytes:
            raise ArchiveError(_archive_over(info.st_size, caps))
        yield archive


def _spool(stream: IO[bytes], spool: IO[bytes], caps: ArchiveCaps) -> None:
    copied = 0
    while chunk := stream.read(CHUNK):
        copied += len(chunk)
        if copied > caps.archive_bytes:
            raise ArchiveError(_archive_over(None, caps))
        spool.write(chunk)
    spool.seek(0)


def _archive_over(size: int | None, caps: ArchiveCaps) -> str:
    """The archive's size (None: a stream, read only as far as the cap) over the cap."""
    if size is None:
        return f"the archive is over the {caps.archive_bytes:,} bytes an upload may be"
    return f"the archive is {size:,} bytes, over the {caps.archive_bytes:,} an upload may be"


# -- pass one and two --------------------------------------------------------------------------------------------


def _checked(archive: IO[bytes], caps: ArchiveCaps) -> list[Member]:
    """Pass one: every member admitted (names, types, sizes, count), in archive order, nothing stripped."""
    archive.seek(0)
    with open_reader(archive, caps) as reader:
        checker = _Checker(caps)
        return [member for entry in reader.entries() if (member := checker.admit(entry)) is not None]


def _stripped(members: list[Member]) -> list[Member]:
    top = _top_folder(members)
    if top is None:
        return members
    return [replace(m, path=m.name[len(top) + 1:]) for m in members if m.name != top]


def _top_folder(members: list[Member]) -> str | None:
    """The archive's single top-level folder, when it holds nothing else."""
    tops = {member.name.partition("/")[0] for member in members}
    if len(tops) != 1:
        return None
    top = tops.pop()
    return None if any(m.name == top and not m.is_dir for m in members) else top


def _extract(archive: IO[bytes], target: Path, planned: list[Member], caps: ArchiveCaps) -> ExtractedTree:
    """Pass two: the same checks again, each member compared with pass one's, then written below ``target``."""
    members = _stripped(planned)
    destination = {m.name: m.path for m in members}
    root = os.open(target, _DIR_FLAGS)
    try:
        os.fchmod(root, 0o755)  # whatever the umask
        archive.seek(0)
        with open_reader(archive, caps) as reader:
            checker, tally = _Checker(caps), _Tally(caps)
            admitted = (m for entry in reader.entries() if (m := checker.admit(entry)) is not None)
            for member, expected in zip_longest(admitted, planned):
                if member != expected:
                    raise ArchiveError("the archive changed while it was read")
                if member.name in destination:
                    _write(root, replace(member, path=destination[member.name]), reader, tally)
    finally:
        os.close(root)
    return ExtractedTree(target, tuple(m.path for m in members), tally.files, tally.bytes)


# -- names, types, sizes -----------------------------------------------------------------------------------------


class _Checker:
    """The checks of one pass: each member's name, type and size, and what the members so far add up to."""

    def __init__(self, caps: ArchiveCaps) -> None:
        self.caps = caps
        self.count = 0
        self.total = 0
        self.kinds: dict[str, bool] = {}  # each member's path: is it a folder
        self.parents: set[str] = set()  # every folder a member lies in

    def admit(self, entry: Entry) -> Member | None:
        """The member ``entry`` declares, or None for the archive's root folder (``./``).

        :raises ArchiveError: the member count, its name, its type or its size."""
        self.count += 1
        name = _decoded(entry.raw, self.count)
        shown = f"member '{visible(name)}'"
        if self.count > self.caps.members:
            raise ArchiveError(f"{shown}: the archive holds over {self.caps.members:,} members, the cap")
        path = _normalised(name, entry.is_dir, self.caps, shown)
        if entry.refusal is not None:
            raise ArchiveError(f"{shown} {entry.refusal}: an upload holds only files and folders")
        if not path:
            if not entry.is_dir:
                raise ArchiveError(f"{shown} is a file named like the archive's root folder")
            return None
        self._size(entry, shown)
        self._place(path, entry.is_dir, shown)
        return Member(path, path, entry.is_dir, entry.size, bool(entry.mode & 0o111) and not entry.is_dir)

    def _size(self, entry: Entry, shown: str) -> None:
        if entry.is_dir:
            if entry.size:
                raise ArchiveError(f"{shown} is a folder that declares {entry.size:,} bytes of data")
            return
        if entry.size > self.caps.file_bytes:
            raise ArchiveError(f"{shown} declares {entry.size:,} bytes, over the {self.caps.file_bytes:,} one file "
                               "may hold")
        self.total += entry.size
        if self.total > self.caps.total_bytes:
            raise ArchiveError(f"{shown} brings the files to {self.total:,} bytes, over the "
                               f"{self.caps.total_bytes:,} an upload may hold")

    def _place(self, path: str, is_dir: bool, shown: str) -> None:
        """Refuse a second member at the same path (a file and a folder included) or one inside a file."""
        if path in self.kinds or (not is_dir and path in self.parents):
            raise ArchiveError(f"{shown} appears twice in the archive (as a file or a folder)")
        parts = path.split("/")
        parents = ["/".join(parts[:end]) for end in range(1, len(parts))]
        for parent in parents:
            if self.kinds.get(parent) is False:
                raise ArchiveError(f"{shown} lies inside '{visible(parent)}', which is a file")
        self.parents.update(parents)
        self.kinds[path] = is_dir


def _decoded(raw: bytes, ordinal: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = visible(raw.decode("utf-8", "backslashreplace"))
        raise ArchiveError(f"member #{ordinal} '{shown}': its name is not UTF-8") from None


def _normalised(name: str, is_dir: bool, caps: ArchiveCaps, shown: str) -> str:
    """``name`` without a leading ``./`` (what ``tar -C folder .`` writes) or a folder's trailing ``/``; "" for
    the root folder itself. Anything else odd is refused, never repaired: an empty or ``.`` component, ``..``.

    :raises ArchiveError: the name is absolute, climbs, holds a backslash or an unsafe character, or is long."""
    if visible(name) != name:
        raise ArchiveError(f"{shown}: its name holds a control, line-separator or bidirectional character")
    if "\\" in name:
        raise ArchiveError(f"{shown}: its name holds a backslash (folders are separated by /)")
    if name.startswith("/"):
        raise ArchiveError(f"{shown} is an absolute path: a member's path is relative to the archive")
    if is_dir:
        name = name.removesuffix("/")
    while name.startswith("./"):
        name = name[2:]
    if name in ("", "."):
        return ""
    parts = name.split("/")
    if ".." in parts:
        raise ArchiveError(f"{shown} climbs out of the archive with '..'")
    if "" in parts or "." in parts:
        raise ArchiveError(f"{shown}: its path has an empty or '.' component")
    _check_lengths(name, parts, caps, shown)
    return name


def _check_lengths(name: str, parts: list[str], caps: ArchiveCaps, shown: str) -> None:
    if len(name.encode()) > caps.path_bytes:
        raise ArchiveError(f"{shown}: its path is over {caps.path_bytes:,} bytes")
    if any(len(part.encode()) > caps.component_bytes for part in parts):
        raise ArchiveError(f"{shown}: a name in its path is over {caps.component_bytes:,} bytes")
    if len(parts) > caps.depth:
        raise ArchiveError(f"{shown}: its path is over {caps.depth} folders deep")


# -- writing -----------------------------------------------------------------------------------------------------


class _Tally:
    """The bytes actually decompressed, file by file and in all: the caps hold whatever a header declared."""

    def __init__(self, caps: ArchiveCaps) -> None:
        self.caps = caps
        self.files = 0
        self.bytes = 0

    def take(self, member: Member, written: int, more: int) -> None:
        shown = f"member '{visible(member.name)}'"
        if written + more > member.size:
            raise ArchiveError(f"{shown} holds more data than its header declares ({member.size:,} bytes)")
        self.bytes += more
        if self.bytes > self.caps.total_bytes:
            raise ArchiveError(f"{shown} brings the files to over {self.caps.total_bytes:,} bytes")


def _write(root: int, member: Member, reader: Reader, tally: _Tally) -> None:
    *folders, leaf = member.path.split("/")
    parent = _folder(root, folders)
    try:
        if member.is_dir:
            os.close(_made_folder(parent, leaf))
        else:
            _write_file(parent, leaf, member, reader, tally)
    finally:
        os.close(parent)


def _folder(root: int, names: list[str]) -> int:
    """A descriptor of the folder ``names`` below ``root``, each made (0755) if missing, none followed."""
    fd = os.dup(root)
    for name in names:
        try:
            child = _made_folder(fd, name)
        finally:
            os.close(fd)
        fd = child
    return fd


def _made_folder(parent: int, name: str) -> int:
    with suppress(FileExistsError):  # made for an earlier member; O_NOFOLLOW and O_DIRECTORY below say it is a folder
        os.mkdir(name, 0o755, dir_fd=parent)
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    os.fchmod(fd, 0o755)
    return fd


def _write_file(parent: int, name: str, member: Member, reader: Reader, tally: _Tally) -> None:
    out = os.open(name, _OUT_FLAGS, 0o600, dir_fd=parent)
    try:
        written = 0
        for chunk in reader.data():
            tally.take(member, written, len(chunk))
            written += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
        if written != member.size:
            raise ArchiveError(f"member '{visible(member.name)}' holds {written:,} bytes, not the "
                               f"{member.size:,} its header declares")
        os.fchmod(out, 0o755 if member.executable else 0o644)
        tally.files += 1
    finally:
        os.close(out)
