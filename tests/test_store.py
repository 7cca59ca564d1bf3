"""The results store on its own: what is saved reads back by name, every read path fails with one line, a
schema-1 database reads with its defaults, superseding moves only the named bots' games, and a game's number is
its own for good (schema 3), migrated from the numbers schema 2 computed."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from old_schemas import drop_schema_5

from protocol.records import ResultRecord, StderrChunk
from referee.rating.outcomes import outcome_players, outcome_text, parse_outcome
from referee.results.rows import SlotSeeds
from referee.results.store import SCHEMA_VERSION, BotRow, Store, StoredGame, StoreError


def record(game: str, players: list[str], fool: str) -> ResultRecord:
    order = [[p] for p in players if p != fool] + [[fool]]
    return ResultRecord(game=game, deal=f"d{game}", variant="podkidnoy", players=players, order=order, fools=[fool],
                        end="fool")


def stored(slot: str, players: list[str], fool: str) -> StoredGame:
    return StoredGame(slot, 0, 7, 1, record(f"{slot}-g", players, fool), f"replay of {slot}\n".encode(),
                      [[StderrChunk(2, f"{players[0]} thinks\n")], []], move_us=[[100, 250], [300]],
                      bot_files=["a" * 64, "b" * 64])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database of one tournament: bots a, b (disqualified) and c; games a-b, b-c, a-c in that order."""
    path = tmp_path / "r.db"
    with Store(path) as store:
        tournament = store.create_tournament("t", "t.toml", "name = 't'", "f", 42)
        for name in "abc":
            store.save_bot(tournament.id, BotRow(name, ["python", f"{name}.py"], "bots", "0" * 64, "1.0",
                                                 settings='{"x": 1}', files={f"{name}.py": "1" * 64}))
        store.disqualify(tournament.id, "b", "crashed 3 games in a row")
        store.save_slots(tournament.id, [[stored("s1", ["a", "b"], "b")], [stored("s2", ["b", "c"], "c")],
                                         [stored("s3", ["a", "c"], "a")]])
    return path


def test_what_is_saved_reads_back_by_every_path(db: Path) -> None:
    with Store(db, create=False) as store:
        tournament = store.tournament()
        assert (tournament.name, tournament.config, tournament.seed) == ("t", "name = 't'", 42)
        assert [(t.id, t.active, t.games) for t in store.tournaments()] == [(1, True, 3)]
        bots = store.bots(tournament.id)
        assert bots["a"] == BotRow("a", ["python", "a.py"], "bots", "0" * 64, "1.0", settings='{"x": 1}',
                                   files={"a.py": "1" * 64})
        assert store.disqualified() == {"b": "crashed 3 games in a row"}
        games = list(store.games())
        assert [(g.number, g.record.game, g.move_us) for g in games] == [
            (1, "s1-g", [[100, 250], [300]]), (2, "s2-g", [[100, 250], [300]]), (3, "s3-g", [[100, 250], [300]])]
        assert [r.game for r in store.records()] == ["s1-g", "s2-g", "s3-g"]
        first = next(store.deals(stderr=True))
        assert first.stderr == [[StderrChunk(2, "a thinks\n")], []] and next(store.deals()).stderr is None
        assert (first.seeds, first.replay) == (SlotSeeds(7, 1, 0), zlib.compress(b"replay of s1\n", 6))
        second = store.replay("2")
        assert (second.number, second.replay, second.record.players) == (2, b"replay of s2\n", ["b", "c"])
        assert store.replay("s3-g").number == 3
        assert [r.id for r in store.replays_by_id([games[2].id, games[0].id])] == [games[0].id, games[2].id]
        outcomes = store.outcomes()
        assert outcomes.bots == ("a", "b", "c") and outcomes.n_games == 3
        assert outcomes.disqualified == {"b": "crashed 3 games in a row"}
        assert store.slot_outcomes(tournament.id)["s2"] == ["b c|1 2|1"]
        assert (store.count_games(tournament.id), store.stored_slots(tournament.id)) == (3, {"s1", "s2", "s3"})


