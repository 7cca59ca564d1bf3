"""The daemon plays unrated side games (challenges) beside the league's (issue 27): each request's games on deals of
its asker's own seed domain, into a row of its own; the league keeps playing; no fit, board or quarantine counts
them; a request whose version stops playing is void."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import msgspec

from protocol.records import ResultRecord
from referee.engine.rng import derive_seed
from referee.league.board import refit
from referee.league.config import LoadedLeague, load_league
from referee.league.daemon import LeagueCoordinator
from referee.league.private import LeaguePrivate
from referee.league.side import SideQueue
from referee.results.arena_store import ArenaStore
from referee.results.league_store import VersionRow
from referee.results.record import GameRecord
from referee.results.rows import StoredGame, TournamentRow
from referee.tournament.coordinator import Coordinator
from tests.entrants import crashing_bot
from tests.sandboxes import needs_bwrap
from tests.test_league_daemon import (  # noqa: F401 - the fixture
    config_text,
    league,
    query,
    start_daemon,
    until,
)
from tests.webdb import LEAGUE_CONFIG, WebDb, build, game

#: Crashes in every side game only, so it passes its gate.
SIDE_CRASHER = crashing_bot("sidecrasher", "s", "|d")


def side_status(db: Path, side: int) -> str:
    rows = query(db, "SELECT status FROM side_requests WHERE id = ?", (side,))
    return str(rows[0][0]) if rows else ""


@needs_bwrap
def test_the_daemon_plays_challenges_unrated_on_the_askers_deals(league: tuple[Path, Path]) -> None:  # noqa: F811
    config, db = league
    bots = config.parent / "bots"
    (bots / "crasher_bot.py").write_text(SIDE_CRASHER)
    (bots / "other_bot.py").write_text((bots / "heuristic_bot.py").read_text())  # needs no package of ours
    config.write_text(config_text(["other", "heuristic", "crasher"]))
    daemon = start_daemon(config, db)
    until(lambda: len(query(db, "SELECT name FROM league_versions")) == 3, why="the three versions pass their gates")
    with ArenaStore(db) as store:  # as the web server queues them
        league_row = store.league()
        assert league_row is not None
        fair = store.add_side(league_row.id, "challenge", "other-author", ("other@1", "heuristic@1"), 5)
        crashing = store.add_side(league_row.id, "challenge", "crasher-author", ("crasher@1", "other@1"), 4)
        ghost = store.add_side(league_row.id, "challenge", "other-author", ("other@1", "ghost@1"), 2)
    until(lambda: side_status(db, fair.id) == "done" and side_status(db, crashing.id) == "done", 90,
          why="both challenges played")
    assert side_status(db, ghost.id) == "void"
    assert query(db, "SELECT result FROM side_requests WHERE id = ?", (ghost.id,))[0][0] == \
        "ghost@1 no longer plays (not a version of the league)"
    league_games = query(db, "SELECT COUNT(*) FROM games WHERE tournament_id = ?", (league_row.id,))[0][0]
    assert league_games > 0  # the league kept playing
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(30) == 0  # a stop as asked is the daemon's normal end

    with ArenaStore(db) as store:
        for side, author in ((fair, "other-author"), (crashing, "crasher-author")):
            row = store.side(side.id)
            assert row.status == "done" and row.result == f"{side.games} games played"
            assert row.tournament_id is not None
            kind, parent = query(db, "SELECT kind, parent FROM tournaments WHERE id = ?", (row.tournament_id,))[0]
            assert (kind, parent) == ("side", league_row.id)
            league_seed = LeaguePrivate(db).with_seed(league_row).seed  # the daemon keeps it out of the database
            seed = derive_seed(league_seed, "league", "side", author, side.id)
            stored = query(db, "SELECT slot_key, deal_seed, rotation FROM games WHERE tournament_id = ? ORDER BY id",
                           (row.tournament_id,))
            expected = {f"s{side.id}|d{i // 2}|r{i % 2}": (derive_seed(seed, i // 2), i % 2) for i in range(side.games)}
            assert {key: (deal_seed, rotation) for key, deal_seed, rotation in stored} == expected
        # the askers' deals are none of the league's
        league_seeds = {s for (s,) in query(db, "SELECT deal_seed FROM games WHERE tournament_id = ?",
                                            (league_row.id,))}
        side_seeds = {s for (s,) in query(db, "SELECT deal_seed FROM games WHERE tournament_id != ?",
                                          (league_row.id,))}
        assert side_seeds and not side_seeds & league_seeds
        # the crasher lost every side game by a crash, yet is not quarantined (max_failures 3): side games count for
        # nothing (its league games between them would reset a run too: the control is the next test's)
        crashes = query(db, "SELECT COUNT(*) FROM games WHERE tournament_id = ? AND record LIKE "
                            "'%\"bot\":\"crasher@1\",\"kind\":\"crash\"%'", (store.side(crashing.id).tournament_id,))
        assert crashes[0][0] == 4
        assert query(db, "SELECT quarantined FROM league_versions WHERE name = 'crasher@1'")[0][0] is None
        # the fit reads the league's games of complete groups only: as many as those, not one side game more
        rated = query(db, "SELECT COUNT(*) FROM games g JOIN league_groups lg ON lg.tournament_id = g.tournament_id "
                          "AND lg.deal_key = g.deal_key WHERE lg.status = 'complete'")[0][0]
        assert refit(store, league_row.id).n_games == rated


class QueueBench(NamedTuple):
    """The web tests' league as a side queue sees it, without a daemon."""

    db: WebDb
    store: ArenaStore
    league: TournamentRow
    loaded: LoadedLeague
    versions: dict[str, VersionRow]


