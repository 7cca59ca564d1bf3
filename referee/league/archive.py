"""A bot upload (a ``.tar.gz``, a plain tar or a ``.zip``) checked member by member, then extracted into the bot store.

The archive is the entrant's and the daemon that extracts it runs as root, while Debian's Python 3.11 has no
tarfile data filter. So nothing of a header is trusted: pass one (:func:`check_archive`) reads only headers and
refuses, at the first problem, any name that could leave the target or fool a reader, any member that is not a
file or a folder, and anything over :class:`ArchiveCaps`; pass two (:func:`extract_archive`) checks everything
again while it writes through folder descriptors (nothing followed, nothing replaced) and counts the bytes it
actually decompresses, so a header that lies about a size is stopped at the cap. Tar headers are parsed here,
not by :mod:`tarfile`, which would read a pax header of any size into memory before anyone could check it.
An archive of a single top-level folder and nothing else is extracted from inside that folder.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from itertools import zip_longest
from pathlib import Path
from typing import IO, Protocol

from referee.text import visible

MIB = 1 << 20
_BLOCK = 512  # a tar header or data block
_CHUNK = MIB  # the most read at once, so a cap is overshot in memory by this at most, never on disk
_EXTENDED_BYTES = 64 * 1024  # a pax or GNU long-name header's data
_ZIP_RECORD_SLACK = 512  # extra-field and comment bytes a central-directory record may add to its name
_ZIP_RECORD = 46  # a central-directory record without its name, extra field and comment
_NOT_ARCHIVE = "not a .tar.gz or .zip archive"
_IN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OUT_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
#: The refusal of each tar type that is neither a file nor a folder (others: "of tar type X").
_TAR_REFUSALS = {b"1": "a hard link", b"2": "a symbolic link", b"K": "a link (a GNU long link name)",
                 b"3": "a character device", b"4": "a block device", b"6": "a FIFO", b"7": "a contiguous file",
                 b"S": "a GNU sparse file", b"D": "a GNU dump folder", b"M": "a multi-volume continuation",
                 b"V": "a volume label"}
_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
#: What reading a damaged archive raises, from gzip, zlib, zipfile or struct.
_DAMAGE = (OSError, EOFError, zlib.error, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError,
           RuntimeError, struct.error, ValueError)


@dataclass(frozen=True)
class ArchiveCaps:
    """How much one upload may hold: defaults a demanding bot (a JVM jar, a compiled engine, an opening book)
    stays well under, and a daemon that extracts uploads one at a time bears."""

    archive_bytes: int = 64 * MIB  # the archive file itself, compressed
    file_bytes: int = 64 * MIB  # one file, extracted
    total_bytes: int = 256 * MIB  # all files together, extracted (and, apart, all pax headers' data)
    members: int = 10_000  # files and folders, the archive's own ``./`` included
    path_bytes: int = 1024  # a member's path, UTF-8
    component_bytes: int = 255  # one folder or file name of that path (Linux's NAME_MAX)
    depth: int = 32  # folders and file name in one path


CAPS = ArchiveCaps()


class ArchiveError(ValueError):
    """An upload refused: one line naming the member (or the archive) and what is wrong, shown to its author as is."""


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
            raise ArchiveError(f"the upload is no regular file, so {_NOT_ARCHIVE}")
        if info.st_size > caps.archive_bytes:
            raise ArchiveError(_archive_over(info.st_size, caps))
        yield archive


def _spool(stream: IO[bytes], spool: IO[bytes], caps: ArchiveCaps) -> None:
    copied = 0
    while chunk := stream.read(_CHUNK):
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
    with _reader(archive, caps) as reader:
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
        with _reader(archive, caps) as reader:
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


@dataclass(frozen=True)
class _Entry:
    """A header as a reader found it: its name's bytes, and either a refusal or what it declares."""

    raw: bytes
    refusal: str | None  # "is a symbolic link", ...: why the member cannot be admitted whatever its name
    is_dir: bool
    size: int
    mode: int


