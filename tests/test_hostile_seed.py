"""Acceptance: at every isolation level, a bot that reads every file it can and tries every integer in them as
the tournament seed predicts none of its hands; handed the real seed, the same bot predicts every one.

The hostile bot is tests/hostile/seed_thief (its walk, and its own copy of the public deal derivation); it
plays in a copy of the shipped sample config, whose bots' dirs point at the real sample_bots folders. Its
reports come back through the stderr the database keeps for each seat of each game.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from clirun import run

from protocol.records import stderr_text
from referee.bots.sandbox.isolation import LEVELS, SandboxUnavailable, probe_bwrap
from referee.results.store import Store, decode_stderr
from referee.tournament.secret import write_seed_file

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_bots" / "tournament.toml"
THIEF = Path(__file__).parent / "hostile" / "seed_thief"


def level_marks(level: str) -> list[pytest.MarkDecorator]:
    if level == "bwrap":
        try:
            probe_bwrap()
        except SandboxUnavailable as exc:
            return [pytest.mark.skip(reason=str(exc))]
    if level == "process" and os.geteuid() != 0:
        return [pytest.mark.skip(reason="without root a process-level bot runs as the referee's own user: file "
                                        "modes cannot keep the database from it (docs/ISOLATION.md)")]
    return []


BOT_LEVELS = [pytest.param(level, id=level, marks=level_marks(level)) for level in LEVELS if level != "none"]


def write_config(arena: Path, env: dict[str, str], leak: str | None) -> Path:
    """The shipped sample, its bots' dirs made absolute, one deal, and the thief as a fourth bot (with ``leak``
    as a file of its folder, for the control)."""
    text = SAMPLE.read_text()
    for folder in ("python", "js"):
        text = text.replace(f'dir = "{folder}"', f'dir = "{SAMPLE.parent / folder}"')
    text = re.sub(r"^deals = \d+$", "deals = 1", text, count=1, flags=re.MULTILINE)
    shutil.copytree(THIEF, arena / "thief", ignore=shutil.ignore_patterns("__pycache__"))
    if leak is not None:
        (arena / "thief" / "leaked.txt").write_text(leak)
    table = ", ".join(f"{key} = '{value}'" for key, value in env.items())  # literal strings: JSON inside
    text += f'\n[[bots]]\nname = "thief"\ncommand = "{{python}} bot.py"\ndir = "thief"\nenv = {{ {table} }}\n'
    path = arena / "tournament.toml"
    path.write_text(text)
    return path


def thief_reports(db: Path) -> tuple[Reports, Reports]:
    """The thief's walk reports and game reports, from each game's stored stderr of its seat."""
    walks: Reports = []
    games: Reports = []
    with contextlib.closing(sqlite3.connect(db)) as con:
        for record, stderr in con.execute("SELECT record, stderr FROM games"):
            players = msgspec.json.decode(record)["players"]
            if "thief" not in players:
                continue
            seat = players.index("thief")
            for line in stderr_text(decode_stderr(zlib.decompress(stderr))[seat]).splitlines():
                if line.startswith("THIEF "):
                    report = json.loads(line.removeprefix("THIEF "))
                    (walks if "walk" in report else games).append(report.get("walk") or report["game"])
    return walks, games


Reports = list[dict[str, Any]]  # decoded JSON


def play(arena: Path, level: str, seed: int, env: dict[str, str], leak: str | None = None) -> tuple[Reports, Reports]:
    """Run the tournament with ``seed`` (a seed file, as a user who sets one would); the thief's reports."""
    db, seed_file = arena / "t.db", arena / "seed"
    write_seed_file(seed_file, seed)
    probes = [str(db), f"{db}-wal", f"{db}-shm", str(seed_file), str(arena / "tournament.toml")]
    config = write_config(arena, {"THIEF_PROBE": json.dumps(probes), "THIEF_SECONDS": "3", **env}, leak)
    output = run("tournament", str(config), "--db", str(db), "--jobs", "2", "--sandbox", level,
                 "--seed-file", str(seed_file))
    assert str(seed) not in output
    with Store(db, create=False) as store:
        active = store.active_tournament()
    assert active is not None and active.seed == seed
    walks, games = thief_reports(db)
    assert walks and len(games) == 6, (walks, games)  # 3 tables x 1 deal x 2 seatings
    return walks, games


@pytest.mark.parametrize("level", BOT_LEVELS)
def test_a_bot_reading_every_file_it_can_predicts_no_hand(open_tmp: Path, level: str) -> None:
    arena = open_tmp  # config, seed file, database, the thief's dir
    walks, games = play(arena, level, secrets.randbits(63), {})
    for walk in walks:
        probes = walk["probes"]
        secrets_seen = {path: how for path, how in probes.items() if not path.endswith(".toml")}
        assert "read" not in secrets_seen.values(), probes  # the database, its journals, the seed file
        assert str(arena) in walk["roots_done"], walk  # it walked the folder where they lie
    nearest = max(walk["roots_done"][str(arena)] for walk in walks)
    for game in games:
        assert game["predicted"] is False, game
        assert game["checked"] >= nearest, game  # every number found up to that folder was tried


@pytest.mark.parametrize("level", BOT_LEVELS)
def test_control_handed_the_seed_the_same_bot_predicts_every_hand(open_tmp: Path, level: str) -> None:
    arena = open_tmp
    """Proves the walk and the derivation work: the real seed in its environment and in a file of its folder."""
    seed = secrets.randbits(63)
    _, games = play(arena, level, seed, {"THIEF_HINT": str(seed)}, leak=f"the organiser's notes: seed {seed}\n")
    leak = str(arena / "thief" / "leaked.txt")
    for game in games:  # (the config lists the seed too here, in the bot's env: the control is no real run)
        assert game["predicted"] is True and {"$THIEF_HINT", leak} <= set(game["sources"]), game
