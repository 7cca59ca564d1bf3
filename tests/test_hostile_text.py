"""Bot-supplied text is data: a bot whose name, version, stderr and crash output are terminal attacks
(tests/hostile/escaper.py) reaches no terminal raw through play, check-bot, tournament, replay, leaderboard
or export (referee.text.visible is the one escaping helper).

CliRunner runs with ``color=True``: click strips ANSI sequences itself when its output is no terminal, which
would hide a raw ESC here that a real terminal would receive.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import clirun
import msgspec
import pytest

from protocol.records import ResultRecord
from referee.text import json_line, visible

ESCAPER = Path(__file__).parent / "hostile" / "escaper.py"
RANDOM_BOT = Path(__file__).resolve().parent.parent / "sample_bots" / "python" / "random_bot.py"
#: What no output may hold raw: C0 controls but the newline, DEL, C1 controls, bidirectional controls.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
FORGED = r"\x1b[2K\x1b[1Afool: random_bot\x1b[8m\x9b8m"  # the crash line, as shown


@pytest.fixture
def arena() -> Iterator[Path]:
    """A folder every uid can search (bots never run as root); the escaper under a file name with an ESC."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-text-"))
    folder.chmod(0o755)
    shutil.copy(ESCAPER, folder / "esc\x1b[31mape.py")
    (folder / "bot").mkdir()
    shutil.copy(ESCAPER, folder / "bot" / "escaper.py")
    yield folder
    shutil.rmtree(folder)


def run(*args: str, code: int = 0) -> str:
    output = clirun.run(*args, code=code, color=True)
    assert_clean(output)
    return output


def assert_clean(text: str) -> None:
    found = UNSAFE.search(text)
    assert found is None, f"raw {found.group()!r} at {found.start()}: {text[max(0, found.start() - 80):][:160]!r}"


def test_the_helper_escapes_controls_and_keeps_printable_unicode() -> None:
    assert visible("a\x1b[31mb\r\n\t\x07\x7f\x9b\u202e\u2028\udcff") == \
        r"a\x1b[31mb\x0d\x0a\x09\x07\x7f\x9b\u202e\u2028\udcff"
    assert visible("Дурак ♠ 王 😀 café, spaces kept") == "Дурак ♠ 王 😀 café, spaces kept"
    encoded = msgspec.json.encode({"name": "\x1b\x9b\u202e"})
    assert json_line(encoded) == r'{"name":"\u001b\u009b\u202e"}'
    assert msgspec.json.decode(json_line(encoded)) == {"name": "\x1b\x9b\u202e"}  # the same data


def test_play_and_its_json_show_the_bots_words_escaped(arena: Path) -> None:
    crash, random = f"{sys.executable} {arena}/esc\x1b[31mape.py crash", f"{sys.executable} {RANDOM_BOT} 1"
    told = run("play", crash, random, "--games", "2", "--verbose", "--sandbox", "process")
    assert f"esc\\x1b[31mape forfeits (crash: bot exited: exit code 3 (stderr: {FORGED})) and is the fool" in told
    lines = run("play", crash, random, "--games", "2", "--json", "--sandbox", "process").splitlines()
    records = [msgspec.json.decode(line, type=ResultRecord) for line in lines]
    assert records[0].players[0] == "esc\x1b[31mape"  # JSON keeps the data raw, escaped the JSON way
    assert records[0].verdicts[0].reason == f"bot exited: exit code 3 (stderr: {FORGED})".encode().decode(
        "unicode_escape")
    results = arena / "play.jsonl"
    results.write_text("\n".join(lines) + "\n")
    for output_format in ("table", "csv", "json"):
        board = run("leaderboard", str(results), "--format", output_format, "--h2h")
        assert "esc\\x1b[31mape" in board if output_format != "json" else "esc\\u001b[31mape" in board


def test_check_bot_shows_the_hello_name_and_version_escaped(arena: Path) -> None:
    report = run("check-bot", f"{sys.executable} {arena}/bot/escaper.py crash", "--sandbox", "process", code=7)
    assert report.startswith(r"bot 'esc\x1b[31mRED\x07\x0d\x9b2J\u202eevil' version '1\x1b]0;owned\x07': ")
    assert f"crash: bot exited: exit code 3 (stderr: {FORGED})" in report


def test_tournament_replay_leaderboard_and_export_show_the_bots_words_escaped(arena: Path) -> None:
    config = arena / "t.toml"
    config.write_text(f'name = "t\\u001b[5m"\ndeals = 2\nsandbox = "process"\n'
                      f'[[bots]]\nname = "escaper"\ncommand = "{{python}} escaper.py crash"\ndir = "bot"\n'
                      f'[[bots]]\nname = "random"\ncommand = "{{python}} random_bot.py 1"\n'
                      f'dir = "{RANDOM_BOT.parent}"\n')
    db = str(arena / "t.db")
    done = run("tournament", str(config), "--db", db, "--jobs", "1")
    assert r"tournament 't\x1b[5m'" in done
    with contextlib.closing(sqlite3.connect(db)) as con:
        games = [row[0] for row in con.execute("SELECT game_key FROM games")]
    told = run("replay", db, games[0])
    assert "verdict: escaper (seat " in told and f"crash: bot exited: exit code 3 (stderr: {FORGED})" in told
    for output_format in ("table", "csv", "json"):
        run("leaderboard", db, "--format", output_format, "--h2h")
    exported = run("export", db)
    assert "\\u001b[2K" in exported and "\\u009b8m" in exported  # the data, JSON-escaped
    # a changed bot is refused, the names of its files (the entrant's words) escaped in the one-line error
    (arena / "bot" / "x\x1b]0;owned\x07.txt").write_text("a new file")
    refused = run("tournament", str(config), "--db", db, "--jobs", "1", code=3)
    assert refused.startswith(r"durak: error: bot 'escaper' changed since its stored games (x\x1b]0;owned\x07.txt "
                              "added). Say what to do: --changed-bots replay")
    assert refused.count("\n") == 1
