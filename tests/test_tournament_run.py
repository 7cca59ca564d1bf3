"""Tournaments end to end: resume, refusals, disqualification, reuse safety, CLI exit codes."""

from __future__ import annotations

import io
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import _base as futures_base
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgspec
import pytest
from clirun import invoke
from configs import Bot, write_toml
from proctools import start_durak, stop_with

from protocol.records import ResultRecord
from referee.results.store import Store
from referee.tournament import worker
from referee.tournament.config import load_config
from referee.tournament.runner import Interrupted, RunRequest, TournamentError, run_tournament
from referee.tournament.schedule import schedule
from referee.tournament.secret import write_seed_file
from referee.tournament.stop_signals import Terminated as _Terminated
from referee.tournament.stop_signals import deferred_stop_signals as _deferred_stop_signals

HOSTILE = Path(__file__).parent / "hostile"


def write_config(folder: Path, bots: dict[str, str], *, deals: int = 3, players: int = 2, extra: str = "") -> Path:
    """A config of the hostile test bot in its behaviours: ``{"a": "play", "b": "crash after=2"}``."""
    entries = [Bot(name, f"{{python}} bot.py {behaviour}", HOSTILE) for name, behaviour in bots.items()]
    header = f'name = "t"\nplayers = {players}\ndeals = {deals}\n{extra}'
    return write_toml(folder / "t.toml", entries, header=header, move=2.0)


def stored(db: Path) -> dict[str, ResultRecord]:
    with Store(db, create=False) as store:
        return {r.game: r for r in store.records()}


def test_a_tournament_stores_every_scheduled_game_once_and_resume_plays_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "play", "c": "play"})
    db = tmp_path / "t.db"
    first = run_tournament(load_config(config), RunRequest(db, jobs=2), io.StringIO())
    assert first.played == first.total_games == 3 * 3 * 2  # 3 tables x 3 deals x 2 rotations
    records = stored(db)
    assert len(records) == 18
    with Store(db, create=False) as store:
        active = store.active_tournament()
    assert active is not None  # the seed was drawn and stored
    assert {r.deal for r in records.values()} == {s.deal_key for s in schedule(load_config(config).config,
                                                                               active.seed)}
    again = run_tournament(load_config(config), RunRequest(db, jobs=2), io.StringIO())
    assert again.played == 0 and len(stored(db)) == 18


