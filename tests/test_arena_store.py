"""The arena's rows: authors' tokens kept only as hashes, uploads with their requests, the board the daemon keeps."""

from __future__ import annotations

import os
import sqlite3
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from referee.league.authors import author_of_token, new_author, token_sha256
from referee.results.arena_store import ArenaStore, BoardRow, UploadStep
from referee.results.league_store import GroupRow, VersionRow
from referee.results.requests import CarryOutUpload
from referee.results.rows import decode_record
from referee.results.schema import make_private
from referee.results.stamps import stamp
from referee.results.store import StoreError
from referee.results.web_queries import WebStore
from tests.clirun import invoke
from tests.old_schemas import drop_schema_5, drop_schema_9, drop_schema_13, drop_schema_15
from tests.webdb import build, game, stored


@pytest.fixture
def store(tmp_path: Path) -> ArenaStore:
    arena = ArenaStore(tmp_path / "league.db")
    arena.create_league("test", "league.toml", "", "fingerprint", 7)
    return arena


def test_a_token_is_shown_once_and_kept_only_as_its_hash(store: ArenaStore) -> None:
    _, token = new_author(store, "alice")
    assert author_of_token(store, token) == store.author("alice")
    dump = b"".join(line.encode() for line in store._db.iterdump())
    assert token.encode() not in dump and token.split("_", 2)[2].encode() not in dump
    assert token_sha256(token).encode() in dump
    assert len(token.split("_", 2)[2]) == 43  # 256 bits, base64url


@pytest.mark.parametrize("mangle", [lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), lambda t: t + "x",
                                    lambda t: t.replace("_2_", "_1_"), lambda t: "", lambda t: "durak_1_" + "a" * 43])
def test_a_wrong_token_is_nobody(store: ArenaStore, mangle: object) -> None:
    new_author(store, "alice")
    _, bob = new_author(store, "bob")
    assert callable(mangle)
    assert mangle(bob) != bob and author_of_token(store, bob) is not None
    assert author_of_token(store, mangle(bob)) is None  # a secret under another's id included


def test_revoking_ends_the_token_and_raises_the_epoch(store: ArenaStore) -> None:
    _, token = new_author(store, "alice")
    assert store.revoke_author("alice").epoch == 1
    assert author_of_token(store, token) is None
    with pytest.raises(StoreError, match="no author 'carol'"):
        store.revoke_author("carol")


def test_a_name_taken_or_malformed_is_refused(store: ArenaStore) -> None:
    new_author(store, "alice")
    with pytest.raises(StoreError, match="cannot add author 'alice'"):
        new_author(store, "alice")
    with pytest.raises(ValueError, match="bad author name"):
        new_author(store, "<img src=x>")


def test_an_upload_is_stored_with_its_request_and_loses_its_archive_when_done(store: ArenaStore) -> None:
    league = store.league()
    assert league is not None
    upload = store.add_upload(league.id, "alice", "bot", b"archive", "00")
    (request,) = store.pending_requests(league.id)
    assert (request.kind, request.payload, upload.request_id) == ("upload", CarryOutUpload(upload.id, "alice"),
                                                                  request.id)
    store.step_upload(upload.id, "building", UploadStep("extract", True, "2 files"))
    assert store.archive(upload.id) == b"archive"
    store.step_upload(upload.id, "refused", UploadStep("build", False, "exit 2"), build_log="cc: error")
    done = store.upload(upload.id)
    assert (done.status, done.done, [s.step for s in done.steps], done.build_log) == (
        "refused", True, ["extract", "build"], "cc: error")
    assert store.archive(upload.id) is None
    assert store.upload_usage("alice", "2000-01-01") == (1, 0)  # a refused archive takes no room


