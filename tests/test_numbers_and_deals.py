"""A stored game keeps its number for good (``--changed-bots replay`` included), and its deal plays again:
``durak replay`` prints the ``durak play`` options that deal it again (never in a seat's view), ``durak export``
carries them, and ``durak play`` with them plays the same game, move for move."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import msgspec
import pytest
from clirun import invoke, run
from configs import Bot, write_toml
from test_organizer import own_bot

from protocol.records import ResultRecord
from referee.report.tournament_data import report_data
from referee.results.replay import parse_replay, replays_of_log
from referee.results.reproduce import tournament_bot_seeds
from referee.results.store import Store
from referee.tournament.secret import write_seed_file

ROOT = Path(__file__).parent.parent
RANDOM_BOT = ROOT / "sample_bots" / "python" / "random_bot.py"


def _record(line: str) -> ResultRecord:
    return msgspec.json.decode(line, type=ResultRecord)


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


def random_bots_config(folder: Path, variant: str, rules: str, series: int) -> Path:
    for name in "ab":
        (folder / name).mkdir()
        (folder / name / "random_bot.py").write_bytes(RANDOM_BOT.read_bytes())
    return write_toml(folder / "t.toml", [Bot(name, "{python} random_bot.py", name) for name in "ab"],
                      header=f'name = "t"\nvariant = "{variant}"\ndeals = 2\nseries = {series}\n'
                             f'sandbox = "none"\n[rules]\n{rules}', move=2.0)


def play_options(line: str, names: list[str]) -> list[str]:
    """The options of a printed deal line, after its bots' places (``<a> <b>``)."""
    prefix = f"deal: durak play {' '.join(f'<{name}>' for name in names)} "
    assert line.startswith(prefix), line
    return shlex.split(line[len(prefix):])


def play_again(tmp_path: Path, names: list[str], options: list[str]) -> bytes:
    """``durak play`` of the random bot in every seat, named as in the stored game; the replay it logs."""
    log = tmp_path / "again.jsonl"
    bots = [f"{name}={sys.executable} {RANDOM_BOT}" for name in names]
    run("play", *bots, *options, "--sandbox", "none", "--log", str(log))
    (replay,) = replays_of_log(log.read_bytes())
    return replay


@pytest.mark.parametrize(("variant", "rules", "seed"), [("podkidnoy", "first_bout_limit = 5", 11),
                                                        ("fools_fool", "max_actions = 4000", 5)])
def test_the_printed_options_play_a_stored_game_again_move_for_move(tmp_path: Path, variant: str, rules: str,
                                                                    seed: int) -> None:
    """Random bots: they reseed from the game message's seed, so only the stored game's own bot seeds
    (``--bot-seeds``) make them choose as they did; every later game of a series is dealt and led as the
    series had it (``--dealer``, ``--leader``)."""
    config = random_bots_config(tmp_path, variant, rules, series=3)
    write_seed_file(tmp_path / "seed", seed)
    db = tmp_path / "t.db"
    run("tournament", str(config), "--db", str(db), "--jobs", "1", "--seed-file", str(tmp_path / "seed"))
    exported = {r.game: r for r in map(_record, run("export", str(db)).splitlines())}
    leaders = 0
    with Store(db, create=False) as store:
        for number, key in listed(db).items():
            stored = store.replay(str(number))
            header, events, end = parse_replay(stored.replay)
            line = run("replay", str(db), str(number)).splitlines()[1]
            options = play_options(line, header.names)
            assert options[:4] == ["--variant", variant, "--deck", "36"]
            assert options[options.index("--set") + 1] == rules.replace(" = ", "=")
            assert options[options.index("--deal") + 1] == " ".join(header.deck) == exported[key].deck
            assert int(options[options.index("--dealer") + 1]) == header.dealer == exported[key].dealer
            seeds = options[options.index("--bot-seeds") + 1]
            assert seeds == ",".join(map(str, exported[key].bot_seeds or [])) == ",".join(map(str, header.bot_seeds))
            assert header.bot_seeds == tournament_bot_seeds(stored.seeds, 2)  # what older games fall back on
            leaders += "--leader" in options
            again_header, again_events, again_end = parse_replay(play_again(tmp_path, header.names, options))
            assert (again_header.deck, again_header.dealer, again_header.rules, again_header.bot_seeds) == \
                (header.deck, header.dealer, header.rules, header.bot_seeds)
            assert again_events == events and again_end.result == end.result, key
    assert leaders >= 1  # a later game of a series, led from the previous fool: the deal alone would not
    assert invoke("leaderboard", str(_export_file(tmp_path, db))).code == 0  # an export still rates