def test_more_deals_play_only_the_new_slots(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    devnull = io.StringIO()
    run_tournament(load_config(write_config(tmp_path, {"a": "play", "b": "play"}, deals=2)),
                   RunRequest(db, jobs=1), devnull)
    before = stored(db)
    more = run_tournament(load_config(write_config(tmp_path, {"a": "play", "b": "play"}, deals=4)),
                          RunRequest(db, jobs=1), devnull)
    assert more.played == 4
    after = stored(db)
    assert len(after) == 8 and all(after[key] == record for key, record in before.items())


def test_a_changed_schedule_or_bot_is_refused_unless_fresh(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    devnull = io.StringIO()
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    run_tournament(load_config(config), RunRequest(db, jobs=1), devnull)
    changed = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1, extra='variant = "chase"')
    with pytest.raises(TournamentError, match="different schedule"):
        run_tournament(load_config(changed), RunRequest(db, jobs=1), devnull)
    fresh = run_tournament(load_config(changed), RunRequest(db, jobs=1, fresh=True), devnull)
    assert fresh.played == 2 and fresh.tournament.id == 2
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 4  # the old rows are kept


def test_a_bot_whose_files_changed_is_refused(tmp_path: Path) -> None:
    bot_dir = tmp_path / "bot"
    bot_dir.mkdir()
    (bot_dir / "bot.py").write_bytes((HOSTILE / "bot.py").read_bytes())
    config = tmp_path / "t.toml"
    config.write_text('name = "t"\ndeals = 1\n[[bots]]\nname = "a"\ncommand = "{python} bot.py play"\n'
                      'dir = "bot"\n[[bots]]\nname = "b"\ncommand = "{python} bot.py play"\ndir = "bot"\n')
    db = tmp_path / "t.db"
    run_tournament(load_config(config), RunRequest(db, jobs=1), io.StringIO())
    (bot_dir / "notes.txt").write_text("a new file changes the bot's hash")
    with pytest.raises(TournamentError, match="bot 'a' changed since its stored games"):
        run_tournament(load_config(config), RunRequest(db, jobs=1), io.StringIO())


def test_a_bot_failing_three_games_in_a_row_is_disqualified(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"good": "play", "bad": "crash"}, deals=5, extra="max_failures = 3")
    db = tmp_path / "t.db"
    summary = run_tournament(load_config(config), RunRequest(db, jobs=1), io.StringIO())
    assert list(summary.disqualified) == ["bad"]
    assert summary.disqualified["bad"].startswith("lost 3 games in a row by a verdict (the last: crash: bot exited")
    records = list(stored(db).values())
    kinds = [v.kind for r in records for v in r.verdicts]
    assert kinds.count("crash") == 3 and kinds.count("disqualified") == 7
    assert all(r.fools == ["bad"] for r in records)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT disqualified FROM bots WHERE name = 'bad'").fetchone() == (1,)
    assert all(v.reason.startswith("disqualified: lost 3 games in a row") for r in records for v in r.verdicts
               if v.kind == "disqualified")
    board = invoke("leaderboard", str(db))
    assert board.code == 0 and "bad (disqualified)" in board.output
    assert "disqualified: bad: lost 3 games in a row by a verdict (the last: crash:" in board.output


