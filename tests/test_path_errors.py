"""Every command that takes a database or an output path: a missing database, a missing folder, a file where the
folder should be, or a folder this user may not write is one line on stderr and exit code 6, before any work, and
nothing is created for a mistyped path (issue 38, item 18)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import invoke
from test_tournament_run import write_config

from referee.cli.exitcodes import ExitCode
from referee.tournament.config import load_config
from referee.tournament.runner import RunRequest, run_tournament

ROOT = Path(__file__).resolve().parent.parent
LEAGUE = ROOT / "sample_bots" / "league.toml"
PYTHON_DIR = ROOT / "sample_bots" / "python"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tournament's database (two games), for the commands that read one and write a file."""
    folder = tmp_path_factory.mktemp("stored")
    db = folder / "t.db"
    run_tournament(load_config(write_config(folder, {"a": "play", "b": "play"}, deals=1)),
                   RunRequest(db, jobs=1), io.StringIO())
    return db


def _refused(args: list[str], path: Path, why: str) -> str:
    ran = invoke(*args)
    assert ran.code == ExitCode.DATABASE, (args, ran.output)
    lines = ran.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("durak: error: "), (args, ran.err)
    assert str(path) in lines[0] and why in lines[0], (args, lines[0])
    assert "internal error" not in ran.output
    return lines[0]


def _writers(stored: Path, target: Path) -> dict[str, list[str]]:
    """Each command with the file it would write at ``target``."""
    config = str(write_config(stored.parent, {"a": "play", "b": "play"}, deals=1))
    bots = ["{python} " + str(ROOT / "tests" / "hostile" / "bot.py")] * 2
    return {
        "tournament --db": ["tournament", config, "--db", str(target)],
        "tournament --report": ["tournament", config, "--db", str(stored), "--report", str(target)],
        "sprt --db": ["sprt", config, "a", "b", "--elo0", "0", "--elo1", "50", "--db", str(target)],
        "league run --db": ["league", "run", str(LEAGUE), "--db", str(target)],
        "report -o": ["report", str(stored), "-o", str(target)],
        "seed -o": ["seed", str(stored), "-o", str(target)],
        "export -o": ["export", str(stored), "-o", str(target)],
        "replay --html": ["replay", str(stored), "1", "--html", str(target)],
        "play --log": ["play", *bots, "--log", str(target)],
        "play --html": ["play", *bots, "--html", str(target)],
    }


WRITERS = ["tournament --db", "tournament --report", "sprt --db", "league run --db", "report -o", "seed -o",
           "export -o", "replay --html", "play --log", "play --html"]


@pytest.mark.parametrize("command", WRITERS)
def test_a_missing_folder_to_write_in_is_one_line_and_exit_6(stored: Path, tmp_path: Path, command: str) -> None:
    folder = tmp_path / "srv" / "durak"
    target = folder / "out.db"
    line = _refused(_writers(stored, target)[command], target, f"no folder {str(folder)!r}")
    assert f"mkdir -p {folder}" in line  # says what to do
    assert not (tmp_path / "srv").exists()


@pytest.mark.parametrize("command", WRITERS)
def test_a_file_where_the_folder_should_be_is_one_line_and_exit_6(stored: Path, tmp_path: Path,
                                                                 command: str) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("")
    _refused(_writers(stored, blocker / "out.db")[command], blocker / "out.db", f"{str(blocker)!r} is not a folder")


def test_an_unwritable_folder_is_one_line_and_exit_6_and_reading_still_works(stored: Path, tmp_path: Path) -> None:
    """Run in a mount namespace where the tournament's folder is a read-only bind (as root too): a tournament or
    a league cannot write there, a page cannot be written beside the database, and reading works."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "sh", "-c", f"mount --bind -o ro {tmp_path} {tmp_path}"]).returncode != 0:
        pytest.skip("no mount namespace here for a read-only bind mount")
    db = tmp_path / "t.db"
    shutil.copy(stored, db)
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    read_only = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && shift && exec "$@"', str(tmp_path),
                 "-", sys.executable, "-m", "referee"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command in (["tournament", str(config), "--db", str(tmp_path / "new.db")],
                    ["league", "run", str(LEAGUE), "--db", str(tmp_path / "l.db")],
                    ["report", str(db)], ["export", str(db), "-o", str(tmp_path / "e.jsonl")]):
        done = subprocess.run([*read_only, *command], capture_output=True, text=True, timeout=60, env=environ)
        assert done.returncode == ExitCode.DATABASE, (command, done.stderr)
        assert done.stderr.count("\n") == 1 and "is not writable by this user" in done.stderr, (command, done.stderr)
    done = subprocess.run([*read_only, "games", str(db)], capture_output=True, text=True, timeout=60, env=environ)
    assert done.returncode == 0, done.stderr


READERS = {
    "tournaments": ["tournaments"], "games": ["games"], "seed": ["seed"], "export": ["export"],
    "report": ["report"], "leaderboard": ["leaderboard"], "replay": ["replay", "{db}", "1"],
    "league status": ["league", "status"], "league author list": ["league", "author", "list"],
    "league author add": ["league", "author", "add", "{db}", "alice"],
    "league author revoke": ["league", "author", "revoke", "{db}", "alice"],
    "league add": ["league", "add", "{db}", "x", "--dir", str(PYTHON_DIR), "--command", "{python} random_bot.py"],
    "league update": ["league", "update", "{db}", "x", "--dir", str(PYTHON_DIR)],
    "league retire": ["league", "retire", "{db}", "x"], "league reinstate": ["league", "reinstate", "{db}", "x"],
    "league quarantine": ["league", "quarantine", "{db}", "x"],
    "league finals": ["league", "finals", "{db}", "--top", "2"], "serve": ["serve"],
}


@pytest.mark.parametrize("command", READERS)
@pytest.mark.parametrize("where", ["missing file", "missing folder"])
def test_a_database_that_is_not_there_is_one_line_and_exit_6_and_nothing_is_made(tmp_path: Path, command: str,
                                                                                  where: str) -> None:
    db = tmp_path / "league.db" if where == "missing file" else tmp_path / "srv" / "league.db"
    args = READERS[command]
    args = [str(db) if word == "{db}" else word for word in args] if "{db}" in args else [*args, str(db)]
    line = _refused(args, db, "no ")
    assert f"at {str(db)!r}" in line
    if command.startswith("league") or command == "serve":
        assert "durak league run CONFIG --db" in line  # which command makes one
    assert sorted(tmp_path.iterdir()) == []  # no empty database, no lock file for a mistyped path
