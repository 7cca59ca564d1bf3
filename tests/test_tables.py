"""The daemon's card tables (referee/league/tables.py): a person's seat relayed through the database plays league
versions (real bot processes) to the end; the game is stored unrated in the league's ``tables`` row with its replay,
dealt from the tables' own seed domain; the seat's messages are exactly its protocol messages; a person who never
answers forfeits on the clock as a bot would; a table a stopped daemon left playing ends without a game."""

from __future__ import annotations

import shutil
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from protocol.messages import GameOver, GameStart, Request, referee_decoder
from referee.bots.sandbox.isolation import PLAIN
from referee.league.config import load_league
from referee.league.tables import DAEMON_STOPPED, TableRunner, table_seed
from referee.results.arena_store import ArenaStore
from referee.results.league_store import VersionRow, bot_store
from referee.results.schema import SCHEMA_VERSION
from referee.results.table_store import TABLES_KIND, NewTable, TableRefused, TableRow
from tests.old_schemas import drop_schema_7, drop_schema_8
from tests.webdb import WebDb, build

ROOT = Path(__file__).resolve().parents[1]
CONFIG = """name = "web test league"
players = [2, 3]
sandbox = "none"
[arena]
tables_per_author = 2
tables_total = 3
table_move_seconds = {move}
table_bank_seconds = 0
"""


def league_with_bots(folder: Path, move: float = 20.0) -> tuple[WebDb, TableRunner]:
    """The web tests' league, with two versions that run sample_bots/python/random_bot.py, and its table runner."""
    db = build(folder)
    config = folder / "league.toml"
    config.write_text(CONFIG.format(move=move))
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.end_table(db.table, None, "the web tests' table, not to be played")
        for bot, author in (("rand", "bob"), ("rand2", "admin")):
            copy = bot_store(db.path) / bot / "1"  # a version runs from its store folder, whatever its row says
            copy.mkdir(parents=True)
            shutil.copy(ROOT / "sample_bots" / "python" / "random_bot.py", copy)
            store.add_version(league.id, VersionRow(
                name=f"{bot}@1", bot=bot, number=1, author=author, command=[sys.executable, "random_bot.py"],
                env={"PYTHONPATH": str(ROOT)}, dir=str(copy), sha256=bot))
    return db, TableRunner(db.path, load_league(config, with_bots=False), PLAIN)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


def open_table(db: WebDb, bots: list[str], seat: int = 0, variant: str = "podkidnoy") -> TableRow:
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        return store.open_table(league.id, NewTable("alice", variant, seat, bots), per_author=2, total=3)


def person(db: WebDb, table_id: int, stop: threading.Event) -> None:
    """Answers each request with its first legal action, as the web server would write it."""
    answered = 0
    with ArenaStore(db.path) as store:
        while not stop.wait(0.02):
            for line in store.table_messages(table_id, answered):
                answered += 1
                message = referee_decoder.decode(line)
                if isinstance(message, Request):
                    assert store.add_move(table_id, message.id, message.legal[0])
                    assert not store.add_move(table_id, message.id, message.legal[-1])  # the first answer stands


def wait_over(db: WebDb, table_id: int, timeout: float = 60.0) -> TableRow:
    deadline = time.monotonic() + timeout
    with ArenaStore(db.path) as store:
        while time.monotonic() < deadline:
            table = store.table(table_id)
            assert table is not None
            if table.status == "over":
                return table
            time.sleep(0.05)
    raise AssertionError(f"table {table_id} did not end")


@pytest.fixture
def running(folder: Path) -> Iterator[tuple[WebDb, TableRunner]]:
    db, runner = league_with_bots(folder)
    runner.start()
    yield db, runner
    runner.stop()


def test_a_person_plays_two_bots_to_the_end_unrated(running: tuple[WebDb, TableRunner]) -> None:
    db, runner = running
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        league_games = store.count_games(league.id)
    table = open_table(db, ["rand@1", "rand2@1"], seat=1)
    stop = threading.Event()
    answering = threading.Thread(target=person, args=(db, table.id, stop))
    answering.start()
    try:
        over = wait_over(db, table.id)
    finally:
        stop.set()
        answering.join()
    assert over.reason == "" and over.game_id is not None
    with ArenaStore(db.path) as store:
        messages = [referee_decoder.decode(line) for line in store.table_messages(table.id)]
        assert store.count_games(league.id) == league_games  # nothing in the league's games, nor its ratings
        row = store._query_one("SELECT g.deal_seed, t.kind, t.parent FROM games g JOIN tournaments t "
                               "ON t.id = g.tournament_id WHERE g.id = ?", (over.game_id,))
        replay, = store.replays_by_id([over.game_id])
    assert row is not None and (row["kind"], row["parent"]) == (TABLES_KIND, league.id)
    assert row["deal_seed"] == table_seed(league.seed, table.id)
    assert replay.record.players == ["rand@1", "alice", "rand2@1"]
    assert isinstance(messages[0], GameStart) and messages[0].seat == 1
    assert isinstance(messages[-1], GameOver)
    requests = [m for m in messages if isinstance(m, Request)]
    assert requests and all(m.view.seat == 1 for m in requests)
    assert {type(m) for m in messages[1:-1]} == {Request}
    assert runner.threads == {} or all(not t.is_alive() for t in runner.threads.values())


