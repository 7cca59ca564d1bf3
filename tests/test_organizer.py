"""An organizer's day: preflight, bot identity and replacement, per-bot statistics, finding games and
tournaments, read-only databases, machine formats, stopping and exit codes (issue 11)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import invoke
from configs import Bot, write_toml
from old_schemas import drop_schema_5
from proctools import start_durak, stop_with
from test_tournament_run import HOSTILE, stored, write_config

from referee.cli import app
from referee.results.store import SCHEMA_VERSION, Store
from referee.tournament.config import load_config
from referee.tournament.runner import PreflightError, RunRequest, TournamentError, run_tournament


def own_bot(folder: Path, name: str = "bot", source: Path = HOSTILE / "bot.py") -> Path:
    """A bot folder of its own holding a copy of the hostile test bot (so that a test may change it)."""
    bot = folder / name
    bot.mkdir(exist_ok=True)
    (bot / "bot.py").write_bytes(source.read_bytes())
    return bot


def bots_config(folder: Path, bots: list[tuple[str, str, str]], *, deals: int = 2, extra: str = "") -> Path:
    """A config of ``(name, command, dir[, files])`` bots; dirs relative to ``folder``."""
    return write_toml(folder / "t.toml", [Bot(*bot) for bot in bots], header=f'name = "t"\ndeals = {deals}\n{extra}',
                        move=2.0)


def quiet(config: Path, db: Path, **options: object) -> object:
    return run_tournament(load_config(config), RunRequest(db, jobs=1, **options), io.StringIO())  # type: ignore[arg-type]


def count(db: Path, table: str = "games") -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


# -- 1. preflight -----------------------------------------------------------------------------------------


def test_a_bot_with_a_missing_script_stops_the_tournament_before_any_game(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"good": "play", "other": "play"}, deals=2)
    config.write_text(config.read_text() + f'[[bots]]\nname = "ghost2"\ncommand = "{{python}} ghost2.py"\n'
                                           f'dir = "{HOSTILE}"\n')
    db = tmp_path / "t.db"
    done = invoke("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert done.code == 4, done.output
    line = done.output.strip().splitlines()[-1]
    assert line.startswith("durak: error: bot 'ghost2' failed its preflight (started once before any game): crash:")
    assert "ghost2.py" in line and "No such file or directory" in line  # its stderr, quoted
    assert "no game was played" in line and "Traceback" not in done.output
    assert count(db) == 0


def test_preflight_disqualify_plays_on_and_says_why_in_summary_and_leaderboard(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"good": "play", "other": "play"}, deals=1, extra='preflight = "disqualify"')
    config.write_text(config.read_text() + f'[[bots]]\nname = "ghost2"\ncommand = "{{python}} bot.py '
                                           f'crash_at_start"\ndir = "{HOSTILE}"\n')
    db = tmp_path / "t.db"
    done = invoke("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert done.code == 0, done.output
    assert ("disqualified: ghost2: failed its preflight (started once before any game): crash: bot exited: exit "
            "code 3 (stderr: bot.py: crash_at_start)") in done.output
    records = list(stored(db).values())
    assert len(records) == 6 and all(r.fools == ["ghost2"] for r in records if "ghost2" in r.players)
    assert {v.kind for r in records for v in r.verdicts} == {"disqualified"}
    board = invoke("leaderboard", str(db))
    assert "ghost2 (disqualified)" in board.output and "disqualified: ghost2: failed its preflight" in board.output
    as_json = json.loads(invoke("leaderboard", str(db), "--format", "json").output)
    assert as_json["disqualified"]["ghost2"].startswith("failed its preflight")


# -- 2. bot identity and versions -------------------------------------------------------------------------


def test_bots_sharing_a_folder_with_the_referees_outputs_in_it_resume_and_a_change_names_the_bot_and_file(
        tmp_path: Path) -> None:
    shared = own_bot(tmp_path, "shared")
    (shared / "other.py").write_text("# the second bot's own file\n")
    config = bots_config(tmp_path, [("a", "{python} bot.py play", "shared"),
                                    ("b", "{python} bot.py play tag=b", "shared")])
    text = config.read_text().replace('dir = "shared"\n', 'dir = "shared"\nfiles = ["bot.py"]\n', 1)
    config.write_text(text.replace('tag=b"\ndir = "shared"\n', 'tag=b"\ndir = "shared"\nfiles = ["*.py"]\n'))
    db = tmp_path / "t.db"  # (the sandbox refuses a bot folder that holds this run's database)
    quiet(config, db)
    (shared / "notes.log").write_text("the organizer's notes")
    (shared / "results.jsonl").write_text(invoke("export", str(db)).output)
    (shared / "unrelated.txt").write_text("not one of a's files")
    assert quiet(config, db).played == 0  # type: ignore[attr-defined]
    (shared / "other.py").write_text("# changed\n")
    with pytest.raises(TournamentError) as refused:
        quiet(config, db)
    message = str(refused.value)
    assert "bot 'b' changed since its stored games (other.py changed)" in message and "'a'" not in message
    assert "--changed-bots replay" in message


def test_by_default_a_bot_is_its_folder_less_the_referees_outputs(tmp_path: Path) -> None:
    folder = own_bot(tmp_path, "a")
    own_bot(tmp_path, "b")
    config = bots_config(tmp_path, [("a", "{python} bot.py play", "a"), ("b", "{python} bot.py play", "b")],
                         deals=1)
    db = tmp_path / "t.db"
    quiet(config, db)
    for name in ("old.db", "old.db-wal", "play.log", "export.jsonl"):
        (folder / name).write_text("written by the referee")
    assert quiet(config, db).played == 0  # type: ignore[attr-defined]
    (folder / "weights.bin").write_bytes(b"new weights")
    with pytest.raises(TournamentError, match=r"bot 'a' changed since its stored games \(weights.bin added\)"):
        quiet(config, db)


def test_a_bot_reporting_a_new_version_every_handshake_resumes_and_its_version_is_recorded(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    quiet(write_config(tmp_path, {"a": "play version=flip", "b": "play"}, deals=1), db)
    with sqlite3.connect(db) as con:
        first = con.execute("SELECT version FROM bots WHERE name = 'a'").fetchone()[0]
    more = quiet(write_config(tmp_path, {"a": "play version=flip", "b": "play"}, deals=2), db)
    assert more.played == 2  # type: ignore[attr-defined]
    with sqlite3.connect(db) as con:
        second = con.execute("SELECT version FROM bots WHERE name = 'a'").fetchone()[0]
    assert first.isdigit() and second.isdigit() and first != second


def test_a_bot_replaced_mid_tournament_is_refused_then_replayed_and_its_disqualification_lifted(
        tmp_path: Path) -> None:
    own_bot(tmp_path, "a")
    own_bot(tmp_path, "b")
    own_bot(tmp_path, "c")
    config = bots_config(tmp_path, [("a", "{python} bot.py play", "a"), ("b", "{python} bot.py crash", "b"),
                                    ("c", "{python} bot.py play", "c")], deals=3, extra="max_failures = 2")
    db = tmp_path / "t.db"
    first = quiet(config, db)
    assert list(first.disqualified) == ["b"]  # type: ignore[attr-defined]
    old = stored(db)
    old_b = {key for key, r in old.items() if "b" in r.players}
    config.write_text(config.read_text().replace("bot.py crash", "bot.py play"))  # b fixed
    refused = invoke("tournament", str(config), "--db", str(db))
    assert refused.code == 3
    assert "bot 'b' changed since its stored games (its command changed:" in refused.output
    replayed = invoke("tournament", str(config), "--db", str(db), "--changed-bots", "replay")
    assert replayed.code == 0, replayed.output
    assert f"{len(old_b)} games of changed bots moved to history" in replayed.output
    assert "disqualified:" not in replayed.output
    new = stored(db)
    assert set(new) == set(old) and count(db, "superseded_games") == len(old_b)
    assert all(new[key] == old[key] for key in set(old) - old_b)  # a-c games untouched
    assert all(not new[key].verdicts for key in old_b)  # played again by the fixed b
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT disqualified, reason FROM bots WHERE name = 'b'").fetchone() == (0, "")
        hashes = {row[0] for row in con.execute("SELECT bot_files FROM games WHERE outcome LIKE '%b%|%'")}
    assert len(hashes) > 0 and all(len(json.loads(h)) == 2 for h in hashes)


def test_changed_bots_keep_keeps_the_old_games_rated(tmp_path: Path) -> None:
    bot = own_bot(tmp_path, "a")
    own_bot(tmp_path, "b")
    config = bots_config(tmp_path, [("a", "{python} bot.py play", "a"), ("b", "{python} bot.py play", "b")],
                         deals=1)
    db = tmp_path / "t.db"
    quiet(config, db)
    before = stored(db)
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# version 2\n")
    bots_config(tmp_path, [("a", "{python} bot.py play", "a"), ("b", "{python} bot.py play", "b")], deals=2)
    more = quiet(config, db, changed_bots="keep")
    assert more.played == 2 and more.superseded == 0  # type: ignore[attr-defined]
    after = stored(db)
    assert all(after[key] == record for key, record in before.items())


# -- 3. per-bot statistics --------------------------------------------------------------------------------


def test_stats_count_moves_verdicts_and_fools_by_seat_in_table_csv_and_json(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "illegal after=3", "c": "play"}, deals=2)
    db = tmp_path / "t.db"
    done = invoke("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert done.code == 0 and "Median ms" in done.output and "p99 ms" in done.output  # after every run
    records = list(stored(db).values())
    doc = json.loads(invoke("leaderboard", str(db), "--stats", "--format", "json").output)
    by_bot = {row["bot"]: row for row in doc["stats"]}
    for name in "abc":
        mine = [(r, r.players.index(name)) for r in records if name in r.players]
        row = by_bot[name]
        assert row["games"] == len(mine) == 8
        assert row["moves"] == sum(t.moves for r, s in mine if (t := r.times[s]) is not None)  # type: ignore[index]
        assert row["move_max_ms"] == pytest.approx(max(t.max_ms for r, s in mine if (t := r.times[s]) is not None),
                                                   abs=0.01)  # type: ignore[index]
        assert row["move_median_ms"] <= row["move_p99_ms"] <= row["move_max_ms"]
        for seat in (0, 1):
            in_seat = [r for r, s in mine if s == seat]
            fools = sum(name in r.fools for r in in_seat)
            assert row["games_by_seat"][seat] == len(in_seat)
            assert row["fool_pct_by_seat"][seat] == pytest.approx(100 * fools / len(in_seat), abs=0.01)
    illegal = sum(v.kind == "illegal" for r in records for v in r.verdicts)
    assert illegal >= 1 and by_bot["b"]["verdicts"]["illegal"] == illegal and by_bot["a"]["verdicts"]["illegal"] == 0
    assert set(by_bot["a"]["verdicts"]) == {"timeout", "strikes", "crash", "memory", "illegal", "protocol",
                                            "disqualified"}
    table = invoke("leaderboard", str(db), "--stats").output
    assert "Fool%@0" in table and "illegal" in table
    rows = list(csv.DictReader(io.StringIO(invoke("leaderboard", str(db), "--stats", "--format",
                                                                "csv").output)))
    assert [r["bot"] for r in rows] == ["a", "b", "c"] and rows[1]["verdicts_illegal"] == str(illegal)
    assert "move_p99_ms" in rows[0] and "fool_pct_by_seat_1" in rows[0]


# -- 4. finding things ------------------------------------------------------------------------------------


def test_games_lists_filters_and_numbers_games_replay_takes_a_number_and_tournaments_are_chosen(
        tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    quiet(write_config(tmp_path, {"a": "play", "b": "illegal after=2"}, deals=2), db)  # b: 3 illegal, disqualified
    chase = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1, extra='variant = "chase"')
    run_tournament(load_config(chase), RunRequest(db, jobs=1, fresh=True), io.StringIO())
    listed = invoke("tournaments", str(db))
    assert listed.code == 0
    lines = listed.output.splitlines()
    assert lines[2].split()[:3] == ["1", "t", lines[2].split()[2]] and lines[3].split()[:3] == ["2", "*", "t"]
    old = invoke("games", str(db), "--tournament", "1")
    assert old.code == 0 and "4 game(s) of tournament 1" in old.output
    illegal = invoke("games", str(db), "-t", "1", "--verdict", "illegal", "--format", "json")
    found = [json.loads(line) for line in illegal.output.splitlines()]
    assert len(found) == 3 and all(g["verdicts"][0]["kind"] == "illegal" and g["tournament"] == 1 for g in found)
    assert "1 game(s) of tournament 1" in invoke("games", str(db), "-t", "1", "--verdict",
                                                              "disqualified").output
    assert "0 game(s)" in invoke("games", str(db), "-t", "1", "--bot", "nobody").output
    assert invoke("games", str(db), "-t", "1", "--fool", "b").output.count(" b ") >= 1
    number = str(found[0]["number"])
    told = invoke("replay", str(db), number, "--tournament", "1")
    assert told.code == 0 and "verdict: b (seat" in told.output and "podkidnoy" in told.output
    by_id = invoke("replay", str(db), found[0]["game"], "-t", "1")
    assert by_id.output == told.output
    active = invoke("replay", str(db), "1")
    assert active.code == 0 and "chase" in active.output  # the active tournament's first game
    exported = invoke("export", str(db), "-t", "1")
    assert len(exported.output.splitlines()) == 4
    assert invoke("leaderboard", str(db), "-t", "1").output.count("4 games") == 1
    missing = invoke("games", str(db), "-t", "9")
    assert missing.code == 3 and "no tournament 9 (its tournaments: 1, 2" in missing.output


def test_replay_reads_a_play_log_file(tmp_path: Path) -> None:
    log = tmp_path / "games.jsonl"
    bot = f"{sys.executable} {HOSTILE / 'bot.py'} play"
    played = invoke("play", f"a={bot}", f"b={bot}", "--games", "2", "--seed", "3", "--log", str(log),
                                 "--sandbox", "none")
    assert played.code == 0, played.output
    second = invoke("replay", str(log), "2")
    assert second.code == 0 and second.output.startswith("game g2 ") and "result:" in second.output
    assert invoke("replay", str(log), "g2").output == second.output
    assert invoke("replay", str(log), "2", "--seat", "a").output.count(" is dealt ") == 1
    ambiguous = invoke("replay", str(log))
    assert ambiguous.code == 2 and "holds 2 games" in ambiguous.output


def test_a_read_only_database_can_be_rated_exported_listed_and_replayed(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-m", "sh", "-c", f"mount --bind -o ro {tmp_path} {tmp_path}"]).returncode != 0:
        pytest.skip("no mount namespace here for a read-only bind mount")
    db = tmp_path / "t.db"
    quiet(write_config(tmp_path, {"a": "play", "b": "play"}, deals=1), db)
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()  # closed cleanly
    read_only = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && shift && exec "$@"', str(tmp_path),
                 "-", sys.executable, "-m", "referee"]
    for command in (["leaderboard", str(db), "--stats"], ["export", str(db)], ["games", str(db)],
                    ["replay", str(db), "1"], ["tournaments", str(db)]):
        done = subprocess.run([*read_only, *command], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
    write = subprocess.run([*read_only, "tournament", str(tmp_path / "t.toml"), "--db", str(db)],
                           capture_output=True, text=True, timeout=60)
    assert write.returncode == 6 and "durak: error:" in write.stderr


def test_the_default_database_sits_next_to_the_config_wherever_it_is_run_from(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, "-m", "referee", "tournament", os.path.relpath(config, elsewhere),
                           "--jobs", "1"], cwd=elsewhere, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"in {tmp_path / 't.db'}: 2 games played now" in done.stdout
    assert (tmp_path / "t.db").is_file() and not list(elsewhere.iterdir())


def test_a_results_file_joined_twice_counts_each_game_once_with_a_warning(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    quiet(write_config(tmp_path, {"a": "play", "b": "play"}, deals=2), db)
    exported = invoke("export", str(db)).output
    joined = tmp_path / "joined.jsonl"
    joined.write_text(exported + exported)
    done = subprocess.run([sys.executable, "-m", "referee", "leaderboard", str(joined)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "4 games" in done.stdout
    assert "durak: warning:" in done.stderr and "4 record(s) repeat a game already read" in done.stderr


# -- 5. machine formats -----------------------------------------------------------------------------------


def test_h2h_is_part_of_the_json_document_and_its_own_csv(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    quiet(write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=1), db)
    doc = json.loads(invoke("leaderboard", str(db), "--format", "json", "--h2h").output)
    assert {(p["bot"], p["opponent"]) for p in doc["h2h"]} == {(x, y) for x in "abc" for y in "abc" if x != y}
    assert all(p["score_pct"] == pytest.approx(100 * p["points"] / p["comparisons"], abs=0.01) for p in doc["h2h"])
    pairs = list(csv.DictReader(io.StringIO(invoke("leaderboard", str(db), "--format", "csv",
                                                                 "--h2h").output)))
    assert list(pairs[0]) == ["bot", "opponent", "points", "comparisons", "score_pct"] and len(pairs) == 6
    rows = list(csv.DictReader(io.StringIO(invoke("leaderboard", str(db), "--format", "csv").output)))
    assert {r["identified"] for r in rows} <= {"true", "false"} and {r["disqualified"] for r in rows} == {"false"}
    assert all(0 <= float(r["los_next_pct"]) <= 100 for r in rows if r["los_next_pct"])


# -- 6. stopping ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("signum", "code", "name"), [(signal.SIGINT, 130, "Ctrl-C"), (signal.SIGTERM, 143,
                                                                                        "SIGTERM")])
def test_a_stop_signal_abandons_the_games_in_flight_at_once_and_says_how_to_resume(
        tmp_path: Path, signum: int, code: int, name: str) -> None:
    """A bot that thinks for a minute is mid-move when the signal comes: the run ends without waiting for it
    (its game is not stored) and leaves no bot process behind."""
    marker = tmp_path / "slow.log"
    config = write_config(tmp_path, {"a": "play", "b": f"slow after=1 delay=60 term=ignore log={marker}"},
                          deals=1, extra='sandbox = "none"')  # so that the bot may write its log here
    config.write_text(config.read_text().replace("move = 2.0", "move = 120.0"))
    db = tmp_path / "t.db"
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db), "--jobs", "2"]
    run = start_durak(command)
    while run.poll() is None and (not marker.exists() or marker.read_text().count('"request"') < 2):
        pass  # b has its second request: it sleeps now
    err = stop_with(run, signum, timeout=50)  # well under the bot's minute: the game was not waited for
    assert run.returncode == code, err
    lines = [line for line in err.splitlines() if line.startswith("durak:")]
    assert lines[0].startswith(f"durak: {name}: stopping now; the 1 game(s) in flight are abandoned"), err
    assert lines[-1] == (f"durak: error: interrupted: 0 of 2 games stored; to resume: durak tournament {config} "
                         f"--db {db} --jobs 2")
    assert count(db) == 0 and "Traceback" not in err
    leftovers = [pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline_has(pid, str(marker))]
    assert leftovers == []


def _cmdline_has(pid: str, text: str) -> bool:
    try:
        return text.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


# -- 7. exit codes and help -------------------------------------------------------------------------------


def test_every_usage_error_exits_2(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    quiet(config, db)
    for args in (["leaderboard", str(db), "--format", "xml"], ["leaderboard", str(db), "--mode", "bogus"],
                 ["leaderboard", str(db), "--anchor", "random"], ["tournament", str(config), "--sandbox", "foo"],
                 ["play", "x", "y", "--sandbox", "foo"], ["check-bot", ""], ["games", str(db), "--format", "xml"],
                 ["leaderboard", str(db), "--format", "csv", "--h2h", "--stats"],
                 ["tournament", str(config), "--changed-bots", "maybe"]):
        done = invoke(*args)
        assert done.code == 2, (args, done.output)
        assert "Traceback" not in done.output


def test_leaderboard_help_explains_every_column() -> None:
    text = invoke("leaderboard", "--help").output
    for column in ("Score%", "AvgPlace", "LOS(next)", "footer", "+-95%", "Fool%"):
        assert f"\n  {column}" in text or f"\n{column}" in text, column
    assert "likelihood of superiority" in text


# -- schema ------------------------------------------------------------------------------------------------


def test_a_schema_1_database_is_read_and_resumed_after_migration(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    db = tmp_path / "t.db"
    quiet(config, db)
    with sqlite3.connect(db) as con:  # back to what schema 1 held
        drop_schema_5(con)
        con.execute("DROP TABLE superseded_games")
        con.execute("DROP INDEX games_by_number")
        for table in ("league_versions", "league_groups", "league_requests"):
            con.execute(f"DROP TABLE {table}")
        for table, column in (("bots", "settings"), ("bots", "files"), ("bots", "reason"), ("games", "move_us"),
                              ("games", "bot_files"), ("games", "number"), ("tournaments", "kind"),
                              ("tournaments", "parent")):
            con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("UPDATE bots SET sha256 = ?", (_legacy_sha(),))
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    board = invoke("leaderboard", str(db), "--stats", "--format", "json")
    assert board.code == 0, board.output
    assert all(row["moves"] == 0 and row["move_median_ms"] is None for row in json.loads(board.output)["stats"])
    more = quiet(write_config(tmp_path, {"a": "play", "b": "play"}, deals=2), db)
    assert more.played == 2  # type: ignore[attr-defined]
    with Store(db, create=False) as store:
        assert store.schema_version == SCHEMA_VERSION and store.bots(1)["a"].settings
        assert [g.number for g in store.games()] == [1, 2, 3, 4]  # numbered as schema 1 numbered them, then on
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    newer = invoke("leaderboard", str(db))
    assert newer.code == 3 and "made by a newer durak-referee" in newer.output


def _legacy_sha() -> str:
    from referee.tournament.botfiles import bot_files_sha256

    return bot_files_sha256(HOSTILE)


def test_preflight_error_is_a_tournament_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "mute"}, deals=1)
    config.write_text(config.read_text().replace("[time]\n", "[time]\nstartup = 0.5\n"))
    with pytest.raises(PreflightError, match=r"bot 'b' failed its preflight .*: timeout:"):
        quiet(config, tmp_path / "t.db")


def test_the_readme_rows_name_every_option_and_its_exit_code_table_every_code() -> None:
    import typer

    from referee.cli.exitcodes import ExitCode

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    rows = {line.split("`")[1].split()[1]: line for line in readme.splitlines() if line.startswith("| `durak ")}
    rows |= {" ".join(line.split("`")[1].split()[1:3]): line for line in readme.splitlines()
             if line.startswith("| `durak league ")}
    group = typer.main.get_command(app)
    commands = {f"{name} {sub}" if hasattr(command, "commands") else name: one
                for name, command in group.commands.items()  # type: ignore[attr-defined]
                for sub, one in (command.commands.items() if hasattr(command, "commands") else [("", command)])}
    for name, command in commands.items():
        assert name in rows, name
        for param in command.params:
            flags = [flag for flag in param.opts if flag.startswith("-")]
            if flags and flags != ["--help"]:
                assert any(f"[{flag}" in rows[name] or f" {flag}" in rows[name] for flag in flags), (name, flags)
    table = readme[readme.index("## Exit codes"):readme.index("## Layout")]
    codes = {int(line.split("|")[1]) for line in table.splitlines() if line[:2] == "| " and line[2].isdigit()}
    assert codes == {int(code) for code in ExitCode}
