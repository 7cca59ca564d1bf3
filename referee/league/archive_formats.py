"""How an upload's bytes are read: tar (ustar, GNU, pax; plain or gzip-compressed) and zip, header by header.

The readers trust nothing of a header (:mod:`.archive` says why): they hand each member's name bytes, its type
(or why the type is refused) and its declared size to the checks, cap every extended header before it is read,
and turn whatever a damaged archive raises into an :class:`ArchiveError`. Tar headers are parsed here, not by
:mod:`tarfile`, which would read a pax header of any size into memory before anyone could check it.
"""

from __future__ import annotations

import gzip
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Protocol

from referee.text import visible

MIB = 1 << 20
_BLOCK = 512  # a tar header or data block
CHUNK = MIB  # the most read at once, so a cap is overshot in memory by this at most, never on disk
_EXTENDED_BYTES = 64 * 1024  # a pax or GNU long-name header's data
_ZIP_RECORD_SLACK = 512  # extra-field and comment bytes a central-directory record may add to its name
_ZIP_RECORD = 46  # a central-directory record without its name, extra field and comment
NOT_ARCHIVE = "not a .tar.gz or .zip archive"
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
class Entry:
    """A header as a reader found it: its name's bytes, and either a refusal or what it declares."""

    raw: bytes
    refusal: str | None  # "is a symbolic link", ...: why the member cannot be admitted whatever its name
    is_dir: bool
    size: int
    mode: int


# -- readers --------------------------------------------------------------------------------------------------


class Reader(Protocol):
    def entries(self) -> Iterator[Entry]:
        """Each member's header in archive order; a member's data not read is skipped."""
        ...

    def data(self) -> Iterator[bytes]:
        """The data of the member last yielded by :meth:`entries`, in chunks of at most ``CHUNK``."""
        ...


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@contextmanager
def open_reader(archive: IO[bytes], caps: ArchiveCaps) -> Iterator[Reader]:
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
        raise ArchiveError(NOT_ARCHIVE)


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

    def entries(self) -> Iterator[Entry]:
        while (entry := self._next()) is not None:
            yield entry
            self._skip(self.left + self.padding)
            self.left = self.padding = 0

    def data(self) -> Iterator[bytes]:
        while self.left:
            chunk = self._read(min(self.left, CHUNK))
            self.left -= len(chunk)
            yield chunk

    def _next(self) -> Entry | None:
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
            size -= len(self._read(min(size, CHUNK)))

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
            raise ArchiveError(NOT_ARCHIVE if ordinal == 1 else f"member #{ordinal}: not a tar header")
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

    def entry(self, overrides: dict[bytes, bytes]) -> Entry:
        """The member, with the extended headers before it applied."""
        size = self.size
        if b"size" in overrides:
            if not overrides[b"size"].isdigit():
                raise ArchiveError(f"member #{self.ordinal}: a pax size that is no number")
            size = int(overrides[b"size"])
        raw = overrides.get(b"path", self.name)
        if self.kind in (b"0", b"\0", b"5"):
            return Entry(raw, None, self.kind == b"5", size, self.mode)
        refusal = _TAR_REFUSALS.get(self.kind, f"of tar type {self.kind!r}")
        return Entry(raw, f"is {refusal}", False, size, self.mode)


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

    def entries(self) -> Iterator[Entry]:
        for info in self.zip.infolist():  # duplicates included, each read by its own record
            self.current = info
            yield _zip_entry(info)

    def data(self) -> Iterator[bytes]:
        assert self.current is not None
        try:
            with self.zip.open(self.current) as member:
                while chunk := member.read(CHUNK):
                    yield chunk
        except _DAMAGE as exc:
            shown = visible(self.current.orig_filename)
            raise ArchiveError(f"member '{shown}' is damaged ({visible(str(exc))})") from None


def _zip_entry(info: zipfile.ZipInfo) -> Entry:
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
    return Entry(raw, refusal, is_dir, info.file_size, mode)


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
        raise ArchiveError(f"{NOT_ARCHIVE} (a zip with no central directory)")
    entries, size = _EOCD.unpack_from(tail, at)[4:6]
    if (entries == 0xFFFF or size == 0xFFFFFFFF) and at >= _ZIP64_LOCATOR.size:
        locator = _ZIP64_LOCATOR.unpack_from(tail, at - _ZIP64_LOCATOR.size)
        archive.seek(min(locator[2], length))
        record = archive.read(_ZIP64_EOCD.size)
        if locator[0] == b"PK\x06\x07" and len(record) == _ZIP64_EOCD.size and record[:4] == b"PK\x06\x06":
            entries, size = _ZIP64_EOCD.unpack(record)[7:9]
    archive.seek(0)
    return int(entries), int(size)