def test_persistent_instances_never_meet_a_deal_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Instance r of a bot plays only rotation r, so no process sees a deal twice (restart = "never")."""
    loaded = load_config(write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=2, players=3))
    seen: dict[int, list[str]] = {}
    real = worker.play_series

    def recording(series, clients, **hooks):  # type: ignore[no-untyped-def]
        for client in clients:
            seen.setdefault(id(client), []).append(series.deal_key)
        return real(series, clients, **hooks)

    monkeypatch.setattr(worker, "play_series", recording)
    player = worker.SlotPlayer(loaded, loaded.isolation([]))
    try:
        for slot in schedule(loaded.config, 5):
            player.play(slot, {})
    finally:
        player.close()
    assert len(seen) == 3 * 3  # 3 bots x 3 rotations
    assert all(len(deals) == len(set(deals)) for deals in seen.values())


def test_sigkill_mid_run_then_resume_stores_exactly_the_uninterrupted_games(tmp_path: Path) -> None:
    bots = {"a": "play", "b": "play", "c": "play", "d": "play"}
    seed_file = tmp_path / "seed"
    write_seed_file(seed_file, 5)  # both runs deal the same decks
    whole = tmp_path / "whole"
    whole.mkdir()
    run_tournament(load_config(write_config(whole, bots, deals=6)),
                   RunRequest(whole / "t.db", jobs=2, seed_file=seed_file), io.StringIO())
    expected = stored(whole / "t.db")
    cut = tmp_path / "cut"
    cut.mkdir()
    config = write_config(cut, bots, deals=6)
    db = cut / "t.db"
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db), "--jobs", "2",
               "--seed-file", str(seed_file)]
    counts = []
    for kill in range(3):  # kill it a few times at different points, then let it finish
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300  # generous: a loaded machine starts slowly
        while time.monotonic() < deadline and _count(db) < 5 + 10 * kill and run.poll() is None:
            time.sleep(0.005)
        run.send_signal(signal.SIGKILL)
        run.wait()
        counts.append(_count(db))
    assert 0 < counts[0] < len(expected), counts  # the first kill landed mid-run
    moments = random.Random(7)
    for _ in range(5):  # and at random moments, also while it starts its bots or commits a slot
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(moments.uniform(0.05, 0.6))
        run.send_signal(signal.SIGKILL)
        run.wait()
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert without_times(stored(db)) == without_times(expected)  # the same games and results, none twice


def without_times(records: dict[str, ResultRecord]) -> dict[str, ResultRecord]:
    return {key: msgspec.structs.replace(record, times=None) for key, record in records.items()}


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
            return int(con.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_cli_tournament_prints_the_leaderboard_and_errors_are_one_line(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=1)
    db = tmp_path / "t.db"
    done = invoke("tournament", str(config), "--db", str(db), "--jobs", "1")
    assert done.code == 0, done.output
    assert "Rank" in done.output and "Bradley-Terry" in done.output
    exported = invoke("export", str(db))
    assert exported.code == 0
    records = [msgspec.json.decode(line, type=ResultRecord) for line in exported.out.splitlines()]
    assert len(records) == 2
    told = invoke("replay", str(db), records[0].game)
    assert told.code == 0 and "is dealt" in told.output and "result:" in told.output
    seat_view = invoke("replay", str(db), records[0].game, "--seat", "a")
    assert seat_view.code == 0 and seat_view.output.count(" is dealt ") == 1

    bad_key = tmp_path / "bad.toml"
    bad_key.write_text(config.read_text().replace("deals = 1", "dealz = 1"))
    cases = [
        (["tournament", str(bad_key), "--db", str(db)], 3, "unknown key 'dealz'"),
        (["tournament", str(tmp_path / "missing.toml")], 3, "missing.toml"),
        (["tournament", str(config), "--db", "/proc/nope/t.db"], 6,
         "cannot write the database '/proc/nope/t.db': no folder"),
        (["leaderboard", str(tmp_path / "none.jsonl")], 6, "no database or results file at"),
        (["replay", str(db), "no-such-game"], 3, "no game"),
    ]
    for args, code, text in cases:
        result = invoke(*args)
        assert result.code == code, (args, result.output)
        assert text in result.output and "Traceback" not in result.output


def test_ctrl_c_stops_cleanly_keeps_finished_games_and_says_how_to_resume(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=30)
    db = tmp_path / "t.db"
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db), "--jobs", "2"]
    run = start_durak(command)
    deadline = time.monotonic() + 300  # a loaded machine may take long for the first games; Ctrl-C at ten
    while time.monotonic() < deadline and _count(db) < 10 and run.poll() is None:
        time.sleep(0.005)
    err = stop_with(run, signal.SIGINT)
    assert run.returncode == 130, err
    assert "interrupted:" in err and f"to resume: durak tournament {config} --db {db}" in err
    assert "Traceback" not in err
    kept = _count(db)
    assert 10 <= kept < 180
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{180 - kept} games played now, 180/180 stored" in resumed.stdout


def test_a_stop_signal_in_the_coordinators_loop_is_raised_where_the_loop_asks_never_inside_it() -> None:
    """Ctrl-C and SIGTERM are only noted while the loop runs (a KeyboardInterrupt raised inside a lock could hang
    the stop); the loop's check raises them, and one noted as the loop ends is raised at its end."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    for signum, raised in [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, _Terminated)]:
        reached = []
        with pytest.raises(raised), _deferred_stop_signals() as raise_if_stopped:
            raise_if_stopped()  # nothing noted yet
            os.kill(os.getpid(), signum)
            time.sleep(0.05)  # the handler has run by now
            reached.append("check")  # and raised nothing
            raise_if_stopped()
            pytest.fail("the noted signal was not raised")
        with pytest.raises(raised), _deferred_stop_signals():
            os.kill(os.getpid(), signum)
            time.sleep(0.05)
            reached.append("end")
        assert reached == ["check", "end"]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_ctrl_c_inside_the_wait_for_finished_games_does_not_hang_the_stop(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython's ``concurrent.futures.wait`` takes each future's lock in a loop; a KeyboardInterrupt raised inside
    that loop leaves a lock taken, and the thread that finishes the future then blocks for ever, so the stop
    would wait the 40 s it gives a worker. Here the loop pauses after its first lock and Ctrl-C comes in the
    pause."""
    config = write_config(tmp_path, {"a": "play", "b": "play"}, deals=30)
    in_the_loop, sent = threading.Event(), threading.Event()

    def paused_enter(self: Any) -> None:
        for future in self.futures:
            future._condition.acquire()
            if not in_the_loop.is_set():  # the first time only: hold a lock until the signal has come
                in_the_loop.set()
                while not sent.is_set():
                    time.sleep(0.01)
                time.sleep(0.1)  # Python runs the handler at the main thread's next bytecodes

    monkeypatch.setattr(futures_base._AcquireFutures, "__enter__", paused_enter)

    def interrupt() -> None:
        in_the_loop.wait(timeout=300)
        os.kill(os.getpid(), signal.SIGINT)
        sent.set()

    threading.Thread(target=interrupt, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(Interrupted, match="interrupted: "):
        run_tournament(load_config(config), RunRequest(tmp_path / "t.db", jobs=2), io.StringIO())
    assert time.monotonic() - start < worker.WORKER_CLEANUP


def test_a_full_disk_stops_the_run_with_one_line_and_keeps_every_committed_game(tmp_path: Path) -> None:
    """RLIMIT_FSIZE stands in for a full disk: SQLite's next write fails (CPython ignores SIGXFSZ)."""
    config = write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=60)
    db = tmp_path / "t.db"
    command = [sys.executable, "-m", "referee", "tournament", str(config), "--db", str(db), "--jobs", "2"]
    full = subprocess.run(["prlimit", "--fsize=400000:unlimited", "--", *command], capture_output=True, text=True,
                          timeout=120)
    assert full.returncode == 6, full.stderr
    error_lines = [line for line in full.stderr.splitlines() if line.startswith("durak: error:")]
    assert len(error_lines) == 1 and "cannot write" in error_lines[0] and "Traceback" not in full.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    kept = _count(db)
    assert 0 < kept < 360
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{360 - kept} games played now, 360/360 stored" in resumed.stdout