def _export_file(tmp_path: Path, db: Path) -> Path:
    path = tmp_path / "export.jsonl"
    run("export", str(db), "-o", str(path))
    return path


def test_a_seat_view_never_shows_the_deal_nor_the_bots_seeds(tmp_path: Path) -> None:
    config = random_bots_config(tmp_path, "podkidnoy", "", series=1)
    db = tmp_path / "t.db"
    run("tournament", str(config), "--db", str(db), "--jobs", "1")
    with Store(db, create=False) as store:
        header, _, _ = parse_replay(store.replay("1").replay)
    deal, seeds = " ".join(header.deck), [str(seed) for seed in header.bot_seeds]
    everything = run("replay", str(db), "1")
    assert f'--deal "{deal}"' in everything and all(seed in everything for seed in seeds)  # the control
    for name in header.names:
        for extra in ([], ["--stderr"]):
            seen = run("replay", str(db), "1", "--seat", name, *extra)
            assert not [line for line in seen.splitlines() if line.startswith("deal")], seen
            assert deal.encode() not in seen.encode() and "--bot-seeds" not in seen
            assert not [seed for seed in seeds if seed in seen]
        page = tmp_path / f"{name}.html"
        run("replay", str(db), "1", "--seat", name, "--html", str(page))
        assert deal.encode() not in page.read_bytes() and not [s for s in seeds if s.encode() in page.read_bytes()]


def test_a_logged_game_plays_again_even_a_first_attack_drawn_by_lot(tmp_path: Path) -> None:
    """Nobody is dealt a trump (spades) and both hold a six: the first attacker is drawn by lot, from the seed;
    the line names him (--leader). The log's second game follows the first's fool."""
    dealt = "6C 6D 7C 7D 8C 8D 9C 9D TC TD JC JD AS"
    rest = [f"{rank}{suit}" for suit in "CDHS" for rank in "6789TJQKA" if f"{rank}{suit}" not in dealt.split()]
    log = tmp_path / "games.jsonl"
    bots = [f"{name}={sys.executable} {RANDOM_BOT}" for name in "ab"]
    run("play", *bots, "--deal", f"{dealt} {' '.join(rest)}", "--seed", "4", "--sandbox", "none", "--log", str(log))
    run("play", *bots, "--games", "2", "--seed", "3", "--sandbox", "none", "--log", str(tmp_path / "series.jsonl"))
    for path, game in ((log, "1"), (tmp_path / "series.jsonl", "2")):
        header, events, end = parse_replay(replays_of_log(path.read_bytes())[int(game) - 1])
        options = play_options(run("replay", str(path), game).splitlines()[1], header.names)
        assert end.result.first_attacker_by_lot == (path == log)
        assert path != log or "--leader" in options
        again_header, again_events, again_end = parse_replay(play_again(tmp_path, header.names, options))
        assert (again_header.deck, again_header.dealer, again_header.bot_seeds) == \
            (header.deck, header.dealer, header.bot_seeds)
        assert again_events == events  # (a lot drawn then is named now: first_attacker_by_lot aside, the same)
        assert msgspec.structs.replace(again_end.result, first_attacker_by_lot=end.result.first_attacker_by_lot) \
            == end.result


def test_leader_and_bot_seeds_are_checked_against_the_table() -> None:
    bots = [f"{sys.executable} {RANDOM_BOT}"] * 2
    for options, code, message in ((["--bot-seeds", "1"], 3, "--bot-seeds gives 1 seed(s) for a table of 2"),
                                   (["--bot-seeds", "1,x"], 2, "--bot-seeds takes seeds separated by commas"),
                                   (["--bot-seeds", f"1,{1 << 63}"], 2, "a seed is 0 to 2^63 - 1"),
                                   (["--leader", "2"], 3, "--leader 2 is not a seat at this table of 2")):
        done = invoke("play", *bots, *options, "--sandbox", "none")
        assert done.code == code and message in done.output, (options, done.output)
