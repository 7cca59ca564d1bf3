"""The tournament seed as a secret: seed files (referee.tournament.secret), the private database, and the
tournament's seed flow: drawn or --seed-file, kept in the database only, never printed, `durak seed` on request."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from clirun import invoke
from configs import Bot, write_toml

from referee.results.store import Store
from referee.tournament.config import load_config
from referee.tournament.secret import SeedFileError, read_seed_file, write_seed_file

HOSTILE = Path(__file__).parent / "hostile"
IS_ROOT = os.geteuid() == 0


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def private_file(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


# --- seed files -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["5", "  20261129\n", str(2**63 - 1)])
def test_a_private_seed_file_is_read(tmp_path: Path, text: str) -> None:
    assert read_seed_file(private_file(tmp_path / "seed", text)) == int(text)


@pytest.mark.parametrize("bits", [0o640, 0o604, 0o644, 0o620, 0o602])
def test_a_seed_file_open_to_group_or_others_is_refused(tmp_path: Path, bits: int) -> None:
    path = private_file(tmp_path / "seed", "5")
    path.chmod(bits)
    with pytest.raises(SeedFileError) as caught:
        read_seed_file(path)
    assert str(caught.value) == (f"seed file {path}: mode {bits:o} lets group or others at it (bots may be able to "
                                 f"read it): chmod 600 {path}")


@pytest.mark.parametrize("text", ["", "x", "-1", "1.5", "1 2", str(2**63), "٣", "5" * 70])
def test_a_seed_file_must_hold_one_integer(tmp_path: Path, text: str) -> None:
    with pytest.raises(SeedFileError, match=r"must hold one integer from 0 to 2\*\*63 - 1 and nothing else$"):
        read_seed_file(private_file(tmp_path / "seed", text))


def test_a_seed_file_that_is_missing_a_fifo_or_another_users_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SeedFileError, match=r"cannot read it: No such file or directory$"):
        read_seed_file(tmp_path / "missing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    start = time.monotonic()
    with pytest.raises(SeedFileError, match=r"fifo: not a regular file$"):
        read_seed_file(fifo)  # no writer: a blocking open would hang
    assert time.monotonic() - start < 1.0
    if IS_ROOT:
        other = private_file(tmp_path / "other", "5")
        os.chown(other, 65534, 65534)
        with pytest.raises(SeedFileError, match=r"owned by uid 65534, not by you \(uid 0\): its owner can read it"):
            read_seed_file(other)


def test_write_seed_file_makes_a_new_private_file(tmp_path: Path) -> None:
    path = tmp_path / "seed"
    path.write_text("old")
    path.chmod(0o644)
    with path.open() as earlier:  # a reader of the old, public file never sees the seed
        write_seed_file(path, 123456789)
        assert earlier.read() == "old"
    assert path.read_text() == "123456789\n" and mode(path) == 0o600
    assert read_seed_file(path) == 123456789
    target = tmp_path / "target"
    target.write_text("kept")
    link = tmp_path / "link"
    link.symlink_to(target)
    write_seed_file(link, 7)  # the link is replaced, not followed
    assert not link.is_symlink() and link.read_text() == "7\n" and target.read_text() == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "seed", "target"]  # no temporary left


# --- the private database ---------------------------------------------------------------------------------


def test_the_database_and_its_journals_are_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    with Store(db) as store:
        store.create_tournament("t", "c", "", "f", 5)
        assert mode(db) == 0o600
        for journal in ("-wal", "-shm"):  # SQLite gives them the database's mode
            assert (tmp_path / f"t.db{journal}").exists() and mode(tmp_path / f"t.db{journal}") == 0o600
    db.chmod(0o644)  # a database made by an older referee, or copied carelessly
    with Store(db, create=False) as store:
        assert mode(db) == 0o600 and store.active_tournament() is not None


# --- the tournament ---------------------------------------------------------------------------------------


def write_config(folder: Path, deals: int = 1) -> Path:
    bots = [Bot(name, "{python} bot.py play", HOSTILE) for name in ("a", "b")]
    return write_toml(folder / "t.toml", bots, header=f'name = "t"\ndeals = {deals}', move=2.0)


def run(*args: str) -> tuple[int, str]:
    ran = invoke(*args)
    return ran.code, ran.output


def stored_seed(db: Path) -> int:
    with Store(db, create=False) as store:
        active = store.active_tournament()
    assert active is not None
    return active.seed


def deal_seeds(db: Path) -> set[int]:
    with sqlite3.connect(db) as con:
        return {row[0] for row in con.execute("SELECT deal_seed FROM games")}


def test_the_seed_is_drawn_kept_in_the_database_and_printed_only_by_durak_seed(tmp_path: Path) -> None:
    config, db = write_config(tmp_path), tmp_path / "t.db"
    code, output = run("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert code == 0, output
    seed = stored_seed(db)
    assert str(seed) not in output and "stored, seed" not in output
    assert str(seed) not in config.read_text()
    assert run("seed", str(db)) == (0, f"{seed}\n")
    exported = tmp_path / "exported-seed"
    assert run("seed", str(db), "-o", str(exported)) == (0, "")
    assert mode(exported) == 0o600 and read_seed_file(exported) == seed
    # the exported seed gives a new database the same decks
    other = tmp_path / "other.db"
    code, output = run("tournament", str(config), "--db", str(other), "--jobs", "1", "--seed-file", str(exported))
    assert code == 0, output
    assert stored_seed(other) == seed and deal_seeds(other) == deal_seeds(db)


def test_a_seed_file_seeds_a_new_tournament_and_must_match_a_stored_one(tmp_path: Path) -> None:
    config, db = write_config(tmp_path), tmp_path / "t.db"
    five, six = private_file(tmp_path / "five", "5"), private_file(tmp_path / "six", "6")
    assert run("tournament", str(config), "--db", str(db), "-j", "1", "--seed-file", str(five))[0] == 0
    assert stored_seed(db) == 5
    assert run("tournament", str(config), "--db", str(db), "-j", "1", "--seed-file", str(five))[0] == 0
    assert run("tournament", str(config), "--db", str(db), "-j", "1")[0] == 0  # resumes with the stored seed
    code, output = run("tournament", str(config), "--db", str(db), "-j", "1", "--seed-file", str(six))
    assert code == 3 and output == (f"durak: error: {db} holds tournament 't' with another seed than the seed "
                                    "file's; leave out --seed-file to resume it, or use --fresh or another --db\n")
    assert run("tournament", str(config), "--db", str(db), "-j", "1", "--seed-file", str(six), "--fresh")[0] == 0
    assert stored_seed(db) == 6
    six.chmod(0o644)
    code, output = run("tournament", str(config), "--db", str(tmp_path / "new.db"), "--seed-file", str(six))
    assert code == 3 and output.count("\n") == 1 and f"chmod 600 {six}" in output
    assert not (tmp_path / "new.db").exists()  # refused before anything was made


def test_a_database_made_while_configs_held_seeds_resumes(tmp_path: Path) -> None:
    """Such a database stored the fingerprint of `seed = N`; without the key the same schedule resumes."""
    config, db = write_config(tmp_path, deals=2), tmp_path / "t.db"
    loaded = load_config(config)
    with Store(db) as store:
        store.create_tournament("t", str(config), config.read_text() + "seed = 5\n",
                                loaded.schedule_fingerprint(legacy_seed=5), 5)
    code, output = run("tournament", str(config), "--db", str(db), "-j", "1")
    assert code == 0, output
    assert "4 games played now, 4/4 stored" in output and stored_seed(db) == 5


def test_durak_seed_errors_are_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    Store(empty).close()
    text = tmp_path / "x.txt"
    text.write_text("no")
    for args, expected in ((["seed", str(text)], f"'{text}' is not a results database"),
                           (["seed", str(empty)], f"'{empty}' holds no tournament")):
        code, output = run(*args)
        assert code == 3 and output == f"durak: error: {expected}\n"
