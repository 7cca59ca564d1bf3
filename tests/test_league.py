"""The league's parts without a daemon (issue 26): its config, its bot store, and its course driven directly over a
real database, versions entered without their gate: groups stored when issued, complete once every rotation is,
void when a version stops, the state rebuilt the same from the store, and only complete groups rated or shown."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from protocol.rules import Rules
from referee.engine import SeededRng, new_game
from referee.games.match import play_game
from referee.league.botstore import SnapshotError, folder_problem, take_snapshot
from referee.league.config import load_league
from referee.league.course import LeagueCourse
from referee.league.daemon import LeagueError, open_league
from referee.league.lifecycle import Lifecycle
from referee.league.state import rebuild_state
from referee.report.tournament_data import report_data
from referee.results.arena_store import ArenaStore
from referee.results.league_store import LeagueStore, VersionRow
from referee.results.record import GameRecord
from referee.results.requests import QuarantineBot, RetireBot
from referee.tournament.config import ConfigError
from referee.tournament.coordinator import game_row
from referee.tournament.schedule import Slot
from tests.clirun import invoke
from tests.scripted import ScriptedBot

CONFIG = """\
name = "unit league"
players = [2, 3]
[league]
refit_seconds = 1000.0
"""


@pytest.fixture
def league_config(tmp_path: Path) -> Path:
    path = tmp_path / "league.toml"
    path.write_text(CONFIG)
    return path


def test_a_league_config_is_a_tournament_tables_keys_and_a_league_table(league_config: Path, tmp_path: Path) -> None:
    loaded = load_league(league_config)
    assert loaded.config.sizes == (2, 3) and loaded.match_settings().sizes == (2, 3)
    assert loaded.table.rules.variant == "podkidnoy" and loaded.settings.min_games == 30
    fair = loaded.match_settings()  # the defaults: a slow version keeps up in flight, fast ones a group ahead at most
    assert (fair.max_in_flight, fair.max_lead, fair.lead) == (4, None, 3)
    leading = tmp_path / "leading.toml"
    leading.write_text(league_config.read_text().replace("[league]\n", "[league]\nmax_lead = 9\nmax_in_flight = 2\n"))
    assert (load_league(leading).match_settings().lead, load_league(leading).match_settings().max_in_flight) == (9, 2)
    bad = {'format = "sampled"': "key 'format'", "seed = 5": "league seed", "players = [2, 7]": "players",
           "[league]\nwindow_min = -1": "league.window_min", "[league]\nmax_lead = 0": "league.max_lead",
           '[rules]\nnope = 1': "rules.nope",
           '[[bots]]\nname = "a"\ncommand = "x"': "bots[0].dir"}
    for line, named in bad.items():
        broken = tmp_path / "broken.toml"
        broken.write_text(f'name = "x"\n{line}\n')
        with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
            load_league(broken)


def test_a_stored_league_refuses_a_config_whose_games_differ_but_takes_new_matchmaking(league_config: Path,
                                                                                      tmp_path: Path) -> None:
    with LeagueStore(tmp_path / "l.db") as store:
        league = open_league(store, load_league(league_config))
        league_config.write_text(CONFIG.replace("refit_seconds = 1000.0", "refit_seconds = 5.0\nmin_games = 10"))
        assert open_league(store, load_league(league_config)).id == league.id  # matchmaking may change
        assert "min_games = 10" in store.league().config  # type: ignore[union-attr]
        for changed in ('[rules]\nfirst_bout_limit = 5', '[time]\nmove = 0.5', '[limits]\nmemory_mb = 512',
                        "pause = false"):
            league_config.write_text(CONFIG.replace("[league]", f"{changed}\n[league]") if changed.startswith("p")
                                     else f"{CONFIG}{changed}\n")
            with pytest.raises(LeagueError, match="games differ"):
                open_league(store, load_league(league_config))


def test_a_snapshot_copies_files_and_refuses_links_and_special_files(tmp_path: Path) -> None:
    source = tmp_path / "bot"
    (source / "lib").mkdir(parents=True)
    (source / "bot.py").write_text("print('hi')\n")
    (source / "run").write_text("#!/bin/sh\n")
    (source / "run").chmod(0o700)
    (source / "lib" / "data.bin").write_bytes(b"\0" * 1000)
    assert folder_problem(source) is None
    copy = take_snapshot(source, tmp_path / "store", "alice", 1)
    assert (copy.dir / "lib" / "data.bin").read_bytes() == b"\0" * 1000
    assert oct((copy.dir / "run").stat().st_mode & 0o777) == "0o755" and oct(
        (copy.dir / "bot.py").stat().st_mode & 0o777) == "0o644"
    (source / "lib" / "secret").symlink_to("/etc/passwd")
    assert "holds a link" in (folder_problem(source) or "")
    with pytest.raises(SnapshotError, match="holds a link"):
        take_snapshot(source, tmp_path / "store", "alice", 2)
    assert not (tmp_path / "store" / "alice" / "2").exists()  # nothing left behind
    (source / "lib" / "secret").unlink()
    os.mkfifo(source / "pipe")
    with pytest.raises(SnapshotError, match="no file or folder"):
        take_snapshot(source, tmp_path / "store", "alice", 2)
    assert folder_problem(tmp_path / "missing") == f"no folder {str(tmp_path / 'missing')!r}"


class Played:
    """Stands in for a worker: a game record whose result the store can rate (the first seat is the fool)."""

    @staticmethod
    def games(slot: Slot) -> list[GameRecord]:
        clients = [ScriptedBot(name) for name in slot.table]
        game = new_game(Rules(), len(slot.table), SeededRng(slot.deal_seed))
        return [play_game(game, clients, f"{slot.key}|g1", deal=slot.deal_key)]


def versions_of(store: LeagueStore, league_id: int, names: dict[str, str], folder: Path) -> None:
    for name, author in names.items():
        store.add_version(league_id, VersionRow(name=f"{name}@1", bot=name, number=1, author=author, command=["x"],
                                                env={}, dir=str(folder), sha256=name))


def test_a_course_stores_a_group_when_issued_completes_it_and_voids_it_when_a_version_stops(
        league_config: Path, tmp_path: Path) -> None:
    loaded = load_league(league_config)
    with ArenaStore(tmp_path / "l.db") as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z", "d": "w"}, tmp_path)
        disqualified: dict[str, str] = {}
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), disqualified)  # type: ignore[arg-type]
        course.begin(store, league, 0, None)
        first = course.more()
        assert first and {slot.deal_key for slot in first} == {"g0"} and len(first) == len(first[0].table)
        assert store.groups(league.id, "open")[0].seats == first[0].table  # stored before any game
        done = [(slot, Played.games(slot)) for slot in first]
        assert not list(store.games(league.id))
        for slot, games in done[:-1]:
            store.save_slots(league.id, [[game_row(slot, 0, games[0], {})]])
            course.on_stored([(slot, games)])
        assert not list(store.games(league.id)) and store.outcomes(league.id).n_games == 0  # in flight: hidden
        slot, games = done[-1]
        store.save_slots(league.id, [[game_row(slot, 0, games[0], {})]])
        course.on_stored([(slot, games)])
        assert store.groups(league.id, "complete")[0].number == 0
        assert store.outcomes(league.id).n_games == len(first) == len(list(store.games(league.id)))

        second = course.more()
        seated = second[0].table
        store.add_request(league.id, seated[0].split("@")[0], QuarantineBot())
        course.housekeeping(force=True)
        (void,) = store.groups(league.id, "void")
        assert void.number == 1 and void.reason.startswith(f"{seated[0]}: quarantined: by the organizer")
        assert disqualified == {seated[0]: "quarantined: by the organizer"}
        assert "quarantined" in store.disqualified(league.id)[seated[0]]

        report = report_data(store, league.id).page
        assert report["header"]["format"] == "league" and report["header"]["deals"] == 1
        versions = {bot["name"]: bot for bot in report["header"]["bots"]}
        assert set(versions) == {"a@1", "b@1", "c@1", "d@1"} and versions[seated[0]]["disqualified"]
        assert versions[seated[0]]["version"].startswith("quarantined: by the organizer; by ")
        rated = {row["bot"] for row in report["leaderboard"]["rows"]}
        assert rated == set(first[0].table)  # only the complete group's versions are on the board
        assert f"quarantined: {seated[0]}: by the organizer" in report["footer"]  # marked, rated or not
        assert len(report["games"]["rows"]) == len(first)  # the void group's games (none stored) and no other

        rebuilt = rebuild_state(league.seed, store.versions(league.id), store.groups(league.id),
                                course.board.ratings, course.board.rated, course.loaded.match_settings())
        assert rebuilt.meetings == course.state.meetings and rebuilt.issued == course.state.issued == 2
        assert rebuilt.sized_meetings == course.state.sized_meetings
        assert [(v.id, v.active, v.last_seated, v.issued, v.served, v.by_size) for v in rebuilt.versions] == \
            [(v.id, v.active, v.last_seated, v.issued, v.served, v.by_size) for v in course.state.versions]


def test_a_restart_completes_a_group_whose_games_were_all_stored_before_it_was_closed(
        league_config: Path, tmp_path: Path) -> None:
    """A daemon killed (kill -9) after storing a group's last game but before closing the group: at the next
    start the group has nothing left to play; it is completed there, not left open for ever (holding its
    versions' seats in flight, and the finals, which wait for the groups in flight)."""
    loaded = load_league(league_config)
    with ArenaStore(tmp_path / "l.db") as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z"}, tmp_path)
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), {})  # type: ignore[arg-type]
        course.begin(store, league, 0, None)
        slots = course.more()
        for slot in slots:  # every game stored, and the kill before the course heard of the last one
            store.save_slots(league.id, [[game_row(slot, 0, Played.games(slot)[0], {})]])
        assert [group.number for group in store.groups(league.id, "open")] == [0]

        restarted = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), {})  # type: ignore[arg-type]
        assert not restarted.resumed() and not restarted.open and not restarted.state.in_flight
        assert not store.groups(league.id, "open") and store.groups(league.id, "complete")[0].number == 0
        assert store.outcomes(league.id).n_games == len(slots)  # rated: its summary stored with it
        assert restarted.more()  # the league goes on with the next group


