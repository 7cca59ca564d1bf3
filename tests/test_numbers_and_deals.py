"""A stored game keeps its number for good (``--changed-bots replay`` included); ``durak play`` takes the seat that
moves first and the bots' seeds, to play a game again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from clirun import invoke, run
from configs import Bot, write_toml
from test_organizer import own_bot

from referee.report.tournament_data import report_data
from referee.results.store import Store

ROOT = Path(__file__).parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"


def listed(db: Path) -> dict[int, str]:
    """``durak games DB``: number -> game id."""
    return {game["number"]: game["game"] for game in map(json.loads, run("games", str(db), "--format",
                                                                          "json").splitlines())}


def told_game(db: Path, number: int) -> str:
    """The game id ``durak replay DB NUMBER`` tells (its first line: ``game ID (variant, ...``)."""
    return run("replay", str(db), str(number)).splitlines()[0].split()[1]


def test_numbers_stay_with_their_games_through_a_changed_bots_replay(tmp_path: Path) -> None:
    for name in "abc":
        own_bot(tmp_path, name)
    config = write_toml(tmp_path / "t.toml", [Bot(name, "{python} bot.py play", name) for name in "abc"],
                        header='name = "t"\ndeals = 2\nsandbox = "none"', move=2.0)
    db = tmp_path / "t.db"
    run("tournament", str(config), "--db", str(db), "--jobs", "1")
    before = listed(db)
    assert sorted(before) == list(range(1, 13))  # 3 tables x 2 deals x 2 rotations
    (tmp_path / "b" / "bot.py").write_text((tmp_path / "b" / "bot.py").read_text() + "\n# b, version 2\n")
    replayed = run("tournament", str(config), "--db", str(db), "--jobs", "1", "--changed-bots", "replay")
    assert "8 games of changed bots moved to history" in replayed
    after = listed(db)
    kept = {n: key for n, key in before.items() if "b" not in key.split("|")[0]}  # the a-c games
    assert len(kept) == 4 and all(after[n] == key for n, key in kept.items())
    new = {n: key for n, key in after.items() if n not in kept}
    assert min(new) == max(before) + 1 and sorted(new) == list(range(13, 21))
    assert sorted(new.values()) == sorted(key for n, key in before.items() if n not in kept)  # played again
    for number, key in before.items():  # superseded games included: history, told as such
        assert told_game(db, number) == key
        superseded = "superseded (history, not rated): bot b replaced" in run("replay", str(db), str(number))
        assert superseded == (number not in kept)
    assert all(told_game(db, number) == key for number, key in new.items())
    with Store(db, create=False) as store:  # the report numbers the games as durak games does
        rows = report_data(store).page["games"]["rows"]
    assert {row[0]: row[1] for row in rows} == after


def test_leader_and_bot_seeds_are_checked_against_the_table() -> None:
    bots = [f"{sys.executable} {RANDOM_BOT}"] * 2
    for options, code, message in ((["--bot-seeds", "1"], 3, "--bot-seeds gives 1 seed(s) for a table of 2"),
                                   (["--bot-seeds", "1,x"], 2, "--bot-seeds takes seeds separated by commas"),
                                   (["--bot-seeds", f"1,{1 << 63}"], 2, "a seed is 0 to 2^63 - 1"),
                                   (["--leader", "2"], 3, "--leader 2 is not a seat at this table of 2")):
        done = invoke("play", *bots, *options, "--sandbox", "none")
        assert done.code == code and message in done.output, (options, done.output)