# Each read path, run to its end: ``games`` and the record iterators are lazy, so they fail as they are read.
READS: dict[str, Callable[[Store], Any]] = {
    "tournaments": lambda s: s.tournaments(),
    "bots": lambda s: s.bots(1),
    "disqualified": lambda s: s.disqualified(),
    "games": lambda s: list(s.games()),
    "records": lambda s: list(s.records()),
    "record_texts": lambda s: list(s.record_texts(1)),
    "deals": lambda s: list(s.deals(1, stderr=True)),
    "outcomes": lambda s: s.outcomes(1),
    "replay": lambda s: s.replay("1", 1),
    "replays_by_id": lambda s: list(s.replays_by_id([1])),
    "slot_outcomes": lambda s: s.slot_outcomes(1),
    "stored_slots": lambda s: s.stored_slots(1),
    "count_games": lambda s: s.count_games(1),
    "bots_with_games": lambda s: s.bots_with_games(1),
}


@pytest.mark.parametrize("read", READS)
def test_every_read_path_fails_with_one_line_naming_the_database(db: Path, read: str) -> None:
    table = "bots" if read in ("bots", "disqualified") else "games"
    with Store(db, create=False) as store:
        assert READS[read](store) is not None  # control: it reads while the table is there
        with sqlite3.connect(db) as con:
            con.execute(f"DROP TABLE {table}")
        with pytest.raises(StoreError) as caught:
            READS[read](store)
    assert str(caught.value) == f"cannot read {str(db)!r}: no such table: {table}"


def test_a_failed_write_is_rolled_back_and_one_line(db: Path) -> None:
    with Store(db) as store:
        with pytest.raises(StoreError, match=r"^cannot write '.*r\.db': UNIQUE constraint failed"):
            store.save_slots(1, [[stored("s4", ["a", "c"], "c")], [stored("s5", ["a", "c"], "c")] * 2])
        assert store.count_games(1) == 3
        with pytest.raises(ZeroDivisionError), store._transaction():  # not SQLite's: rolled back, not reworded
            store._db.execute("DELETE FROM games")
            _ = 1 / 0
        assert store.count_games(1) == 3


def test_a_schema_1_database_reads_with_its_defaults(db: Path) -> None:
    with sqlite3.connect(db) as con:
        drop_schema_5(con)
        for table, column in (("bots", "settings"), ("bots", "files"), ("bots", "reason"), ("games", "move_us"),
                              ("games", "bot_files")):
            con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    with Store(db, create=False) as store:
        assert store.schema_version == 1
        assert store.bots(1)["a"] == BotRow("a", ["python", "a.py"], "bots", "0" * 64, "1.0")
        assert store.disqualified() == {"b": "failed too many games in a row"}  # schema 1 kept no reasons
        assert [g.move_us for g in store.games()] == [None, None, None]
        assert store.replay("1").move_us is None


def test_superseding_moves_only_the_games_of_the_named_bots(db: Path) -> None:
    with Store(db) as store:
        assert store.bots_with_games(1) == {"a", "b", "c"}
        assert store.supersede(1, ["c"], "bot c replaced") == 2
        assert store.stored_slots(1) == {"s1"} and store.bots_with_games(1) == {"a", "b"}
        assert store.supersede(1, ["nobody"], "-") == 0
        moved = store._db.execute("SELECT slot_key, superseded FROM superseded_games ORDER BY slot_key").fetchall()
    assert [tuple(row) for row in moved] == [("s2", "bot c replaced"), ("s3", "bot c replaced")]


def test_outcome_players_are_the_players_the_outcome_text_parses_to() -> None:
    hostile = ["<img src=x onerror=\"1\">", "a|b", "tab\there", "x"]  # names no config allows, in a raw row
    for players in (["a", "b"], ["alice", "bob", "carol", "dave"], hostile):
        text = outcome_text(record("g", players, players[-1]))
        assert outcome_players(text) == parse_outcome(text)[0] == players
        assert parse_outcome(text)[1:] == (list(range(1, len(players) + 1)), True)
    assert outcome_text(record("g", ["a", "b"], "b")) == "a b|1 2|1"  # the plain text of every stored database


def numbers(store: Store) -> dict[str, int]:
    return {g.record.game: g.number for g in store.games()}