def test_the_board_keeps_a_point_of_history_only_when_games_change(store: ArenaStore) -> None:
    league = store.league()
    assert league is not None
    store.save_board(league.id, [BoardRow("a@1", 1, 10.0, float("inf"), 3, "t1")])
    store.save_board(league.id, [BoardRow("a@1", 1, 11.0, 5.0, 3, "t2")])
    store.save_board(league.id, [BoardRow("a@1", 1, 12.0, 4.0, 5, "t3"), BoardRow("b@1", 2, 0.0, 4.0, 5, "t3")])
    assert [(r.version, r.elo) for r in store.board(league.id)] == [("a@1", 12.0), ("b@1", 0.0)]
    history = store.rating_history(league.id, ["a@1"])
    assert [(p.fitted, p.sd) for p in history] == [("t1", None), ("t3", 4.0)]


def test_a_rating_history_keeps_its_last_hour_whole_and_the_last_point_of_each_hour_before(
        store: ArenaStore) -> None:
    """A version gains a point at each refit that moves its games (every 40 s here, for three and a half hours):
    after each, it has every point of the hour before its newest, and of each older hour (UTC) the last point alone.
    A history saved whole (as before this rule) is thinned to the same points at the daemon's start."""
    league = store.league()
    assert league is not None
    start = datetime(2026, 12, 1, 9, 50, tzinfo=UTC)
    fitted = [stamp(start + timedelta(seconds=40 * n)) for n in range(315)]
    for games, at in enumerate(fitted, start=1):
        store.save_board(league.id, [BoardRow("a@1", 1, float(games), 1.0, games, at), BoardRow("b@1", 2, 0.0, 1.0,
                                                                                                 1, at)])
        if games % 45 == 0 or games == len(fitted):
            kept = [p.fitted for p in store.rating_history(league.id, ["a@1"])]
            assert kept == expected_history(fitted[:games]), games
    assert [p.fitted for p in store.rating_history(league.id, ["b@1"])] == fitted[:1]  # no games since: one point
    whole = sqlite3.connect(store.path)
    with whole:
        whole.executemany("INSERT OR REPLACE INTO league_rating_history (tournament_id, version, fitted, elo, sd, "
                          "games) VALUES (?, 'c@1', ?, 0, 1, ?)", [(league.id, at, n) for n, at in enumerate(fitted)])
    assert len(store.rating_history(league.id, ["c@1"])) == len(fitted)
    store.thin_history(league.id)
    assert [p.fitted for p in store.rating_history(league.id, ["c@1"])] == expected_history(fitted)
    assert [p.fitted for p in store.rating_history(league.id, ["a@1"])] == expected_history(fitted)


def expected_history(fitted: list[str]) -> list[str]:
    """The points :data:`~referee.results.arena_store.HISTORY_WHOLE` keeps of a history fitted at ``fitted``: every
    one of the hour before the newest; of those before it, the last of each hour."""
    before = datetime.fromisoformat(fitted[-1]) - timedelta(hours=1)
    older = [at for at in fitted if datetime.fromisoformat(at) < before]
    last_of_hour = {datetime.fromisoformat(at).strftime("%Y%m%d%H"): at for at in older}
    return [at for at in fitted if at not in older or last_of_hour[datetime.fromisoformat(at).strftime("%Y%m%d%H")]
            == at]


def test_the_web_key_is_drawn_once(store: ArenaStore, tmp_path: Path) -> None:
    key = store.web_key()
    assert len(key) == 32 and store.web_key() == key
    assert ArenaStore(tmp_path / "other.db").web_key() != key


