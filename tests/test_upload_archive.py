"""Bot uploads are untrusted input (issue 27, item 3): hostile archives built by hand, each refused in one line with
nothing written outside the store (nor the target left behind), and the same shapes minus the attack extracted.

The attacks run against the DEFAULT caps where that stays fast (sizes are declared, not written); small caps only
where a real input would be slow to build.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import struct
import tarfile
import tempfile
import time
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.league.archive import CAPS, ArchiveCaps, ArchiveError, check_archive, extract_archive
from referee.league.manifest import MANIFEST_BYTES, Manifest, ManifestError, parse_manifest, read_manifest
from referee.league.names import name_problem

MIB = 1 << 20
GIB = 1 << 30
FORMATS = ("tar.gz", "zip")
GOOD_MANIFEST = b'name = "fox"\ncommand = "python3 bot.py"\n'


@dataclass(frozen=True)
class M:
    """A member to put in a test archive."""

    name: str
    data: bytes = b""
    kind: str = "file"  # file, dir, symlink, hardlink, chardev, fifo
    mode: int = 0o644
    target: str = ""  # a link's


# -- building archives ---------------------------------------------------------------------------------------------


def tar_info(member: M) -> tarfile.TarInfo:
    info = tarfile.TarInfo(member.name)
    info.mode = member.mode
    info.type = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
                 "hardlink": tarfile.LNKTYPE, "chardev": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[member.kind]
    info.linkname = member.target
    if member.kind == "chardev":
        info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    info.size = len(member.data) if member.kind == "file" else 0
    return info


def tar_bytes(members: list[M], compress: bool = True, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w", format=fmt) as tar:
        for member in members:
            tar.addfile(tar_info(member), io.BytesIO(member.data) if member.kind == "file" else None)
    return buffer.getvalue()


def zip_bytes(members: list[M]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": what some tests mean to write
        for member in members:
            kind = {"file": stat.S_IFREG, "dir": stat.S_IFDIR, "symlink": stat.S_IFLNK}[member.kind]
            info = zipfile.ZipInfo(member.name + ("/" if member.kind == "dir" else ""))
            info.external_attr = (kind | member.mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.target.encode() if member.kind == "symlink" else member.data)
    return buffer.getvalue()


def build(tmp_path: Path, fmt: str, members: list[M]) -> Path:
    path = tmp_path / f"upload.{fmt}"
    path.write_bytes(tar_bytes(members) if fmt == "tar.gz" else zip_bytes(members))
    return path


def gz(data: bytes) -> bytes:
    # mtime=0: the same bytes on every run, so that a parameter made of them has one id on every xdist worker
    return gzip.compress(data, compresslevel=1, mtime=0)


def end_blocks() -> bytes:
    return bytes(1024)


@dataclass
class Store:
    """A store folder, the target inside it and a sentinel ``outside/`` beside it."""

    root: Path
    target: Path
    outside: Path

    def untouched(self) -> None:
        """Nothing left in the store, nothing new outside it."""
        assert not self.target.exists()
        assert list(self.root.iterdir()) == []
        assert sorted(p.name for p in self.outside.iterdir()) == ["sentinel"]
        assert not (self.root.parent / "evil").exists()

    def refuse(self, archive: Path | bytes, match: str, caps: ArchiveCaps = CAPS) -> str:
        """Extraction refused with a message holding ``match``; given a path, pass one alone refuses it too (bytes:
        a refusal that may come from pass two only)."""
        source = archive if isinstance(archive, Path) else io.BytesIO(archive)
        with pytest.raises(ArchiveError) as caught:
            extract_archive(source, self.target, caps)
        message = str(caught.value)
        assert match in message and "\n" not in message and "\x1b" not in message, message
        self.untouched()
        if isinstance(archive, Path):
            with pytest.raises(ArchiveError):
                check_archive(archive, caps)
        return message


class Pipe(io.RawIOBase):
    """A build's tar output: read in small pieces, never sought."""

    def __init__(self, data: bytes) -> None:
        self.data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        chunk = self.data.read(min(len(buffer), 1000))
        buffer[:len(chunk)] = chunk
        return len(chunk)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    root, outside = tmp_path / "store", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "sentinel").write_text("left alone")
    return Store(root, root / "bot", outside)