def test_a_games_number_is_given_once_when_stored_and_kept_when_superseded(db: Path) -> None:
    with Store(db) as store:
        assert numbers(store) == {"s1-g": 1, "s2-g": 2, "s3-g": 3}
        store.supersede(1, ["b"], "bot b replaced")  # s1 and s2 move to history: s3 keeps 3
        assert numbers(store) == {"s3-g": 3}
        assert store.save_slots(1, [[stored("s1", ["a", "b"], "a")], [stored("s3", ["a", "c"], "a")],
                                    [stored("s2", ["b", "c"], "b")]]) == [True, False, True]
        assert numbers(store) == {"s3-g": 3, "s1-g": 4, "s2-g": 5}  # the replays: new numbers, none reused
        store.supersede(1, ["b"], "bot b replaced again")
        store.save_slot(1, [stored("s2", ["b", "c"], "c")])
        assert numbers(store) == {"s3-g": 3, "s2-g": 6}
        assert store.replay("6").record.fools == ["c"] and store.replay("s2-g").number == 6
        old = store.replay("2")  # a superseded game's number finds it in the history, not its replacement
        assert (old.number, old.record.game, old.record.fools, old.superseded) == (2, "s2-g", ["c"], "bot b replaced")
        assert store.replay("5").superseded == "bot b replaced again" and not store.replay("3").superseded
        other = store.create_tournament("u", "u.toml", "name = 'u'", "f", 43)  # numbers are per tournament
        store.save_slot(other.id, [stored("s1", ["a", "b"], "a")])
        assert numbers(store) == {"s1-g": 1}
        with pytest.raises(StoreError, match="no game '7' in tournament 1"):
            store.replay("7", 1)
    with sqlite3.connect(db) as con:
        assert sorted(con.execute("SELECT number FROM superseded_games").fetchall()) == [(1,), (2,), (4,), (5,)]


def as_schema_2(path: Path) -> None:
    """The database as schema 2 left it: no number columns (a game's number was its place by id)."""
    with sqlite3.connect(path) as con:
        drop_schema_5(con)
        con.execute("DROP INDEX games_by_number")
        con.execute("DROP INDEX superseded_by_number")
        con.execute("ALTER TABLE games DROP COLUMN number")
        con.execute("ALTER TABLE superseded_games DROP COLUMN number")
        for table in ("league_versions", "league_groups", "league_requests"):  # schema 4's
            con.execute(f"DROP TABLE {table}")
        con.execute("ALTER TABLE tournaments DROP COLUMN kind")
        con.execute("ALTER TABLE tournaments DROP COLUMN parent")
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")


def test_a_schema_2_database_keeps_its_numbers_read_only_and_through_the_migration(db: Path) -> None:
    with Store(db) as store:
        store.supersede(1, ["c"], "bot c replaced")  # s2, s3 to history; schema 2 numbered s1 1 and nothing else
        store.save_slots(1, [[stored("s3", ["a", "c"], "c")], [stored("s2", ["b", "c"], "b")]])
        store.supersede(1, ["a"], "bot a replaced")  # s1, s3 to history: s2 stays, the first of the games left
        store.save_slot(1, [stored("s1", ["a", "b"], "a")])
        other = store.create_tournament("u", "u.toml", "name = 'u'", "f", 43)
        store.save_slots(other.id, [[stored("x1", ["a", "b"], "a")], [stored("x2", ["a", "b"], "b")]])
    as_schema_2(db)
    with Store(db, create=False) as store:  # read-only: not migrated, numbered as schema 2 numbered them
        assert store.schema_version == 2
        before = numbers(store), {g.record.game: g.number for g in store.games(1)}
        assert before == ({"x1-g": 1, "x2-g": 2}, {"s2-g": 1, "s1-g": 2})
        assert store.replay("2", 1).record.game == "s1-g" and store.replay("2", 1).number == 2
    with Store(db) as store:  # the writer migrates
        assert store.schema_version == SCHEMA_VERSION
        assert (numbers(store), {g.record.game: g.number for g in store.games(1)}) == before
        assert store.replay("2", 1).record.game == "s1-g"
        assert [store.replay(str(n), 1).record.game for n in (3, 4, 5, 6)] == ["s2-g", "s3-g", "s1-g", "s3-g"]
        assert store.replay("3", 1).superseded == "bot c replaced"
        store.save_slot(1, [stored("s9", ["a", "b"], "a")])  # after every number given, superseded ones too
        assert {g.record.game: g.number for g in store.games(1)}["s9-g"] == 7
        store.save_slot(2, [stored("x3", ["a", "b"], "a")])
        assert numbers(store)["x3-g"] == 3
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert "games_by_number" in {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
