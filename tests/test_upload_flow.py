"""An uploaded archive carried out by the league's lifecycle (the daemon's step): extracted, built in the sandbox,
what the build left checked again, then gated; each step recorded for its author, and a refusal at any step leaves
nothing behind but its record."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.league.authors import new_author
from referee.league.config import load_league
from referee.league.daemon import open_league, protected_paths
from referee.league.lifecycle import Lifecycle
from referee.results.arena_store import ArenaStore, UploadRow
from tests.clirun import invoke
from tests.entrants import c_bot, python_bot, tar_gz
from tests.sandboxes import needs_bwrap

pytestmark = needs_bwrap

ROOT = Path(__file__).resolve().parents[1]
PY_BOT = python_bot("pybot")["bot.py"]
PY_MANIFEST = python_bot("pybot")["durak-bot.toml"]
C_MANIFEST = c_bot("cbot")["durak-bot.toml"]


@pytest.fixture
def arena(open_tmp: Path) -> Iterator[tuple[ArenaStore, Lifecycle]]:
    config = open_tmp / "league.toml"
    config.write_text('name = "upload league"\nplayers = 2\n[league]\ngate_games = 1\n[arena]\nbuild_seconds = 30\n')
    loaded = load_league(config)
    db = open_tmp / "league.db"
    with ArenaStore(db) as store:
        league = open_league(store, loaded)
        new_author(store, "alice")
        new_author(store, "bob")
        yield store, Lifecycle(store, league, loaded, loaded.table.isolation(protected_paths(db)))


def upload(arena: tuple[ArenaStore, Lifecycle], author: str, bot: str, archive: bytes) -> UploadRow:
    store, lifecycle = arena
    row = store.add_upload(lifecycle.league.id, author, bot, archive, "sha")
    lifecycle.apply()
    return store.upload(row.id)


def steps(row: UploadRow) -> list[tuple[str, bool]]:
    return [(step.step, step.ok) for step in row.steps]


def test_a_python_bot_is_extracted_and_gated_then_updated(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    done = upload(arena, "alice", "pybot", tar_gz({"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}, top="pybot/"))
    assert (done.status, steps(done), done.version) == ("accepted", [("extract", True), ("gate", True)], "pybot@1")
    assert "handshake" in done.gate_log and store.archive(done.id) is None
    (version,) = store.versions(lifecycle.league.id)
    assert (version.author, version.command) == ("alice", ["python3", "-S", "bot.py"])  # the sample's manifest
    assert sorted(os.listdir(version.dir)) == ["bot.py", "durak-bot.toml"]
    assert not os.listdir(lifecycle.root / ".uploads")  # the staging folder is gone

    again = upload(arena, "alice", "pybot", tar_gz({"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}))
    assert again.status == "refused" and "did not change" in again.steps[-1].detail
    newer = upload(arena, "alice", "pybot", tar_gz({"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT + "# v2\n"}))
    assert (newer.status, newer.version) == ("accepted", "pybot@2")
    assert [v.active for v in store.versions(lifecycle.league.id)] == [False, True]  # the update retired @1


def test_a_c_bot_is_built_in_the_sandbox_checked_and_gated(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    source = (ROOT / "sample_bots" / "c" / "bot.c").read_text()
    done = upload(arena, "alice", "cbot", tar_gz({"durak-bot.toml": C_MANIFEST, "bot.c": source}))
    assert steps(done) == [("extract", True), ("build", True), ("check", True), ("gate", True)], done.steps
    assert done.status == "accepted" and done.version == "cbot@1"
    (version,) = store.versions(lifecycle.league.id)
    assert os.access(Path(version.dir) / "bot", os.X_OK) and (Path(version.dir) / "bot.c").exists()


def test_a_build_that_fails_is_refused_with_its_output(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    done = upload(arena, "alice", "cbot", tar_gz({"durak-bot.toml": C_MANIFEST, "bot.c": "int main( {"}))
    assert (done.status, steps(done)) == ("refused", [("extract", True), ("build", False)])
    assert "build failed: exit" in done.steps[-1].detail and "error" in done.build_log
    assert store.versions(lifecycle.league.id) == [] and not (lifecycle.root / "cbot").exists()


@pytest.mark.parametrize(("author", "bot", "files", "step", "why"), [
    ("bob", "pybot", {"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}, "receive", "belongs to another author"),
    ("alice", "other", {"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}, "extract", "names the bot 'pybot'"),
    ("alice", "evil", {"durak-bot.toml": 'name = "evil"\ncommand = "x"\n[env]\nLD_PRELOAD = "/x.so"\n'},
     "extract", "LD_PRELOAD"),
    ("alice", "evil", {"../escaped": "x", "durak-bot.toml": PY_MANIFEST}, "extract", ".."),
])
def test_a_refused_upload_names_its_step_and_leaves_nothing(arena: tuple[ArenaStore, Lifecycle], open_tmp: Path,
                                                            author: str, bot: str, files: dict[str, str], step: str,
                                                            why: str) -> None:
    store, lifecycle = arena
    upload(arena, "alice", "pybot", tar_gz({"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}))
    before = sorted(os.listdir(open_tmp))
    done = upload(arena, author, bot, tar_gz(files))
    assert done.status == "refused" and done.steps[-1].step == step and why in done.steps[-1].detail, done.steps
    assert [v.name for v in store.versions(lifecycle.league.id)] == ["pybot@1"]
    assert sorted(os.listdir(open_tmp)) == before and not (open_tmp / "escaped").exists()
    assert not os.listdir(lifecycle.root / ".uploads") and sorted(os.listdir(lifecycle.root)) == [".uploads", "pybot"]



def test_a_league_without_a_network_namespace_builds_nothing(open_tmp: Path) -> None:
    config = open_tmp / "league.toml"
    config.write_text('name = "process league"\nplayers = 2\nsandbox = "process"\n')
    loaded = load_league(config)
    with ArenaStore(open_tmp / "league.db") as store:
        league = open_league(store, loaded)
        lifecycle = Lifecycle(store, league, loaded, loaded.table.isolation(protected_paths(store.path)))
        done = upload((store, lifecycle), "alice", "cbot", tar_gz({"durak-bot.toml": C_MANIFEST, "bot.c": "x"}))
    assert (done.status, steps(done)) == ("refused", [("extract", True), ("build", False)])
    assert "network" in done.steps[-1].detail


def test_the_organizer_quarantines_and_reinstates_a_bot(arena: tuple[ArenaStore, Lifecycle]) -> None:
    store, lifecycle = arena
    upload(arena, "alice", "pybot", tar_gz({"durak-bot.toml": PY_MANIFEST, "bot.py": PY_BOT}))
    ran = invoke("league", "quarantine", str(store.path), "pybot", "--reason", "looks like a copy", "--wait", "10")
    assert ran.code == 0 and "quarantined pybot@1: looks like a copy" in ran.out, ran.output
    (version,) = store.versions(lifecycle.league.id)
    assert version.quarantined == "looks like a copy" and not version.active
    again = invoke("league", "quarantine", str(store.path), "pybot", "--wait", "10")
    assert again.code == 7 and "not playing" in again.out, again.output
    assert invoke("league", "reinstate", str(store.path), "pybot", "--wait", "10").code == 0
    assert store.versions(lifecycle.league.id)[0].active