@pytest.fixture(scope="module")
def hundred_thousand_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tar.gz of 100,001 empty files, built from one header template (tarfile would take seconds)."""
    template = bytearray(tarfile.TarInfo("f000000").tobuf(tarfile.USTAR_FORMAT))
    blocks = []
    for index in range(100_001):
        template[0:7] = b"f%06d" % index
        template[148:156] = b"        "
        template[148:156] = b"%06o\0 " % sum(template)
        blocks.append(bytes(template))
    path = tmp_path_factory.mktemp("many") / "many.tar.gz"
    path.write_bytes(gz(b"".join(blocks) + end_blocks()))
    return path


def bot_members() -> list[M]:
    return [M("durak-bot.toml", GOOD_MANIFEST), M("bot.py", b"print('hi')\n", mode=0o755), M("lib", kind="dir"),
            M("lib/util.py", b"X = 1\n")]


# -- controls: the shapes without the attack extract -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_good_bot_extracts_with_plain_modes(tmp_path: Path, store: Store, fmt: str) -> None:
    tree = extract_archive(build(tmp_path, fmt, bot_members()), store.target)
    assert tree.files == 3 and tree.bytes == len(GOOD_MANIFEST) + 12 + 6
    assert set(tree.paths) == {"durak-bot.toml", "bot.py", "lib", "lib/util.py"}
    modes = {p: stat.S_IMODE(os.lstat(store.target / p).st_mode) for p in tree.paths}
    assert modes == {"durak-bot.toml": 0o644, "bot.py": 0o755, "lib": 0o755, "lib/util.py": 0o644}
    assert stat.S_IMODE(store.target.stat().st_mode) == 0o755
    assert read_manifest(store.target).argv == ["python3", "bot.py"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_single_top_folder_is_stripped(tmp_path: Path, store: Store, fmt: str) -> None:
    members = [M("fox", kind="dir"), *(M(f"fox/{m.name}", m.data, m.kind, m.mode) for m in bot_members())]
    listed = check_archive(build(tmp_path, fmt, members))
    assert [m.path for m in listed] == ["durak-bot.toml", "bot.py", "lib", "lib/util.py"]
    assert listed[0].name == "fox/durak-bot.toml"
    tree = extract_archive(tmp_path / f"upload.{fmt}", store.target)
    assert sorted(os.listdir(store.target)) == ["bot.py", "durak-bot.toml", "lib"]
    assert tree.paths == ("durak-bot.toml", "bot.py", "lib", "lib/util.py")
    assert read_manifest(store.target).name == "fox"


def test_a_top_folder_beside_a_file_is_kept_and_a_lone_file_is_not_a_folder(tmp_path: Path, store: Store) -> None:
    assert [m.path for m in check_archive(build(tmp_path, "zip", [M("a/x"), M("b")]))] == ["a/x", "b"]
    assert [m.path for m in check_archive(build(tmp_path, "zip", [M("bot.py")]))] == ["bot.py"]


def test_setuid_sticky_and_owner_are_not_taken_from_the_archive(tmp_path: Path, store: Store) -> None:
    info = tar_info(M("run", b"#!/bin/sh\n", mode=0o7777))
    info.uid, info.gid, info.uname = 4242, 4242, "evil"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.addfile(info, io.BytesIO(b"#!/bin/sh\n"))
        tar.addfile(tar_info(M("d", kind="dir", mode=0o7777)))
    extract_archive(io.BytesIO(buffer.getvalue()), store.target)
    run = os.lstat(store.target / "run")
    assert stat.S_IMODE(run.st_mode) == 0o755 and run.st_uid == os.getuid()
    assert stat.S_IMODE(os.lstat(store.target / "d").st_mode) == 0o755


def test_dot_slash_names_of_tar_c_dot_are_normalised(tmp_path: Path, store: Store) -> None:
    members = [M("./", kind="dir"), M("./bot.py", b"x"), M("./lib/", kind="dir"), M("./lib/a.py", b"y")]
    tree = extract_archive(io.BytesIO(tar_bytes(members, fmt=tarfile.GNU_FORMAT)), store.target)
    assert tree.paths == ("bot.py", "lib", "lib/a.py")


def test_a_plain_tar_and_a_stream_go_through_the_same_checks(tmp_path: Path, store: Store) -> None:
    plain = tar_bytes(bot_members(), compress=False)
    assert extract_archive(Pipe(plain), store.target).files == 3  # type: ignore[arg-type]
    store.target.rename(store.root.parent / "first")
    store.refuse(tar_bytes([M("bot.py"), M("x", kind="symlink", target="/etc/passwd")], compress=False),
                 "member 'x' is a symbolic link")


def test_case_only_duplicates_are_fine_on_linux(tmp_path: Path, store: Store) -> None:
    tree = extract_archive(build(tmp_path, "zip", [M("Bot.py", b"1"), M("bot.py", b"2")]), store.target)
    assert tree.files == 2


def test_the_target_must_not_exist(tmp_path: Path, store: Store) -> None:
    store.target.mkdir()
    with pytest.raises(FileExistsError):
        extract_archive(build(tmp_path, "zip", bot_members()), store.target)


# -- names -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["../evil", "a/../../evil", "../../outside/evil", "a/.."])
def test_path_traversal_is_refused(tmp_path: Path, store: Store, fmt: str, name: str) -> None:
    store.refuse(build(tmp_path, fmt, [M("ok.py", b"1"), M(name, b"evil")]), "climbs out of the archive with '..'")


@pytest.mark.parametrize("fmt", FORMATS)
def test_absolute_paths_are_refused(tmp_path: Path, store: Store, fmt: str) -> None:
    existed = os.path.exists("/tmp/evil")
    for name in ("/tmp/evil", str(store.outside / "evil")):
        store.refuse(build(tmp_path, fmt, [M(name, b"evil")]), "is an absolute path")
    assert os.path.exists("/tmp/evil") == existed


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "shown"), [("bot\x1b[2J.py", "bot\\x1b[2J.py"), ("a\nb", "a\\x0ab"),
                                             ("\u202egnp.py", "\\u202egnp.py"), ("c1\x85", "c1\\x85"),
                                             ("del\x7f", "del\\x7f"), ("sep\u2028", "sep\\u2028")])
def test_control_separator_and_bidi_characters_in_names_are_refused(tmp_path: Path, store: Store, fmt: str,
                                                                      name: str, shown: str) -> None:
    message = store.refuse(build(tmp_path, fmt, [M(name, b"x")]), "control, line-separator or bidirectional")
    assert f"member '{shown}'" in message


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "match"), [("a\\b.py", "backslash"), ("a//b", "empty or '.' component"),
                                             ("a/./b", "empty or '.' component"), ("a/", "member 'a/'")])
def test_odd_names_are_refused_never_repaired(tmp_path: Path, store: Store, fmt: str, name: str, match: str) -> None:
    store.refuse(build(tmp_path, fmt, [M(name, b"x")]), match)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("name", "match"), [("a" * 256, "over 255 bytes"),
                                             ("/".join(["d"] * 33), "over 32 folders deep"),
                                             ("/".join(["x" * 200] * 6), "over 1,024 bytes")])
def test_long_names_are_refused_at_the_default_caps(tmp_path: Path, store: Store, fmt: str, name: str,
                                                    match: str) -> None:
    store.refuse(build(tmp_path, fmt, [M(name, b"x")]), match)


def test_names_that_are_not_utf8_are_refused(tmp_path: Path, store: Store) -> None:
    tar = tar_bytes([M("X.py", b"x")], compress=False, fmt=tarfile.USTAR_FORMAT)
    header = bytearray(tar[:512])
    header[0] = 0xFF
    header[148:156] = b"        "
    header[148:156] = b"%06o\0 " % sum(header)
    assert "member #1 '\\xff.py': its name is not UTF-8" in store.refuse(gz(bytes(header) + tar[512:]), "UTF-8")
    store.refuse(zip_bytes([M("X.py", b"x")]).replace(b"X.py", b"\xff.py"), "is not UTF-8")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("members", [[M("a", b"1"), M("a", b"2")], [M("a", b"1"), M("a", kind="dir")],
                                     [M("a", kind="dir"), M("a", b"1")], [M("a/b", b"1"), M("a", b"1")],
                                     [M("a", kind="dir"), M("a", kind="dir")]])
def test_duplicates_are_refused(tmp_path: Path, store: Store, fmt: str, members: list[M]) -> None:
    store.refuse(build(tmp_path, fmt, members), "appears twice")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_member_inside_a_file_is_refused(tmp_path: Path, store: Store, fmt: str) -> None:
    store.refuse(build(tmp_path, fmt, [M("a", b"1"), M("a/b", b"2")]), "lies inside 'a', which is a file")


# -- types -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_symlink_to_etc_passwd_is_refused(tmp_path: Path, store: Store, fmt: str) -> None:
    archive = build(tmp_path, fmt, [M("bot.py", b"1"), M("passwd", kind="symlink", target="/etc/passwd"),
                                    M("passwd", b"overwrite through the link")])
    store.refuse(archive, "member 'passwd' is a symbolic link: an upload holds only files and folders")


@pytest.mark.parametrize(("member", "match"), [
    (M("passwd", kind="hardlink", target="/etc/passwd"), "is a hard link"),
    (M("up", kind="hardlink", target="../../etc/passwd"), "is a hard link"),
    (M("null", kind="chardev"), "is a character device"),
    (M("pipe", kind="fifo"), "is a FIFO")])
def test_hard_links_devices_and_fifos_are_refused(tmp_path: Path, store: Store, member: M, match: str) -> None:
    store.refuse(build(tmp_path, "tar.gz", [M("bot.py", b"1"), member]), match)


def test_a_gnu_sparse_member_of_10_gib_is_refused_at_once(store: Store) -> None:
    info = tarfile.TarInfo("sparse.bin")
    info.type = tarfile.GNUTYPE_SPARSE
    header = bytearray(info.tobuf(tarfile.GNU_FORMAT))
    header[483:495] = b"\x80" + (10 * GIB).to_bytes(11, "big")  # the real size of GNU's sparse header
    header[148:156] = b"        "
    header[148:156] = b"%06o\0 " % sum(header)
    started = time.perf_counter()
    store.refuse(gz(bytes(header) + end_blocks()), "member 'sparse.bin' is a GNU sparse file")
    assert time.perf_counter() - started < 0.5


def test_a_pax_sparse_member_is_refused(store: Store) -> None:
    info = tarfile.TarInfo("sparse.bin")
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.realsize": str(10 * GIB)}
    store.refuse(gz(info.tobuf(tarfile.PAX_FORMAT) + end_blocks()), "is a pax sparse file")


@pytest.mark.parametrize("pax", [False, True])
def test_a_plain_header_declaring_10_gib_is_refused_at_once(store: Store, pax: bool) -> None:
    info = tarfile.TarInfo("huge.bin")
    info.size = 10 * GIB  # base-256 in GNU's header, a pax size record in pax
    header = info.tobuf(tarfile.PAX_FORMAT if pax else tarfile.GNU_FORMAT)
    started = time.perf_counter()
    message = store.refuse(gz(header + bytes(MIB)), "declares 10,737,418,240 bytes, over the 67,108,864")
    assert time.perf_counter() - started < 0.5, message


def test_encrypted_and_unsupported_zip_members_are_refused(store: Store) -> None:
    encrypted = bytearray(zip_bytes([M("secret.py", b"x" * 100)]))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):  # zipfile writes no encrypted entry
        at = encrypted.find(signature) + flags_at
        encrypted[at] |= 0x1
    store.refuse(bytes(encrypted), "member 'secret.py' is encrypted")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo("packed.py"), b"x" * 100, compress_type=zipfile.ZIP_BZIP2)
    store.refuse(buffer.getvalue(), "member 'packed.py' is compressed by method 12")


def test_a_zip_device_entry_is_refused(store: Store) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        info = zipfile.ZipInfo("null")
        info.external_attr = (stat.S_IFCHR | 0o666) << 16
        archive.writestr(info, b"")
    store.refuse(buffer.getvalue(), "is a device")


# -- counts and sizes ------------------------------------------------------------------------------------------------


def test_100000_files_are_refused_at_the_count_cap(store: Store, hundred_thousand_files: Path) -> None:
    started = time.perf_counter()
    store.refuse(hundred_thousand_files, "member 'f010000': the archive holds over 10,000 members")
    assert time.perf_counter() - started < 5  # both passes stop at member 10,001, well before 51 MB of headers


def test_a_zip_of_10001_files_is_refused_and_a_declared_100000_before_parsing(store: Store) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(CAPS.members + 1):
            archive.writestr(f"f{index}", b"")
    store.refuse(buffer.getvalue(), "holds 10,001 members, over the 10,000")
    small = bytearray(zip_bytes([M("a", b"1")]))
    end = small.rfind(b"PK\x05\x06")
    small[end + 8:end + 12] = struct.pack("<HH", 0xFFFF - 1, 0xFFFF - 1)
    store.refuse(bytes(small), "holds 65,534 members")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_bomb_with_honest_headers_is_refused_before_inflating(tmp_path: Path, store: Store, fmt: str) -> None:
    archive = build(tmp_path, fmt, [M("bomb.bin", bytes(CAPS.file_bytes + 1))])
    assert archive.stat().st_size < MIB
    store.refuse(archive, "member 'bomb.bin' declares 67,108,865 bytes, over the 67,108,864")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_total_cap_holds(tmp_path: Path, store: Store, fmt: str) -> None:
    caps = ArchiveCaps(file_bytes=1000, total_bytes=2500)
    archive = build(tmp_path, fmt, [M(f"f{i}", bytes(1000)) for i in range(3)])
    store.refuse(archive, "member 'f2' brings the files to 3,000 bytes, over the 2,500", caps)


def lying_zip(declared: int, actual: bytes, crc_of_declared: bool) -> bytes:
    """A zip whose local and central headers say ``declared`` bytes while its data inflates to ``actual``."""
    data = bytearray(zip_bytes([M("ok.py", b"print(1)\n"), M("bomb.bin", actual)]))
    crc = zlib.crc32(actual[:declared]) if crc_of_declared else zlib.crc32(actual)
    for signature, size_at, crc_at in ((b"PK\x03\x04", 22, 14), (b"PK\x01\x02", 24, 16)):
        at = data.rfind(signature)  # bomb.bin's record: the second of each
        data[at + size_at:at + size_at + 4] = struct.pack("<L", declared)
        data[at + crc_at:at + crc_at + 4] = struct.pack("<L", crc)
    return bytes(data)


def test_a_zip_bomb_whose_headers_understate_is_stopped_at_the_declared_size(store: Store) -> None:
    actual = bytes(CAPS.file_bytes + MIB)  # inflates past the default file cap
    bomb = lying_zip(1024, actual, crc_of_declared=False)
    assert len(bomb) < MIB
    started = time.perf_counter()
    store.refuse(bomb, "member 'bomb.bin' is damaged")  # its data do not match the header's CRC: refused
    assert time.perf_counter() - started < 1  # the 65 MiB were never inflated
    tree = extract_archive(io.BytesIO(lying_zip(1024, actual, crc_of_declared=True)), store.target)
    assert tree.bytes == 1024 + 9 and (store.target / "bomb.bin").stat().st_size == 1024


def test_a_tar_header_that_understates_its_data_is_refused_and_cleaned_up(store: Store) -> None:
    good = tar_bytes([M("ok.py", b"1")], compress=False)[:1024]
    info = tarfile.TarInfo("liar.bin")
    info.size = 10
    liar = info.tobuf(tarfile.USTAR_FORMAT) + b"\x01" * (64 * 1024)  # the data run on where a header should be
    store.refuse(gz(good + liar), "not a tar header")


def test_the_archive_cap_holds_for_a_path_and_a_stream(tmp_path: Path, store: Store) -> None:
    caps = ArchiveCaps(archive_bytes=200)
    archive = build(tmp_path, "zip", [M("a", os.urandom(300))])
    store.refuse(archive, "over the 200 an upload may be", caps)
    store.refuse(archive.read_bytes(), "over the 200 an upload may be", caps)
    with pytest.raises(ArchiveError, match="the archive is over the 200 bytes an upload may be"):
        extract_archive(Pipe(archive.read_bytes()), store.target, caps)  # type: ignore[arg-type]
    store.untouched()


def test_the_member_cap_counts_folders(tmp_path: Path, store: Store) -> None:
    caps = ArchiveCaps(members=3)
    store.refuse(build(tmp_path, "tar.gz", [M("a", kind="dir"), M("b", kind="dir"), M("c", kind="dir"),
                                            M("d", kind="dir")]), "member 'd/': the archive holds over 3 members", caps)


@pytest.mark.parametrize(("data", "match"), [
    (b"hello, world" * 100, "not a .tar.gz or .zip archive"),
    (gz(b"just text" * 100), "not a .tar.gz or .zip archive"),
    (b"", "not a .tar.gz or .zip archive"),
    (b"\x1f\x8b" + b"junk" * 100, "damaged"),
    (b"PK\x03\x04" + b"junk" * 100, "no central directory")], ids=["text", "gzip-text", "empty", "bad-gzip", "bad-zip"])
def test_what_is_no_archive_is_refused(store: Store, data: bytes, match: str) -> None:
    store.refuse(data, match)


# -- the property ----------------------------------------------------------------------------------------------------

NASTY = st.lists(st.sampled_from(["a", "b", ".", "..", "/", "\\", "\x1b", "\u202e", " ", "é", "\0", "~"]),
                 min_size=1, max_size=8).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(NASTY, min_size=1, max_size=3), fmt=st.sampled_from(FORMATS))
def test_extraction_refuses_or_writes_only_inside_the_target(names: list[str], fmt: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "store").mkdir()
        target = base / "store" / "bot"
        try:
            archive = tar_bytes([M(n, b"x") for n in names]) if fmt == "tar.gz" else zip_bytes([M(n, b"x")
                                                                                                for n in names])
        except (ValueError, tarfile.TarError):
            return  # the writer itself refuses the name
        try:
            extract_archive(io.BytesIO(archive), target)
        except ArchiveError as exc:
            assert "\n" not in str(exc)
            assert not target.exists()
        for path in everything_under(base):
            assert path == base / "store" or path == target or path.is_relative_to(target), path
            assert not path.is_symlink()


def everything_under(base: Path) -> Iterator[Path]:
    for folder, folders, files in os.walk(base):
        for name in folders + files:
            yield Path(folder, name)


# -- the manifest ----------------------------------------------------------------------------------------------------


def test_commands_as_a_string_or_a_list() -> None:
    manifest = parse_manifest('name = "fox"\ncommand = "python3 \'my bot.py\' --fast"\nbuild = ["make", "-j2"]\n'
                              'description = "Throws in low trumps"\n[env]\nFOX_DEPTH = "3"\n')
    assert manifest.argv == ["python3", "my bot.py", "--fast"]
    assert manifest.build_argv == ["make", "-j2"]
    assert manifest.env == {"FOX_DEPTH": "3"} and manifest.description == "Throws in low trumps"
    plain = parse_manifest('name = "fox"\ncommand = ["./fox"]\n')
    assert plain == Manifest(name="fox", command=("./fox",)) and plain.build_argv is None


@pytest.mark.parametrize(("text", "message"), [
    ('command = "x"', "durak-bot.toml: missing key 'name'"),
    ('name = 1\ncommand = "x"', "durak-bot.toml: key 'name': expected str, got int"),
    ('name = "a@1"\ncommand = "x"', "durak-bot.toml: key 'name': bad bot name 'a@1'"),
    ('name = "bot\\u001b"\ncommand = "x"', "durak-bot.toml: key 'name': bad bot name 'bot\\x1b'"),
    ('name = "a"', "durak-bot.toml: missing key 'command'"),
    ('name = "a"\ncommand = ""', "durak-bot.toml: key 'command': empty; it needs a program"),
    ('name = "a"\ncommand = []', "durak-bot.toml: key 'command': empty; it needs a program"),
    ('name = "a"\ncommand = "x \'y"', "durak-bot.toml: key 'command': cannot be split as a shell would"),
    ('name = "a"\ncommand = [1]', "durak-bot.toml: key 'command[0]': expected str, got int"),
    ('name = "a"\ncommand = {}', "durak-bot.toml: key 'command': expected str | array, got table"),
    ('name = "a"\ncommand = "x"\nbuild = 3', "durak-bot.toml: key 'build': expected str | array, got int"),
    ('name = "a"\ncommand = "x"\nbuild = ""', "durak-bot.toml: key 'build': empty"),
    ('name = "a"\ncommand = "x"\nenv = "A=1"', "durak-bot.toml: key 'env': expected table, got str"),
    ('name = "a"\ncommand = "x"\n[env]\nA = 1', "durak-bot.toml: key 'env.A': expected str, got int"),
    ('name = "a"\ncommand = "x"\n[env]\nLD_PRELOAD = "/tmp/x.so"',
     "durak-bot.toml: key 'env': environment variable 'LD_PRELOAD' is refused in a bot's settings"),
    ('name = "a"\ncommand = "x"\n[env]\nBASH_ENV = "/tmp/x"', "environment variable 'BASH_ENV' is refused"),
    ('name = "a"\ncommand = "x"\n[env]\nLD_LIBRARY_PATH = "."', "environment variable 'LD_LIBRARY_PATH' is refused"),
    ('name = "a"\ncommand = "x"\ndescription = "two\\nlines"', "durak-bot.toml: key 'description': one line"),
    ('name = "a"\ncommand = "x"\ndescription = "' + "x" * 201 + '"', "at most 200 characters"),
    ('name = "a"\ncommand = "x"\nversion = 2', "durak-bot.toml: unknown key 'version'"),
    ('name = "a"\ncommand =\n', "durak-bot.toml: bad TOML: Invalid value (at line 2, column 10)"),
])
def test_every_field_error_is_one_line_naming_it(text: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(text)
    shown = str(caught.value)
    assert shown.startswith("durak-bot.toml: ") and message in shown and "\n" not in shown, shown


def test_a_manifest_not_utf8_or_too_big_is_refused() -> None:
    with pytest.raises(ManifestError, match="not UTF-8"):
        parse_manifest(b'name = "\xff"\ncommand = "x"\n')
    with pytest.raises(ManifestError, match="over 65,536 bytes"):
        parse_manifest(b"#" * (MANIFEST_BYTES + 1))


def test_read_manifest_never_follows_a_link(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="missing"):
        read_manifest(tmp_path)
    (tmp_path / "real.toml").write_bytes(GOOD_MANIFEST)
    (tmp_path / "durak-bot.toml").symlink_to(tmp_path / "real.toml")
    with pytest.raises(ManifestError, match="a link is never followed"):
        read_manifest(tmp_path)
    (tmp_path / "durak-bot.toml").unlink()
    (tmp_path / "durak-bot.toml").write_bytes(b"#" * (MANIFEST_BYTES + 1))
    with pytest.raises(ManifestError, match="over 65,536 bytes"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_ld_preload_in_an_uploaded_manifest_is_refused(tmp_path: Path, store: Store, fmt: str) -> None:
    manifest = GOOD_MANIFEST + b'[env]\nLD_PRELOAD = "/tmp/evil.so"\n'
    extract_archive(build(tmp_path, fmt, [M("fox", kind="dir"), M("fox/durak-bot.toml", manifest)]), store.target)
    with pytest.raises(ManifestError, match="'LD_PRELOAD' is refused"):
        read_manifest(store.target)


def test_the_league_name_rule_has_one_home() -> None:
    assert name_problem("clever-fox_2.0+") is None
    for bad in ("", "a@1", "a b", "a,b", "x" * 65, "fox\x1b"):
        assert name_problem(bad) is not None


# -- tar dialects ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_long_names_of_every_tar_dialect_extract(store: Store, fmt: int) -> None:
    name = "/".join(["folder" * 10] * 3) + "/bot.py"  # 185 bytes: ustar's prefix, GNU's L header, pax's path
    tree = extract_archive(io.BytesIO(tar_bytes([M(name, b"x"), M("top.py")], fmt=fmt)), store.target)
    assert tree.paths == (name, "top.py") and (store.target / name).read_bytes() == b"x"


def test_a_git_archive_comment_header_is_accepted_and_other_globals_refused(store: Store) -> None:
    def with_global(headers: dict[str, str]) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers=headers) as tar:
            tar.addfile(tar_info(M("bot.py", b"x")), io.BytesIO(b"x"))
        return buffer.getvalue()

    assert extract_archive(io.BytesIO(with_global({"comment": "4b825dc6"})), store.target).files == 1
    store.target.rename(store.root.parent / "first")
    store.refuse(with_global({"path": "../evil"}), "a global pax header may only hold a comment")


def test_truncated_and_corrupt_tars_are_refused(store: Store) -> None:
    whole = tar_bytes([M("ok.py", b"1"), M("big.bin", bytes(5000))], compress=False)
    store.refuse(gz(whole[:2048]), "the archive is truncated after member #2")
    corrupt = bytearray(whole)
    corrupt[1024 + 148] ^= 1  # big.bin's checksum
    store.refuse(gz(bytes(corrupt)), "member #2: a tar header with a bad checksum")
    store.refuse(gz(whole)[:-30], "damaged")


def test_an_oversized_extended_header_is_refused_before_it_is_read(store: Store) -> None:
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = tarfile.XHDTYPE
    info.size = 10 * GIB
    store.refuse(gz(info.tobuf(tarfile.GNU_FORMAT) + bytes(MIB)), "an extended tar header of 10,737,418,240 bytes")


def test_the_bytes_inflated_are_counted_whatever_the_decoder_yields(tmp_path: Path, store: Store,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """zipfile stops a member at its declared size; this stands in for a decoder that would not."""
    from referee.league import archive_formats as module

    def endless(self: object) -> Iterator[bytes]:
        while True:
            yield bytes(MIB)

    monkeypatch.setattr(module._ZipReader, "data", endless)
    store.refuse(build(tmp_path, "zip", [M("small.bin", bytes(100))]).read_bytes(),  # pass two only
                 "member 'small.bin' holds more data than its header declares (100 bytes)")


def test_a_zip_whose_count_understates_its_central_directory_is_refused_before_parsing(store: Store) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index in range(2000):
            archive.writestr(f"f{index}", b"")
    data = bytearray(buffer.getvalue())
    end = data.rfind(b"PK\x05\x06")
    data[end + 8:end + 12] = struct.pack("<HH", 1, 1)  # "one member"; zipfile would parse all 2,000 records
    store.refuse(bytes(data), "too long for the 1 members it declares")