def test_a_league_config_text_example_decodes(tmp_path: Path) -> None:
    """sample_bots/league.toml, the annotated reference, loads as it stands."""
    loaded = load_league(Path(__file__).resolve().parents[1] / "sample_bots" / "league.toml")
    assert [bot.name for bot in loaded.table.bots] == ["random", "heuristic", "js"]
    assert loaded.authors["js"] == "samples-js" and textwrap.dedent(loaded.text)


class FakeClient:
    """Stands in for a worker's BotClient: running once asked to start, stopped when told."""

    def __init__(self, name: str, *_: object, **__: object) -> None:
        self.name = name
        self.is_running = True
        self.stops = 0

    def stop(self, grace: float = 0.5) -> None:
        self.is_running = False
        self.stops += 1


def test_a_worker_learns_bots_from_its_jobs_stops_those_gone_and_keeps_at_most_max_live(
        league_config: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from referee.bots.sandbox.isolation import PLAIN
    from referee.tournament import worker

    monkeypatch.setattr(worker, "BotClient", FakeClient)
    table = load_league(league_config).table
    player = worker.SlotPlayer(table, PLAIN, max_live=3)
    slot = Slot(key="g0|r0", table=("a@1", "b@1"), table_key="a@1,b@1", deal=0, deal_key="g0", deal_seed=1,
                rotation=0, games=1)
    specs = [worker.BotSpec(name=name, argv=["x"], dir=str(tmp_path)) for name in ("a@1", "b@1", "c@1", "d@1")]
    player.learn(worker.Job(slot=slot, bots=specs))
    assert set(player.bots) == {"a@1", "b@1", "c@1", "d@1"} and player.bots["c@1"].dir == tmp_path
    clients = {name: player.client(name, (0, 0)) for name in ("a@1", "b@1", "c@1", "d@1")}  # d@1 used last
    player.client("a@1", (0, 0))  # a@1 used again: now the most recently used
    player._evict({("c@1", (0, 0)), ("d@1", (0, 0))})  # a slot of c@1 and d@1 is about to play
    assert [name for name, client in clients.items() if client.stops] == ["b@1"]  # the least recently used
    assert len([c for c in player.clients.values() if c.is_running]) == 3
    player.learn(worker.Job(slot=slot, gone=["a@1"]))
    assert clients["a@1"].stops == 1 and ("a@1", (0, 0)) not in player.clients


def play_groups(course: LeagueCourse, store: ArenaStore, league_id: int, groups: int) -> None:
    """Issue ``groups`` groups and store every game of each (as a worker and the coordinator would)."""
    for _ in range(groups):
        for slot in course.more():
            games = Played.games(slot)
            store.save_slots(league_id, [[game_row(slot, 0, games[0], {})]])
            course.on_stored([(slot, games)])


def test_states_are_named_as_the_readme_names_them_everywhere(league_config: Path, tmp_path: Path) -> None:
    """``retired`` and ``quarantined: why`` on the board's rows and footer, in the JSON, in durak league status
    and in the seats that forfeit; never "disqualified" for a league's version (issue 37)."""
    loaded = load_league(league_config)
    db = tmp_path / "l.db"
    with ArenaStore(db) as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z", "d": "w"}, tmp_path)
        disqualified: dict[str, str] = {}
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), disqualified)  # type: ignore[arg-type]
        course.begin(store, league, 0, None)
        play_groups(course, store, league.id, 6)
        store.add_request(league.id, "a", RetireBot())
        store.add_request(league.id, "b", QuarantineBot(reason="too slow"))
        course.housekeeping(force=True)
        assert disqualified == {"a@1": "retired", "b@1": "quarantined: too slow"}
        assert [v.state() for v in store.versions(league.id)] == ["retired", "quarantined: too slow", "active",
                                                                  "active"]
        assert [v.state(why=False) for v in store.versions(league.id)][:2] == ["retired", "quarantined"]
    board = invoke("leaderboard", str(db))
    assert "a@1 (retired)" in board.out and "b@1 (quarantined)" in board.out, board.out
    assert "disqualified" not in board.out and "retired: a@1\nquarantined: b@1: too slow" in board.out
    document = json.loads(invoke("leaderboard", str(db), "--format", "json").out)
    assert document["disqualified"] == {"a@1": "retired", "b@1": "quarantined: too slow"}
    assert {row["bot"]: row["mark"] for row in document["rows"]} == {"a@1": "retired", "b@1": "quarantined",
                                                                     "c@1": "", "d@1": ""}
    status = invoke("league", "status", str(db)).out
    assert "retired" in status and "quarantined: too slow" in status


