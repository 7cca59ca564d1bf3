"""`durak sprt`: decisions and their exit codes with the sample bots, resume after a stop, one-line errors."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from clirun import invoke
from proctools import start_durak, stop_with

from referee.cli.exitcodes import ExitCode
from referee.tournament.secret import write_seed_file
from tests.test_sprt_run import sample_config


def sprt(*args: str) -> tuple[int, str, str]:
    ran = invoke("sprt", *args)
    return ran.code, ran.out, ran.err


def test_heuristic_against_random_accepts_h1_and_the_same_command_resumes_to_it(tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    code, out, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "100", "--jobs", "2")
    assert code == ExitCode.SPRT_H1 == 10, err
    assert f"sprt 'ab: sprt heur against rand' (id 1) in {tmp_path / 'ab-sprt.db'}" in out
    assert "H1 accepted" in out and "H1: heur is at least 100 Elo stronger than rand" in out
    assert "sprt: LLR" in err  # the progress line
    decision = next(line for line in out.splitlines() if line.startswith("LLR"))
    code, again, _ = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "100")
    assert code == 10 and " 0 games played now" in again and decision in again.splitlines()


def test_h0_and_truncated_have_their_own_exit_codes(tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    code, out, err = sprt(str(config), "rand", "heur", "--elo0", "0", "--elo1", "100", "--db", str(tmp_path / "a.db"))
    assert code == ExitCode.SPRT_H0 == 11, err
    assert "H0: rand is at most 0 Elo stronger than heur" in out
    code, out, err = sprt(str(config), "rand", "rand2", "--elo0", "-5", "--elo1", "5", "--max-games", "4",
                          "--db", str(tmp_path / "b.db"))
    assert code == ExitCode.SPRT_TRUNCATED == 12, err
    assert "2 groups, 4 games  truncated (no decision)" in out
    assert "truncated: no decision after 4 games (--max-games 4, whole deal groups of 2)" in out


def test_against_a_field_each_arm_plays_the_deal(tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    db = tmp_path / "f.db"
    code, out, err = sprt(str(config), "heur", "rand", "--field", "rand2", "--elo0", "0", "--elo1", "100",
                          "--db", str(db))
    assert code == 10, err
    groups, games = re.search(r"(\d+) groups, (\d+) games  H1 accepted", out).groups()  # type: ignore[union-attr]
    assert int(games) == 4 * int(groups)  # 2 arms x 2 seatings
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT slot_key, outcome FROM games").fetchall()
    for key, outcome in rows:  # arm 0 seats heur, arm 1 rand, each with rand2
        assert ("|a0|" in key) == ("heur" in outcome.split("|")[0].split()) != ("|a1|" in key)
        assert "rand2" in outcome.split("|")[0].split()


def test_errors_are_one_line(tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    for args, message in [
        (["heur", "nobody"], f"{config} has no bot named 'nobody' (its bots: heur, rand, rand2)"),
        (["heur", "heur"], "NEW, BASE and the field must be different bots"),
        (["heur", "rand", "--field", "rand"], "NEW, BASE and the field must be different bots"),
    ]:
        code, _, err = sprt(str(config), *args, "--elo0", "0", "--elo1", "10")
        assert code == ExitCode.USAGE and err == f"durak: error: {message}\n", err
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "10", "--elo1", "0")
    assert code == ExitCode.USAGE and err == "durak: error: --elo0 must be below --elo1, not 10 and 0\n"
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "inf")
    assert code == ExitCode.USAGE and err == "durak: error: --elo0 and --elo1 must be finite numbers, not 0 and inf\n"
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "10", "--alpha", "0.6", "--beta", "0.5")
    assert code == ExitCode.USAGE and "--alpha and --beta must be in (0, 1)" in err
    assert not (tmp_path / "ab-sprt.db").exists()  # refused before any database is made


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as con:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_stopped_test_resumes_to_the_decision_of_an_uninterrupted_one(tmp_path: Path) -> None:
    """Same seed, two databases: Ctrl-C then the printed resume command reach the uninterrupted run's state."""
    config = sample_config(tmp_path)
    seed = tmp_path / "seed"
    write_seed_file(seed, 4242)
    test = ["rand", "rand2", "--elo0", "-5", "--elo1", "5", "--max-games", "24", "--jobs", "2"]
    whole, stopped = tmp_path / "whole.db", tmp_path / "stopped.db"
    durak = [sys.executable, "-m", "referee", "sprt", str(config)]
    uninterrupted = subprocess.run([*durak, *test, "--db", str(whole), "--seed-file", str(seed)],
                                   capture_output=True, text=True, timeout=300)
    assert uninterrupted.returncode in (10, 11, 12), uninterrupted.stderr
    run = start_durak([*durak, *test, "--db", str(stopped), "--seed-file", str(seed)])
    deadline = time.monotonic() + 300  # a loaded machine may take long for the first games
    while time.monotonic() < deadline and _count(stopped) < 4 and run.poll() is None:
        time.sleep(0.01)
    err = stop_with(run, signal.SIGINT)
    assert run.returncode == ExitCode.INTERRUPTED, err
    assert "Traceback" not in err
    resume = err.split("to resume: ")[1].strip().split(" ")
    assert resume[:3] == ["durak", "sprt", str(config)] and "--seed-file" not in resume
    resumed = subprocess.run([sys.executable, "-m", "referee", *resume[1:]], capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == uninterrupted.returncode, resumed.stderr

    def state(out: str) -> str:
        return next(line for line in out.splitlines() if line.startswith("LLR"))

    assert state(resumed.stdout) == state(uninterrupted.stdout)
    assert _count(stopped) <= 24  # no group beyond --max-games is handed out


def test_the_config_sprt_table_supplies_what_the_command_leaves_out(tmp_path: Path) -> None:
    config = sample_config(tmp_path, extra='[sprt]\nnew = "rand"\nbase = "heur"\nelo0 = 0\nelo1 = 100\nmax_games = 4\n')
    code, out, err = sprt(str(config), "--db", str(tmp_path / "a.db"))
    assert code == ExitCode.SPRT_TRUNCATED, err  # the table's max_games
    assert "ab: sprt rand against heur" in out and "2 groups, 4 games  truncated" in out
    code, out, err = sprt(str(config), "heur", "rand", "--max-games", "200", "--db", str(tmp_path / "b.db"))
    assert code == ExitCode.SPRT_H1, err  # arguments override the table; its elo0 and elo1 still count
    assert "H1: heur is at least 100 Elo stronger than rand" in out


def test_a_test_with_nothing_to_test_names_what_is_missing(tmp_path: Path) -> None:
    config = sample_config(tmp_path)
    code, _, err = sprt(str(config), "heur")
    assert code == ExitCode.USAGE
    assert err == f"durak: error: give BASE and --elo0 and --elo1 (or set them in the [sprt] table of {config})\n"


def test_a_bad_sprt_table_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    for table, message in [
        ('base = "nobody"', "key 'sprt.base': no bot is named 'nobody'"),
        ('new = "heur"\nfield = ["heur"]', "key 'sprt.field[0]': 'heur' is named twice"),
        ("elo0 = 5\nelo1 = 5", "key 'sprt.elo1': must be above elo0 (5), not 5"),
        ('mode = "elo"', "key 'sprt.mode': invalid value 'elo': expected one of fool, order"),
        ("alpha = 0", "key 'sprt.alpha': alpha and beta must be in (0, 1)"),
        ("colour = 1", "unknown key 'sprt.colour'"),
    ]:
        config = sample_config(tmp_path, extra=f"[sprt]\n{table}\n")
        code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "10")
        assert code == ExitCode.CONFIG and err.startswith(f"durak: error: {config}: {message}"), err
        assert err.count("\n") == 1


def test_a_database_of_another_test_is_refused_unless_fresh(tmp_path: Path) -> None:
    config, db = sample_config(tmp_path), str(tmp_path / "a.db")
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "100", "--max-games", "2", "--db", db)
    assert code == ExitCode.SPRT_TRUNCATED, err
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "200", "--db", db)
    assert code == ExitCode.CONFIG and err.count("\n") == 1
    assert f"{db} holds test 'ab: sprt heur against rand' with another SPRT" in err and "new test in it" in err
    code, _, err = sprt(str(config), "heur", "rand", "--elo0", "0", "--elo1", "200", "--max-games", "2", "--db", db,
                        "--fresh")
    assert code == ExitCode.SPRT_TRUNCATED, err
