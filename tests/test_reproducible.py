"""Reproducible games: the same config and tournament seed give the same stored games, whatever the workers.

The referee gives each bot a seed per game and seat (PROTOCOL.md 4.3, ``game.seed``); the sample bots reseed
from it, so a game is a function of the config, the seed and the bots' files. Timing fields (``times``,
``strikes``) are the only ones allowed to differ.
"""

from __future__ import annotations

import io
import shutil
import sqlite3
import zlib
from contextlib import closing
from pathlib import Path

import msgspec
import pytest
from configs import Bot, write_toml

from referee.tournament.config import load_config
from referee.tournament.runner import RunRequest, run_tournament
from referee.tournament.secret import write_seed_file

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots"
TIMING = ("times", "strikes")


def sample_config(folder: Path) -> Path:
    """Three sample bots that each draw random numbers (random; heuristic and js in long games), 4 deals."""
    for bot in ("random", "heuristic"):
        (folder / bot).mkdir()
        shutil.copy(SAMPLES / "python" / f"{bot}_bot.py", folder / bot)
    shutil.copytree(SAMPLES / "js", folder / "js")
    bots = [Bot("random", "{python} random_bot.py", "random"), Bot("random2", "{python} random_bot.py", "random"),
            Bot("heuristic", "{python} heuristic_bot.py", "heuristic"), Bot("js", "node bot.js", "js")]
    header = 'name = "reproducible"\nplayers = 3\ndeals = 4\nrotations = "all"'
    return write_toml(folder / "t.toml", bots, header=header)


def untimed(fields: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in fields.items() if key not in TIMING}


def stored_games(db: Path) -> dict[str, tuple[dict[str, object], list[dict[str, object]]]]:
    """Per game key: its record and its replay's lines (every event), without the timing fields."""
    games = {}
    with closing(sqlite3.connect(db)) as con:
        for key, record, replay in con.execute("SELECT game_key, record, replay FROM games"):
            lines = [untimed(msgspec.json.decode(line)) for line in zlib.decompress(replay).splitlines()]
            games[key] = (untimed(msgspec.json.decode(record)), lines)
    return games


def test_the_same_config_and_seed_store_the_same_games_at_any_jobs(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is needed for the JavaScript sample bot")
    config = sample_config(tmp_path)
    seed_file = tmp_path / "seed"
    write_seed_file(seed_file, 20261201)
    runs = []
    for name, jobs in (("one", 1), ("two", 2), ("two-again", 2)):
        db = tmp_path / f"{name}.db"
        summary = run_tournament(load_config(config), RunRequest(db, jobs=jobs, seed_file=seed_file), io.StringIO())
        assert summary.played == 4 * 6 * 4  # C(4, 3) tables x 4 deals x 3! seatings
        runs.append(stored_games(db))
    assert runs[0] == runs[1] == runs[2]
    fools = {tuple(record["fools"]) for record, _ in runs[0].values()}  # type: ignore[arg-type]
    assert len(fools) > 2, "the games should not all end alike"