def test_a_database_given_to_a_group_stays_shared(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("chown to another group needs root")
    path = tmp_path / "league.db"
    ArenaStore(path).close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    os.chown(path, -1, 65534)  # nogroup, not root's own group
    os.chmod(path, 0o660)
    make_private(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o660
    os.chown(path, -1, 0)  # back to the owner's group: private again
    make_private(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --- durak league author ---------------------------------------------------------------------------------------


def test_author_add_prints_the_token_once_and_list_never_shows_it(store: ArenaStore) -> None:
    db = str(store.path)
    added = invoke("league", "author", "add", db, "alice")
    assert added.code == 0, added.output
    token = added.out.strip()
    assert author_of_token(store, token) == store.author("alice")
    assert token not in added.err and "shown this once" in added.err
    admin = invoke("league", "author", "add", db, "organizer", "--admin")
    assert store.author("organizer") is not None and store.author("organizer").admin  # type: ignore[union-attr]
    listed = invoke("league", "author", "list", db)
    assert "alice" in listed.out and "admin" in listed.out and token not in listed.output
    assert admin.out.strip() not in listed.output
    revoked = invoke("league", "author", "revoke", db, "alice")
    assert revoked.code == 0 and author_of_token(store, token) is None


@pytest.mark.parametrize(("args", "message"), [
    (("add", "{db}", "bad name"), "bad author name"),
    (("add", "{db}", "alice"), "cannot add author 'alice'"),
    (("revoke", "{db}", "nobody"), "no author 'nobody'"),
    (("add", "{empty}", "carol"), "no database at"),
])
def test_author_commands_refuse_bad_input_in_one_line(store: ArenaStore, tmp_path: Path, args: tuple[str, ...],
                                                      message: str) -> None:
    new_author(store, "alice")
    ran = invoke("league", "author", *(a.format(db=store.path, empty=tmp_path / "empty.db") for a in args))
    assert ran.code in (2, 6), ran.output
    assert message in ran.err and len(ran.err.strip().splitlines()) == 1 and "Traceback" not in ran.err


# --- the seats' index ------------------------------------------------------------------------------------------


def seats_from_records(db: Path) -> set[tuple[str, int, int, str | None]]:
    """Each league game's seats as the records say: (version, game id, fool, verdict kind)."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT g.id, g.record FROM games g JOIN tournaments t ON t.id = g.tournament_id "
                           "WHERE t.kind = 'league'").fetchall()
    seats = set()
    for game_id, text in rows:
        record = decode_record(text)
        kinds = {v.bot: v.kind for v in record.verdicts}
        seats |= {(p, game_id, int(p in record.fools), kinds.get(p)) for p in record.players}
    return seats


def seats_stored(db: Path) -> set[tuple[str, int, int, str | None]]:
    with sqlite3.connect(db) as con:
        return set(con.execute("SELECT version, game_id, fool, verdict FROM league_seats").fetchall())


def test_each_league_games_seats_are_indexed_by_the_trigger_and_by_the_migration(tmp_path: Path) -> None:
    db = build(tmp_path).path
    expected = seats_from_records(db)
    assert expected and any(kind for *_, kind in expected) and seats_stored(db) == expected
    with sqlite3.connect(db) as con:  # a tournament's games are no league's: not indexed
        con.execute("INSERT INTO tournaments (name, created, config_path, config, fingerprint, seed, kind) "
                    "VALUES ('t', '', '', '', '', 1, 'tournament')")
        con.execute("INSERT INTO games (tournament_id, slot_key, game_index, game_key, deal_key, deal_seed, rotation, "
                    "end_reason, outcome, record, replay, stderr, finished, number) SELECT last_insert_rowid(), "
                    "slot_key, game_index, game_key, deal_key, deal_seed, rotation, end_reason, outcome, record, "
                    "replay, stderr, finished, number FROM games LIMIT 1")
    assert seats_stored(db) == expected
    with sqlite3.connect(db) as con:  # back to schema 4, as a league of that schema was
        drop_schema_5(con)
        con.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")
    ArenaStore(db).close()  # migrated: its league games' seats filled in
    assert seats_stored(db) == expected


def second_alpha(db: Path) -> None:
    """A second version of alpha (``alpha@2``), at a table of three with alpha@1 and beta@1 in a complete group and
    one open group's game: a bot whose two versions met, and whose meetings add up two versions'."""
    with ArenaStore(db) as store:
        league = store.league()
        assert league is not None
        store.add_version(league.id, VersionRow(name="alpha@2", bot="alpha", number=2, author="alice", command=["x"],
                                                env={}, dir=str(db.parent), sha256="alpha2"))
        seats = ("alpha@2", "beta@1", "alpha@1")
        for number, status in ((10, "complete"), (11, None)):
            store.issue_group(league.id, GroupRow(number=number, deal_seed=number, seats=seats, anchor="alpha@1"))
            store.save_slots(league.id, [[stored(game(list(seats), 30 + number, f"g{number}", ["", "", ""]),
                                                 number, 0)]])
            if status is not None:
                store.close_group(league.id, number, status)


def test_a_bots_meetings_are_counted_over_the_games_its_viewer_may_see(tmp_path: Path) -> None:
    """Each bot's head to head, with and without open groups' games, against a count over the games' records: a
    game counts once per pair of the bot's version and another bot's version at its table."""
    db = build(tmp_path, extra_bots={"gamma": "bob"}).path
    second_alpha(db)
    with WebStore(db) as store:
        league = store.the_league()
        bot_of = {v.name: v.bot for v in store.versions(league.id)}
        bots = sorted(set(bot_of.values()))
        assert len(bots) < len(bot_of)  # a bot with two versions: their meetings are added up
        for bot in bots:
            versions = [name for name, of in bot_of.items() if of == bot]
            for with_open in (False, True):
                shown = [g for g in store.league_games(league.id) if with_open or g.status != "open"]
                naive: dict[str, list[int]] = {}
                for game in shown:
                    for mine in (p for p in game.record.players if p in versions):
                        for other in (p for p in game.record.players if p not in versions):
                            counts = naive.setdefault(bot_of.get(other, other), [0, 0, 0])
                            counts[0] += 1
                            counts[1] += mine in game.record.fools
                            counts[2] += other in game.record.fools
                got = [(m.opponent, [m.games, m.fool, m.opponent_fool])
                       for m in store.meetings(league.id, bot, versions, with_open=with_open)]
                assert got == sorted(naive.items())


def bot_meetings_summed(con: sqlite3.Connection) -> set[tuple[object, ...]]:
    """``league_meetings`` added up by bot, in SQL: what ``league_bot_meetings`` must hold."""
    return set(con.execute(
        "SELECT m.tournament_id, COALESCE(v.bot, m.version), COALESCE(o.bot, m.opponent), SUM(m.games), SUM(m.fool), "
        "SUM(m.opponent_fool) FROM league_meetings m "
        "LEFT JOIN league_versions v ON v.tournament_id = m.tournament_id AND v.name = m.version "
        "LEFT JOIN league_versions o ON o.tournament_id = m.tournament_id AND o.name = m.opponent "
        "GROUP BY 1, 2, 3 HAVING SUM(m.games) != 0"))


def test_the_head_to_head_by_bot_follows_every_change_of_league_meetings(tmp_path: Path) -> None:
    """Each trigger of ``league_bot_meetings``: a row of ``league_meetings`` added, changed and deleted (by hand, as
    the schema-9 backfill empties it), and the sums by bot follow."""
    db = build(tmp_path).path
    second_alpha(db)
    with sqlite3.connect(db) as con:
        assert set(con.execute("SELECT * FROM league_bot_meetings")) == bot_meetings_summed(con) != set()
        con.execute("INSERT INTO league_meetings SELECT tournament_id, 'beta@1', 'stranger', 3, 1, 2 "
                    "FROM league_versions LIMIT 1")
        con.execute("UPDATE league_meetings SET games = games + 5, fool = fool + 1 WHERE version = 'alpha@2' "
                    "AND opponent = 'beta@1'")
        con.execute("DELETE FROM league_meetings WHERE version = 'alpha@1' AND opponent = 'beta@1'")
        changed = set(con.execute("SELECT * FROM league_bot_meetings"))
        assert changed == bot_meetings_summed(con)
        assert any(row[1:3] == ("beta", "stranger") for row in changed)  # no version: a bot of its own


def read_side(db: Path) -> dict[str, set[tuple[object, ...]]]:
    """The web's read side as stored (rows of zero dropped: a count of nothing is no row)."""
    with sqlite3.connect(db) as con:
        return {"games": set(con.execute("SELECT game_id, tournament_id, number, deal_key, players, verdicts "
                                          "FROM league_games")),
                "verdicts": set(con.execute("SELECT * FROM league_verdicts")),
                "counts": set(con.execute("SELECT * FROM league_game_counts WHERE games > 0")),
                "meetings": set(con.execute("SELECT * FROM league_meetings")),
                "bot meetings": set(con.execute("SELECT * FROM league_bot_meetings")),
                "version seats": set(con.execute("SELECT * FROM league_version_seats WHERE seats > 0"))}


def read_side_from_records(db: Path) -> dict[str, set[tuple[object, ...]]]:
    """The same, counted in Python from every league game's record."""
    side: dict[str, set[tuple[object, ...]]] = {"games": set(), "verdicts": set(), "counts": set(), "meetings": set(),
                                                "bot meetings": set(), "version seats": set()}
    counts: dict[tuple[int, int], int] = {}
    seats: dict[tuple[int, str], int] = {}
    met: dict[tuple[int, str, str], list[int]] = {}
    with sqlite3.connect(db) as con:
        bot_of = dict(con.execute("SELECT name, bot FROM league_versions").fetchall())
        rows = con.execute("SELECT g.id, g.tournament_id, g.number, g.deal_key, g.record FROM games g JOIN "
                           "tournaments t ON t.id = g.tournament_id AND t.kind = 'league'").fetchall()
    for game_id, league, number, deal, text in rows:
        record = decode_record(text)
        side["games"].add((game_id, league, number, deal, len(record.players), len(record.verdicts)))
        side["verdicts"] |= {(league, v.kind, number, game_id) for v in record.verdicts}
        counts[league, len(record.players)] = counts.get((league, len(record.players)), 0) + 1
        for me in record.players:
            seats[league, me] = seats.get((league, me), 0) + 1
            for other in record.players:
                if other != me:
                    row = met.setdefault((league, me, other), [0, 0, 0])
                    row[0] += 1
                    row[1] += me in record.fools
                    row[2] += other in record.fools
    side["counts"] = {(*key, n) for key, n in counts.items()}
    side["meetings"] = {(*key, *row) for key, row in met.items()}
    side["version seats"] = {(*key, n) for key, n in seats.items()}
    by_bot: dict[tuple[int, str, str], list[int]] = {}
    for (league, me, other), row in met.items():  # each pair of versions, added up by their bots
        summed = by_bot.setdefault((league, bot_of.get(me, me), bot_of.get(other, other)), [0, 0, 0])
        summed[:] = [a + b for a, b in zip(summed, row, strict=True)]
    side["bot meetings"] = {(*key, *row) for key, row in by_bot.items()}
    return side


def test_the_webs_read_side_is_kept_by_the_triggers_and_filled_by_the_migration(tmp_path: Path) -> None:
    db = build(tmp_path, extra_bots={"gamma": "bob"}).path
    second_alpha(db)
    expected = read_side_from_records(db)
    assert all(expected.values()) and read_side(db) == expected
    with sqlite3.connect(db) as con:  # a game superseded (moved out of games): out of every count
        con.execute("DELETE FROM games WHERE id = (SELECT MAX(game_id) FROM league_games)")
    expected = read_side_from_records(db)
    assert read_side(db) == expected
    with sqlite3.connect(db) as con:  # back to schema 14, as a league of that schema was
        drop_schema_15(con)
        con.execute("UPDATE meta SET value = '14' WHERE key = 'schema_version'")
    ArenaStore(db).close()  # migrated: each version's seats counted from the seats
    assert read_side(db) == expected
    with sqlite3.connect(db) as con:  # back to schema 12, as a league of that schema was
        drop_schema_13(con)
        con.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    ArenaStore(db).close()  # migrated: the head to head by bot filled from league_meetings
    assert read_side(db) == expected
    with sqlite3.connect(db) as con:  # back to schema 8, as a league of that schema was
        drop_schema_9(con)
        con.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    ArenaStore(db).close()  # migrated: filled from the games and seats
    assert read_side(db) == expected