def test_status_shows_each_versions_rated_games(league_config: Path, tmp_path: Path) -> None:
    """The rated games its --help promises: a column, from the board the daemon stored (issue 37)."""
    loaded = load_league(league_config)
    db = tmp_path / "l.db"
    with ArenaStore(db) as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z"}, tmp_path)
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), {})  # type: ignore[arg-type]
        course.begin(store, league, 0, None)
        play_groups(course, store, league.id, 4)
        course.housekeeping(force=True)
        rated = course.board.rated
    assert sum(rated.values()) > 0
    status = invoke("league", "status", str(db))
    assert status.code == 0 and "rated games" in status.out.splitlines()[0], status.out
    assert "rated games" in invoke("league", "status", "--help").out
    for name in ("a@1", "b@1", "c@1"):
        (line,) = [line for line in status.out.splitlines() if line.startswith(name)]
        assert line.split()[3] == str(rated.get(name, 0)), line


def test_a_retired_version_plays_out_its_groups_which_are_rated(league_config: Path, tmp_path: Path) -> None:
    """A retire (or an update) voids no group whose games can all be played: the version plays out the groups it
    sits in, they are rated, and only then do its seats forfeit; the progress line's active count follows at once
    (issue 37)."""
    loaded = load_league(league_config)
    with ArenaStore(tmp_path / "l.db") as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z", "d": "w"}, tmp_path)
        disqualified: dict[str, str] = {}
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), disqualified)  # type: ignore[arg-type]
        _, _, progress = course.begin(store, league, 0, None)
        assert progress.active == 4  # fresh from the start, not from the first refit
        course.housekeeping(force=True)  # the next refit is refit_seconds (1000) away
        slots = course.more()
        leaving = slots[0].table[0]
        first = slots[0]
        games = Played.games(first)
        store.save_slots(league.id, [[game_row(first, 0, games[0], {})]])
        course.on_stored([(first, games)])
        store.add_request(league.id, leaving.split("@")[0], RetireBot())
        course._next_requests = 0.0  # the requests' look is due, the refit is not
        course.housekeeping()
        assert progress.active == 3  # at once, not at the next refit
        assert not store.groups(league.id, "void") and disqualified == {} and course.retiring == {leaving: "retired"}
        assert course.job(slots[1], disqualified).disqualified == {}  # its seat is played by its process
        for slot in slots[1:]:
            games = Played.games(slot)
            store.save_slots(league.id, [[game_row(slot, 0, games[0], {})]])
            course.on_stored([(slot, games)])
        assert [g.number for g in store.groups(league.id, "complete")] == [0]
        assert store.outcomes(league.id).n_games == len(slots)  # rated
        assert disqualified == {leaving: "retired"} and course.retiring == {}  # now its seats forfeit
        assert all(leaving not in slot.table for slot in course.more())