@contextmanager
def queue_bench(tmp_path: Path) -> Iterator[QueueBench]:
    db = build(tmp_path)
    (tmp_path / "league.toml").write_text(LEAGUE_CONFIG)
    loaded = load_league(tmp_path / "league.toml", text=LEAGUE_CONFIG, with_bots=False, sandbox="none")
    with ArenaStore(db.path) as store:
        league_row = store.league()
        assert league_row is not None
        yield QueueBench(db, store, league_row, loaded, {v.name: v for v in store.versions(league_row.id)})


def test_side_games_hold_one_worker_at_most_and_resume_after_a_restart(tmp_path: Path) -> None:
    """Low priority: the queue hands one side game, then nothing until it is stored; a new queue (a restarted
    daemon) resumes the request it was playing at its first unstored game."""
    with queue_bench(tmp_path) as (_, store, league_row, loaded, versions):
        side = store.add_side(league_row.id, "challenge", "bob", ("beta@1", "alpha@1"), 3)
        queue = SideQueue(store, league_row, loaded)
        first = queue.more(versions, {})
        assert [slot.key for slot in first] == [f"s{side.id}|d0|r0"]
        assert queue.more(versions, {}) == []  # one in flight: nothing more
        tournament = queue.tournament_of(first[0])
        store.save_slots(tournament, [[StoredGame(slot_key=first[0].key, game_index=0, deal_seed=first[0].deal_seed,
                                                  rotation=0, record=_any_record(store), replay=b"", stderr=[])]])
        queue.on_stored(first[0])
        again = SideQueue(store, league_row, loaded)  # a restart
        assert [slot.key for slot in again.more(versions, {})] == [f"s{side.id}|d0|r1"]
        again.stop("alpha@1", "retired")
        void = store.side(side.id)
        assert void.status == "void" and void.result == "alpha@1 no longer plays (retired)"


def _any_record(store: ArenaStore) -> ResultRecord:
    league_row = store.league()
    assert league_row is not None
    return next(store.records(league_row.id))


def test_side_games_count_for_nothing_towards_a_quarantine() -> None:
    """Three crashes in a row: in side games, the league's coordinator ignores them; the tournament's coordinator
    (the control) and league games quarantine."""
    def crashes(deal: str) -> list[GameRecord]:
        return [game(["a@1", "b@1"], seed, deal, ["", ""], crash="exit 1") for seed in range(3)]

    def quarantined(kind: type[Coordinator], deal: str) -> list[str]:
        coordinator = kind(None, None, None, None, 3, {})  # type: ignore[arg-type]
        return [name for name, _ in coordinator.newly_disqualified(crashes(deal))]

    assert quarantined(LeagueCoordinator, "s1|d0") == []
    assert quarantined(Coordinator, "s1|d0") == ["a@1"]
    assert quarantined(LeagueCoordinator, "g1") == ["a@1"]


def test_a_side_game_handed_back_twice_goes_to_its_requests_row(tmp_path: Path) -> None:
    """A cluster may hand back a game stored already, after its request is over: it is routed by its key."""
    with queue_bench(tmp_path) as (db, store, league_row, loaded, versions):
        side = store.add_side(league_row.id, "challenge", "bob", ("beta@1", "alpha@1"), 1)
        queue = SideQueue(store, league_row, loaded)
        slot, = queue.more(versions, {})
        row = queue.tournament_of(slot)
        queue.on_stored(slot)
        assert store.side(side.id).status == "done"
        assert SideQueue(store, league_row, loaded).tournament_of(slot) == row == store.side(side.id).tournament_id
        earlier = store.side(db.challenges["alice"])
        assert queue.tournament_of(msgspec.structs.replace(slot, deal_key=f"s{earlier.id}|d0")) == \
            earlier.tournament_id