@pytest.mark.parametrize("batch_games", [1, 4])
def test_two_rotations_of_one_deal_are_never_played_at_once(tmp_path: Path, batch_games: int) -> None:
    """Processes of one bot in two seats of a deal could tell each other hands over any channel that needs both
    running; the coordinator never has two batches with slots of one deal in flight, however many workers wait
    (a batch is played one slot at a time)."""
    import threading
    from concurrent.futures import Future

    from referee.tournament import coordinator
    from referee.tournament.course import ScheduleCourse
    from referee.tournament.progress import Progress
    from referee.tournament.worker import SlotDone

    loaded = load_config(write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=4))
    slots = schedule(loaded.config, 7)

    class Executor:  # finishes the oldest batch when full, or when nothing was submitted for a moment
        capacity = 3

        def __init__(self) -> None:
            self.batch_games = batch_games
            self.flying: list[tuple[list[worker.Job], Future[list[SlotDone]]]] = []
            self.sizes: list[int] = []
            self.most = 0
            self.played: list[str] = []
            self.lock = threading.Lock()
            self.last = time.monotonic()
            self.done = False
            self.thread = threading.Thread(target=self.finish, daemon=True)
            self.thread.start()

        def submit(self, batch: list[worker.Job]) -> Future[list[SlotDone]]:
            future: Future[list[SlotDone]] = Future()
            with self.lock:
                elsewhere = {job.slot.deal_key for jobs, _ in self.flying for job in jobs}
                assert not elsewhere & {job.slot.deal_key for job in batch}
                self.flying.append((batch, future))
                self.sizes.append(sum(job.slot.games for job in batch))
                self.most = max(self.most, len(self.flying))
                self.last = time.monotonic()
            return future

        def finish(self) -> None:
            while not self.done:
                time.sleep(0.001)
                with self.lock:
                    if not self.flying or (len(self.flying) < self.capacity and time.monotonic() < self.last + 0.05):
                        continue
                    jobs, future = self.flying.pop(0)
                self.played += [job.slot.key for job in jobs]
                future.set_result([SlotDone(slot_key=job.slot.key, games=[]) for job in jobs])

        def shutdown(self, cancel: bool) -> None:
            self.done = True

    class Nowhere:
        def save_slots(self, tournament_id: int, slots: list[list[object]]) -> list[bool]:
            return [True] * len(slots)

    executor, tournament = Executor(), SimpleNamespace(id=1)
    summary = coordinator.RunSummary(tournament, len(slots), 0)  # type: ignore[arg-type]
    progress = Progress(len(slots), 0, stream=io.StringIO())
    sink = coordinator.GameSink(Nowhere(), tournament, {})  # type: ignore[arg-type]
    run = coordinator.Coordinator(sink, ScheduleCourse(loaded), summary, progress, loaded.config.max_failures, {})
    try:
        run.play(slots, executor)
    finally:
        executor.shutdown(False)
    assert sorted(executor.played) == sorted(slot.key for slot in slots)
    assert executor.most == executor.capacity  # the executor stays full with the other deals' slots
    assert executor.sizes[0] == batch_games and max(executor.sizes) == batch_games