class _Checker:
    """The checks of one pass: each member's name, type and size, and what the members so far add up to."""

    def __init__(self, caps: ArchiveCaps) -> None:
        self.caps = caps
        self.count = 0
        self.total = 0
        self.kinds: dict[str, bool] = {}  # each member's path: is it a folder
        self.parents: set[str] = set()  # every folder a member lies in

    def admit(self, entry: _Entry) -> Member | None:
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

    def _size(self, entry: _Entry, shown: str) -> None:
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


def _write(root: int, member: Member, reader: _Reader, tally: _Tally) -> None:
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


def _write_file(parent: int, name: str, member: Member, reader: _Reader, tally: _Tally) -> None:
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


# -- readers -----------------------------------------------------------------------------------------------------


class _Reader(Protocol):
    def entries(self) -> Iterator[_Entry]:
        """Each member's header in archive order; a member's data not read is skipped."""
        ...

    def data(self) -> Iterator[bytes]:
        """The data of the member last yielded by :meth:`entries`, in chunks of at most ``_CHUNK``."""
        ...


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@contextmanager
def _reader(archive: IO[bytes], caps: ArchiveCaps) -> Iterator[_Reader]:
    """The reader of the archive's format, told by its first bytes."""
    head = archive.read(_BLOCK)
    archive.seek(0)
    if head[:2] == b"\x1f\x8b":
        with gzip.GzipFile(fileobj=archive, mode="rb") as stream:
            yield _TarReader(stream, caps)
    elif head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        zip_reader = _ZipReader(archive, caps)
        try:
            yield zip_reader
        finally:
            zip_reader.close()
    elif len(head) == _BLOCK and head[257:262] == b"ustar":
        yield _TarReader(archive, caps)
    else:
        raise ArchiveError(_NOT_ARCHIVE)


class _TarReader:
    """A ustar, GNU or pax tar stream read header by header: pax ``path``/``size`` and GNU long names are
    applied; every other type is a refusal; extended headers are capped before they are read."""

    def __init__(self, stream: _Readable, caps: ArchiveCaps) -> None:
        self.stream = stream
        self.caps = caps
        self.ordinal = 0
        self.left = 0  # data of the current member not read yet
        self.padding = 0
        self.extended = 0  # bytes of extended headers read so far

    def entries(self) -> Iterator[_Entry]:
        while (entry := self._next()) is not None:
            yield entry
            self._skip(self.left + self.padding)
            self.left = self.padding = 0

    def data(self) -> Iterator[bytes]:
        while self.left:
            chunk = self._read(min(self.left, _CHUNK))
            self.left -= len(chunk)
            yield chunk

    def _next(self) -> _Entry | None:
        ordinal = self.ordinal + 1
        overrides: dict[bytes, bytes] = {}
        seen: set[bytes] = set()
        while True:
            block = self._read(_BLOCK, at_end_ok=True)
            if not block or block == bytes(_BLOCK):
                return None  # the end-of-archive block (or a stream that stops at a member's end)
            header = _TarHeader.parse(block, ordinal)
            if header.kind not in (b"x", b"g", b"L"):
                break
            if header.kind in seen:
                raise ArchiveError(f"member #{ordinal}: two extended tar headers of one kind before it")
            seen.add(header.kind)
            overrides.update(_extended_records(header.kind, self._extended(header.size, ordinal), ordinal))
        self.ordinal = ordinal
        entry = header.entry(overrides)
        self.left, self.padding = entry.size, -entry.size % _BLOCK
        return entry

    def _extended(self, size: int, ordinal: int) -> bytes:
        """An extended header's data, capped before it is read (each, and all of them together)."""
        where = f"member #{ordinal}"
        if size > _EXTENDED_BYTES:
            raise ArchiveError(f"{where}: an extended tar header of {size:,} bytes, over {_EXTENDED_BYTES:,}")
        self.extended += size
        if self.extended > self.caps.total_bytes:
            raise ArchiveError(f"{where}: extended tar headers over {self.caps.total_bytes:,} bytes in all")
        data = self._read(size)
        self._skip(-size % _BLOCK)
        return data

    def _skip(self, size: int) -> None:
        while size:
            size -= len(self._read(min(size, _CHUNK)))

    def _read(self, size: int, at_end_ok: bool = False) -> bytes:
        try:
            data = self.stream.read(size)
        except _DAMAGE as exc:
            raise ArchiveError(f"the archive is damaged after member #{self.ordinal} ({visible(str(exc))})") from None
        if len(data) != size and not (at_end_ok and not data):
            raise ArchiveError(f"the archive is truncated after member #{self.ordinal}")
        return data