def test_a_person_who_never_answers_forfeits_on_the_clock(folder: Path) -> None:
    db, runner = league_with_bots(folder, move=0.4)
    runner.start()
    try:
        table = open_table(db, ["rand@1"], seat=0)
        over = wait_over(db, table.id, 30)
    finally:
        runner.stop()
    with ArenaStore(db.path) as store:
        assert over.game_id is not None
        replay, = store.replays_by_id([over.game_id])
        last = msgspec.json.decode(store.table_messages(table.id)[-1])
    verdict, = replay.record.verdicts
    assert (verdict.seat, verdict.kind, verdict.bot) == (0, "timeout", "alice")
    assert last["type"] == "game_over" and last["result"]["forfeit_seat"] == 0


def test_a_table_a_stopped_daemon_left_playing_ends_without_a_game(folder: Path) -> None:
    db, runner = league_with_bots(folder)
    table = open_table(db, ["rand@1"])
    with ArenaStore(db.path) as store:
        store.start_table(table.id)
    runner.start()
    runner.stop()
    with ArenaStore(db.path) as store:
        ended = store.table(table.id)
    assert ended is not None and (ended.status, ended.reason, ended.game_id) == ("over", DAEMON_STOPPED, None)


def test_the_caps_hold_per_author_and_in_all(folder: Path) -> None:
    db = build(folder)
    with ArenaStore(db.path) as store:
        league = store.league()
        assert league is not None
        store.end_table(db.table, None, "not counted")
        for _ in range(2):
            store.open_table(league.id, NewTable("alice", "podkidnoy", 0, ["beta@1"]), per_author=2, total=3)
        with pytest.raises(TableRefused, match="you have 2 open tables"):
            store.open_table(league.id, NewTable("alice", "podkidnoy", 0, ["beta@1"]), per_author=2, total=3)
        store.open_table(league.id, NewTable("bob", "podkidnoy", 0, ["beta@1"]), per_author=2, total=3)
        with pytest.raises(TableRefused, match="the arena has 3 open tables"):
            store.open_table(league.id, NewTable("admin", "podkidnoy", 0, ["beta@1"]), per_author=2, total=3)
        first = store.tables(league.id, "waiting", author="alice")[0]
        store.end_table(first.id, None, "done")
        # a place is free again
        store.open_table(league.id, NewTable("admin", "podkidnoy", 0, ["beta@1"]), per_author=2, total=3)


def test_a_schema_6_database_migrates_to_7_and_opens_tables(tmp_path: Path) -> None:
    db = build(tmp_path)
    with sqlite3.connect(db.path) as con:
        drop_schema_8(con)
        drop_schema_7(con)
        con.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        games = con.execute("SELECT COUNT(*) FROM games g JOIN tournaments t ON t.id = g.tournament_id "
                            "WHERE t.kind = 'league'").fetchone()[0]
        assert not con.execute("SELECT name FROM sqlite_master WHERE name = 'human_tables'").fetchall()
    with ArenaStore(db.path) as store:
        assert store.schema_version == SCHEMA_VERSION == 15
        league = store.league()
        assert league is not None and store.count_games(league.id) == games
        table = store.open_table(league.id, NewTable("alice", "podkidnoy", 0, ["beta@1"]), per_author=1, total=9)
        row = store.table(table.id)
        assert row is not None and row.author == "alice" and row.status == "waiting"


def test_a_table_that_hits_a_bug_ends_with_why_and_the_runner_goes_on(folder: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Without the runner's last stop the thread dies quietly and the table stays 'playing' (holding a seat of the
    caps) until the daemon restarts; with it the table ends at once, and the next one is played."""
    db, runner = league_with_bots(folder, move=0.3)
    calls = []
    real = TableRunner._clients

    def broken_once(self: TableRunner, store: ArenaStore, table: TableRow) -> list[Any]:
        calls.append(table.id)
        if len(calls) == 1:
            raise KeyError("a version the store no longer holds")
        return real(self, store, table)

    monkeypatch.setattr(TableRunner, "_clients", broken_once)
    runner.start()
    try:
        broken = wait_over(db, open_table(db, ["rand@1"]).id, 20)
        played = wait_over(db, open_table(db, ["rand@1"]).id, 30)  # nobody answers: it ends on the clock
    finally:
        runner.stop()
    assert (broken.reason, broken.game_id) == ("the table could not be played: internal error (KeyError)", None)
    assert played.game_id is not None and "KeyError" in capsys.readouterr().err