def test_the_coordinator_counts_ready_deals_only_as_far_as_it_must(tmp_path: Path) -> None:
    """Before every batch the loop asks whether enough deals wait; the waiting slots of a round robin are its
    whole schedule, so counting them all made a long run quadratic. It stops at the slot that makes enough."""
    from collections import deque

    from referee.tournament.coordinator import _deals_ready

    loaded = load_config(write_config(tmp_path, {"a": "play", "b": "play", "c": "play"}, deals=40))
    slots = schedule(loaded.config, 7)  # 240 slots, deal-major: a deal's two rotations side by side
    first, second = slots[0].deal_key, slots[2].deal_key
    assert slots[1].deal_key == first and second != first

    class Unreadable:  # a waiting slot the check must not get to
        @property
        def deal_key(self) -> str:
            raise AssertionError("looked past the slots it needed")

    waiting = deque([*slots[:3], *[Unreadable()] * 1000])
    assert _deals_ready(waiting, set(), 2)  # type: ignore[arg-type]
    assert _deals_ready(waiting, {second}, 1)  # type: ignore[arg-type]
    assert not _deals_ready(deque(slots[:3]), {first}, 2)  # only one deal is not in flight
    assert not _deals_ready(deque(), set(), 1)
    assert _deals_ready(deque(slots), {slot.deal_key for slot in slots[:200]}, 20)
    assert not _deals_ready(deque(slots), {slot.deal_key for slot in slots[:200]}, 21)


def test_jobs_and_a_cluster_do_not_go_together(tmp_path: Path) -> None:
    """With a cluster the Dask workers' threads set how many games run at once: --jobs with --cluster is a usage
    error, --jobs with the config's cluster key a config error; both before any bot starts or a database is
    made."""
    config, db = write_config(tmp_path, {"a": "play", "b": "play"}), tmp_path / "t.db"
    both = invoke("tournament", str(config), "--db", str(db), "--jobs", "2",
                                    "--cluster", "tcp://127.0.0.1:9")
    assert both.code == 2
    assert both.output.strip().splitlines() == [
        "durak: error: --jobs is for a run on this machine: with --cluster, the Dask workers' threads (dask worker "
        "--nthreads) set how many games run at once"]
    keyed = config.with_name("keyed.toml")
    keyed.write_text('cluster = "tcp://127.0.0.1:9"\n' + config.read_text())
    with pytest.raises(TournamentError, match="--jobs is for a run on this machine"):
        run_tournament(load_config(keyed), RunRequest(db, jobs=2), io.StringIO())
    assert not db.exists()