def _extended_records(kind: bytes, data: bytes, ordinal: int) -> dict[bytes, bytes]:
    """A GNU long name (``L``) or pax records (``x``; ``g``, global, may only hold a comment, as git writes)."""
    if kind == b"L":
        return {b"path": data.partition(b"\0")[0]}
    records = _pax_records(data, ordinal)
    if kind == b"g":
        if set(records) - {b"comment"}:
            raise ArchiveError(f"member #{ordinal}: a global pax header may only hold a comment")
        return {}
    if any(key.startswith(b"GNU.sparse.") for key in records):
        raise ArchiveError(f"member #{ordinal} is a pax sparse file: an upload holds only files and folders")
    return records


def _pax_records(data: bytes, ordinal: int) -> dict[bytes, bytes]:
    """``"<length> <key>=<value>\\n"`` records."""
    records: dict[bytes, bytes] = {}
    at = 0
    while at < len(data) and data[at]:  # NULs after the last record: padding some writers leave
        length, _, _ = data[at:at + 20].partition(b" ")
        end = at + int(length) if length.isdigit() else 0
        record = data[at + len(length) + 1:end]
        if end <= at or end > len(data) or not record.endswith(b"\n") or b"=" not in record:
            raise ArchiveError(f"member #{ordinal}: a malformed pax header")
        key, _, value = record[:-1].partition(b"=")
        records[key] = value
        at = end
    return records


@dataclass(frozen=True)
class _TarHeader:
    name: bytes
    kind: bytes  # the type flag
    size: int
    mode: int
    ordinal: int

    @classmethod
    def parse(cls, block: bytes, ordinal: int) -> _TarHeader:
        """:raises ArchiveError: not a ustar/GNU header, or a bad checksum or number."""
        if block[257:262] != b"ustar":
            raise ArchiveError(_NOT_ARCHIVE if ordinal == 1 else f"member #{ordinal}: not a tar header")
        stored = _tar_number(block[148:156], ordinal)
        unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
        signed = unsigned - 256 * sum(1 for b in block[:148] + block[156:] if b > 127)  # old tars' signed sum
        if stored not in (unsigned, signed):
            raise ArchiveError(f"member #{ordinal}: a tar header with a bad checksum")
        name = block[:100].partition(b"\0")[0]
        prefix = block[345:500].partition(b"\0")[0]
        if block[257:265] == b"ustar\x0000" and prefix:  # POSIX only: GNU keeps other fields there
            name = prefix + b"/" + name
        return cls(name, block[156:157], _tar_number(block[124:136], ordinal), _tar_number(block[100:108], ordinal),
                   ordinal)

    def entry(self, overrides: dict[bytes, bytes]) -> _Entry:
        """The member, with the extended headers before it applied."""
        size = self.size
        if b"size" in overrides:
            if not overrides[b"size"].isdigit():
                raise ArchiveError(f"member #{self.ordinal}: a pax size that is no number")
            size = int(overrides[b"size"])
        raw = overrides.get(b"path", self.name)
        if self.kind in (b"0", b"\0", b"5"):
            return _Entry(raw, None, self.kind == b"5", size, self.mode)
        refusal = _TAR_REFUSALS.get(self.kind, f"of tar type {self.kind!r}")
        return _Entry(raw, f"is {refusal}", False, size, self.mode)


def _tar_number(field: bytes, ordinal: int) -> int:
    """An octal field, or GNU's base-256 (a first byte 0x80); a negative one (0xff) is refused."""
    if field[:1] == b"\x80":
        return int.from_bytes(field[1:], "big")
    digits = field.partition(b"\0")[0].strip(b" ")
    if digits and not digits.strip(b"01234567"):
        return int(digits, 8)
    if not digits:
        return 0
    raise ArchiveError(f"member #{ordinal}: a tar header with a bad number")


