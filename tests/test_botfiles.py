"""Hashing a bot's folder as untrusted input: links not followed, only regular files read, sizes, count and time
capped, every cap hit one line naming the bot and the file (referee.tournament.botfiles)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest
from clirun import invoke
from configs import Bot, write_toml

from referee.tournament.botfiles import BotFilesError, HashCaps, bot_files_sha256

HOSTILE = Path(__file__).parent / "hostile"


def line(path: bytes, digest: str) -> bytes:
    return digest.encode() + b"  " + path + b"\n"


def test_links_count_by_their_target_text_and_are_never_followed(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "main.py").write_bytes(b"print(1)\n")
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not the bot's\n")
    os.symlink("main.py", bot / "alias.py")
    os.symlink(outside, bot / "out")
    os.symlink(tmp_path, bot / "up")  # a folder: not walked
    expected = b"".join([
        line(b"alias.py", hashlib.sha256(b"symlink:main.py").hexdigest()),
        line(b"main.py", hashlib.sha256(b"print(1)\n").hexdigest()),
        line(b"out", hashlib.sha256(b"symlink:" + bytes(outside)).hexdigest()),
        line(b"up", hashlib.sha256(b"symlink:" + bytes(tmp_path)).hexdigest()),
    ])
    first = bot_files_sha256(bot)
    assert first == hashlib.sha256(expected).hexdigest()
    outside.write_bytes(b"changed, but not read\n")
    assert bot_files_sha256(bot) == first
    (bot / "out").unlink()
    os.symlink(tmp_path / "elsewhere", bot / "out")
    assert bot_files_sha256(bot) != first


def test_links_to_endless_files_and_a_fifo_hash_at_once(tmp_path: Path) -> None:
    """Before: the hash read /proc/self/pagemap through the link for ever, and the tournament hung."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_bytes(b"x\n")
    for name, target in (("pagemap", "/proc/self/pagemap"), ("zero", "/dev/zero"), ("kcore", "/proc/kcore")):
        os.symlink(target, bot / name)
    os.mkfifo(bot / "fifo")  # nobody writes it: opening it to read would block
    start = time.monotonic()
    digest = bot_files_sha256(bot, bot="sneaky")
    assert time.monotonic() - start < 1.0
    assert len(digest) == 64


def test_a_huge_sparse_file_hits_the_cap_naming_bot_and_file(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "data").mkdir(parents=True)
    huge = bot / "data" / "weights.bin"
    with huge.open("wb") as file:
        file.truncate(64 << 30)  # 64 GiB of holes: no disk used
    start = time.monotonic()
    with pytest.raises(BotFilesError) as caught:
        bot_files_sha256(bot, bot="big")
    assert time.monotonic() - start < 1.0
    message = str(caught.value)
    assert message.startswith(f"bot 'big': {huge}: the file is 64.0 GiB, over the cap (") and "\n" not in message
    assert "128 MiB a file, 256 MiB and 100000 files in all, 60 s" in message


@pytest.mark.parametrize(("caps", "problem"), [
    (HashCaps(total_bytes=1 << 20), "the bot's files exceed 1.0 MiB"),
    (HashCaps(files=2), "the bot's folder holds over 2 files"),
    (HashCaps(seconds=0.0), "hashing the bot's files took over 0 s"),
])
def test_total_size_file_count_and_time_are_capped(tmp_path: Path, caps: HashCaps, problem: str) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    for name in ("a", "b", "c"):
        (bot / name).write_bytes(b"x" * (600 << 10))
    with pytest.raises(BotFilesError, match=rf"^bot 'x': {bot}/[abc]: {problem} \("):
        bot_files_sha256(bot, bot="x", caps=caps)


def test_a_file_that_yields_more_than_its_size_is_capped_while_read(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc files say size 0 and yield data (a folder may hold a bind mount of /proc): the bytes read count."""
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "liar").write_bytes(b"")
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, size: b"\0" * size if os.fstat(fd).st_size == 0 else
                        real_read(fd, size))
    with pytest.raises(BotFilesError, match=r"liar: the file yields over 4.0 MiB"):
        bot_files_sha256(bot, bot="x", caps=HashCaps(file_bytes=4 << 20))


def test_an_unreadable_file_is_one_line_naming_it(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "secret").write_bytes(b"x")
    (bot / "secret").chmod(0)
    with pytest.raises(BotFilesError, match=rf"^bot 'x': {bot}/secret: cannot read: Permission denied"):
        bot_files_sha256(bot, bot="x")


def test_the_tournament_refuses_a_bot_over_the_cap_with_exit_code_3(open_tmp: Path) -> None:
    tmp_path = open_tmp
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_bytes((HOSTILE / "bot.py").read_bytes())
    with (bot / "huge.bin").open("wb") as file:
        file.truncate(1 << 40)
    config = write_toml(tmp_path / "t.toml", [Bot(name, "{python} bot.py play", "bot") for name in ("a", "b")],
                          header='name = "t"\ndeals = 1')
    done = invoke("tournament", str(config), "--db", str(tmp_path / "t.db"), "--jobs", "1")
    assert done.code == 3, done.output
    assert done.output.startswith(f"durak: error: bot 'a': {bot}/huge.bin: the file is 1024.0 GiB, over the cap")
    assert done.output.count("\n") == 1
