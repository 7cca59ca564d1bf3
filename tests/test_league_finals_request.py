"""The finals asked for from the web (a ``finals`` request): the running daemon issues no new group, completes those
in flight, lets go of the league's lock, plays the finals, records their board in the request and ends (exit 0);
entries are frozen from then on."""

from __future__ import annotations

import json
from pathlib import Path

from referee.results.arena_store import ArenaStore
from referee.results.requests import AskFinals
from tests.sandboxes import needs_bwrap
from tests.test_league_daemon import (  # noqa: F401 - the fixture
    league,
    query,
    rated_games,
    start_daemon,
    until,
)


@needs_bwrap
def test_the_daemon_plays_the_finals_the_admin_asked_for(league: tuple[Path, Path]) -> None:  # noqa: F811
    config, db = league
    (config.parent / "bots" / "other_bot.py").write_text((config.parent / "bots" / "heuristic_bot.py").read_text())
    config.write_text(config.read_text().replace('"random"', '"other"').replace("{python} random_bot.py",
                                                                                 "{python} other_bot.py"))
    daemon = start_daemon(config, db)
    until(lambda: rated_games(db, "other@1") >= 4, why="rated games of both versions")
    until(lambda: query(db, "SELECT 1 FROM league_board"), why="a board")
    with ArenaStore(db) as store:  # as the admin's page queues it
        league_row = store.league()
        assert league_row is not None
        asked = store.add_request(league_row.id, "", AskFinals(top=2, max_games=6, by="web"))
    assert daemon.wait(120) == 0
    log = db.with_suffix(".log").read_text()
    assert "finals of 'test league' (2 versions" in log, log[-2000:]
    with ArenaStore(db) as store:
        request = store.request(asked)
        assert request.status == "done" and request.result.startswith("finals of 'test league' (2 versions")
        finals = store.finals(league_row)
        assert len(finals) == 1 and sorted(json.loads(finals[0].config)["finalists"]) == ["heuristic@1", "other@1"]
        assert 0 < store.count_games(finals[0].id) <= 6
    # the groups in flight were completed before the finals: none left open
    assert not query(db, "SELECT 1 FROM league_groups WHERE status = 'open'")