class _ZipReader:
    """A zip read through its central directory, whose size and entry count are checked before it is parsed."""

    def __init__(self, archive: IO[bytes], caps: ArchiveCaps) -> None:
        _check_zip_directory(archive, caps)
        try:
            self.zip = zipfile.ZipFile(archive)
        except UnicodeDecodeError:
            raise ArchiveError("a member's name is flagged UTF-8 but is not UTF-8") from None
        except _DAMAGE as exc:
            raise ArchiveError(f"the zip is damaged ({visible(str(exc))})") from None
        self.current: zipfile.ZipInfo | None = None

    def close(self) -> None:
        self.zip.close()

    def entries(self) -> Iterator[_Entry]:
        for info in self.zip.infolist():  # duplicates included, each read by its own record
            self.current = info
            yield _zip_entry(info)

    def data(self) -> Iterator[bytes]:
        assert self.current is not None
        try:
            with self.zip.open(self.current) as member:
                while chunk := member.read(_CHUNK):
                    yield chunk
        except _DAMAGE as exc:
            shown = visible(self.current.orig_filename)
            raise ArchiveError(f"member '{shown}' is damaged ({visible(str(exc))})") from None


def _zip_entry(info: zipfile.ZipInfo) -> _Entry:
    """A central-directory record as an entry: its name's bytes as stored (UTF-8 or not, flagged or not)."""
    raw = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    is_dir = info.orig_filename.endswith("/")
    refusal = None
    if info.flag_bits & 0x41:
        refusal = "is encrypted"
    elif info.compress_type not in _ZIP_METHODS:
        refusal = f"is compressed by method {info.compress_type} (only stored and deflated are read)"
    elif kind == stat.S_IFLNK:
        refusal = "is a symbolic link"
    elif kind not in (0, stat.S_IFREG, stat.S_IFDIR) or (kind == stat.S_IFDIR and not is_dir):
        refusal = "is a device, FIFO, socket or a folder named like a file"
    return _Entry(raw, refusal, is_dir, info.file_size, mode)


_EOCD = struct.Struct("<4s4H2LH")
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def _check_zip_directory(archive: IO[bytes], caps: ArchiveCaps) -> None:
    """Refuse a central directory that declares too many entries, or is too long for the count it declares,
    before :class:`zipfile.ZipFile` parses it whole (a million records would be a million objects)."""
    entries, size = _zip_directory(archive)
    if entries > caps.members:
        raise ArchiveError(f"the archive holds {entries:,} members, over the {caps.members:,} an upload may hold")
    if size > max(entries, 1) * (_ZIP_RECORD + caps.path_bytes + _ZIP_RECORD_SLACK):  # a count that lies
        raise ArchiveError(f"the zip's central directory is {size:,} bytes, too long for the {entries:,} members "
                           "it declares")


def _zip_directory(archive: IO[bytes]) -> tuple[int, int]:
    """The entry count and the central directory's size that the end records declare (zip64 too)."""
    length = archive.seek(0, os.SEEK_END)
    tail_length = min(length, _EOCD.size + 0xFFFF)
    archive.seek(length - tail_length)
    tail = archive.read(tail_length)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < _EOCD.size:
        raise ArchiveError(f"{_NOT_ARCHIVE} (a zip with no central directory)")
    entries, size = _EOCD.unpack_from(tail, at)[4:6]
    if (entries == 0xFFFF or size == 0xFFFFFFFF) and at >= _ZIP64_LOCATOR.size:
        locator = _ZIP64_LOCATOR.unpack_from(tail, at - _ZIP64_LOCATOR.size)
        archive.seek(min(locator[2], length))
        record = archive.read(_ZIP64_EOCD.size)
        if locator[0] == b"PK\x06\x07" and len(record) == _ZIP64_EOCD.size and record[:4] == b"PK\x06\x06":
            entries, size = _ZIP64_EOCD.unpack(record)[7:9]
    archive.seek(0)
    return int(entries), int(size)