def test_the_stored_board_lists_entered_versions_and_is_refitted_after_the_first_group(league_config: Path,
                                                                                         tmp_path: Path) -> None:
    """The web's board shows every entered version before its first rated game (unrated rows, after the rated),
    the first complete group is refitted at the next look (not refit_seconds later), and the refit at a stop
    stores every rated game (issue 37)."""
    loaded = load_league(league_config)  # refit_seconds = 1000
    with ArenaStore(tmp_path / "l.db") as store:
        league = open_league(store, loaded)
        versions_of(store, league.id, {"a": "x", "b": "y", "c": "z"}, tmp_path)
        course = LeagueCourse(store, league, loaded, Lifecycle(store, league, loaded, None), {})  # type: ignore[arg-type]
        course.begin(store, league, 0, None)
        course.housekeeping(force=True)
        assert [(r.version, r.rank, r.games, r.sd) for r in store.board(league.id)] == \
            [("a@1", 1, 0, None), ("b@1", 2, 0, None), ("c@1", 3, 0, None)]
        assert not store.rating_history(league.id, ["a@1", "b@1", "c@1"])  # unrated: no point of history
        play_groups(course, store, league.id, 1)
        course.housekeeping()
        assert course._refitting is not None  # the first group's refit, long before refit_seconds
        course._refitting.done.wait(30)
        course.housekeeping()
        rated = {r.version: r.games for r in store.board(league.id) if r.games}
        assert rated and sum(rated.values()) == len(store.outcomes(league.id).bot)  # a game per seat
        assert len(store.board(league.id)) == 3  # the version not seated yet is still listed
        play_groups(course, store, league.id, 3)
        assert sum(r.games for r in store.board(league.id)) < len(store.outcomes(league.id).bot)  # it lags
        course.final_refit()
        board = {r.version: r.games for r in store.board(league.id)}
        assert board == {name: course.board.rated.get(name, 0) for name in ("a@1", "b@1", "c@1")}
        assert sum(board.values()) == len(store.outcomes(league.id).bot) == \
            sum(len(g.seats) ** 2 for g in store.groups(league.id, "complete"))
