"""The daemon's post-game analyses (:mod:`referee.results.analysis_store`): the requests authors make from the web,
carried out in a thread beside the league, each in a process of its own at the lowest CPU priority.

Low priority, and never in the league's way: the thread only waits (on the database, on the analysis's process),
and the process runs at ``nice`` :data:`ANALYSIS_NICE`, one at a time, so the league's workers take a core before
it does. Each author's analyses are held to ``[arena] analysis_cpu_seconds_per_hour`` (the CPU seconds the
processes measured, over the last hour): the oldest pending request of an author under the quota goes next, and
an author over it waits until enough of the hour's work has left it (the web refuses new requests then too).
A request under way when the daemon stops is put back and done again at its next start.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

import msgspec

from referee.analysis.analyze import analyze_game
from referee.analysis.evaluate import Settings
from referee.league.config import ArenaSettings
from referee.results.analysis_store import AnalysisRow, AnalysisStore
from referee.results.arena_store import ArenaStore
from referee.results.replay import ReplayError
from referee.results.stamps import stamp
from referee.results.store import StoreError

#: The analysis process's niceness: the lowest priority, so that the league's workers never wait for it.
ANALYSIS_NICE = 19
#: Seconds between two looks at the queue (and at a running analysis, for a stop).
POLL = 0.25
#: The quotas' window.
HOUR = timedelta(hours=1)
#: Runs one analysis: (replay, seat, playouts, seed) -> (the analysis as JSON, the CPU seconds it took).
Analyze = Callable[[bytes, int, int, int], tuple[bytes, float]]


class AnalysisFailed(Exception):
    """An analysis that could not be made (a replay that does not decode or replay, a process that died)."""


class Abandoned(BaseException):
    """The daemon is stopping: the analysis under way is given up (the next daemon does it again)."""


def analysis_of(replay: bytes, seat: int, playouts: int, seed: int) -> tuple[bytes, float]:
    """The analysis (JSON) of ``seat`` of the game ``replay`` and the CPU seconds this process spent on it: what the
    daemon's analysis process runs, and what a test calls in its own.

    :raises AnalysisFailed: the replay does not decode or does not follow the rules, or has no such seat.
    """
    started = time.process_time()
    try:
        analysis = analyze_game(replay, seat, Settings(playouts=playouts, seed=seed))
    except (ReplayError, ValueError, IndexError) as exc:
        raise AnalysisFailed(f"the game could not be analyzed: {exc}") from None
    return msgspec.json.encode(analysis), time.process_time() - started


def next_analysis(store: AnalysisStore, league_id: int, cpu_per_hour: float,
                  now: datetime | None = None) -> AnalysisRow | None:
    """The oldest pending request whose author spent less than ``cpu_per_hour`` CPU seconds on analyses in the hour
    before ``now`` (``[arena] analysis_cpu_seconds_per_hour``); None: there is none."""
    since = stamp((now or datetime.now(UTC)) - HOUR)
    over: dict[str, bool] = {}
    for row in store.pending_analyses(league_id):
        if row.author not in over:
            _, used = store.analysis_usage_times(row.author, since)
            over[row.author] = sum(seconds for _, seconds in used) >= cpu_per_hour
        if not over[row.author]:
            return row
    return None


def carry_out(store: AnalysisStore, row: AnalysisRow, arena: ArenaSettings, analyze: Analyze = analysis_of) -> None:
    """One request: its game read, analyzed by ``analyze``, the analysis stored with its CPU seconds (or why not).
    A request for more worlds per decision than ``[arena] analysis_playouts`` (a row the web server's user wrote by
    hand: the server writes that setting) fails unmade.

    :raises Abandoned: from ``analyze``, the daemon stopping (the request stays running: put back at the next start).
    """
    store.start_analysis(row.id)
    if not 2 <= row.playouts <= arena.analysis_playouts:
        store.finish_analysis(row.id, None, 0.0, f"the request asks for {row.playouts} worlds per decision, not 2 to "
                                                 f"{arena.analysis_playouts}")
        return
    stored = next(iter(store.replays_by_id([row.game_id])), None)
    if stored is None:
        store.finish_analysis(row.id, None, 0.0, "the game is no longer stored")
        return
    try:
        analysis, cpu = analyze(stored.replay, row.seat, row.playouts, row.seed)
    except AnalysisFailed as exc:
        store.finish_analysis(row.id, None, 0.0, str(exc))
        return
    store.finish_analysis(row.id, analysis, cpu)


def analyze_next(store: AnalysisStore, league_id: int, arena: ArenaSettings, analyze: Analyze = analysis_of) -> bool:
    """One step of the daemon's analyses: the next request within its author's quota carried out (False: none)."""
    row = next_analysis(store, league_id, arena.analysis_cpu_seconds_per_hour)
    if row is None:
        return False
    carry_out(store, row, arena, analyze)
    return True


def _in_child(sending: Connection, replay: bytes, seat: int, playouts: int, seed: int) -> None:
    """The analysis process: at the lowest priority, one analysis, its result (or why not) sent back."""
    os.nice(ANALYSIS_NICE)
    try:
        sending.send(("done", *analysis_of(replay, seat, playouts, seed)))
    except AnalysisFailed as exc:
        sending.send(("failed", str(exc), 0.0))
    finally:
        sending.close()


class AnalysisRunner:
    """Carries out the analyses the web server queues, in a thread, each in a process of its own, until
    :meth:`stop`."""

    def __init__(self, db_path: Path, arena: ArenaSettings) -> None:
        self.db_path, self.arena = db_path, arena
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None
        # spawn, not fork: the daemon has threads (card tables, this one), which a forked child would inherit locked
        self._context = multiprocessing.get_context("spawn")

    def start(self) -> None:
        """Put back what a stopped daemon left running, then watch the queue in a thread."""
        with ArenaStore(self.db_path) as store:
            league = store.league()
            assert league is not None
            self.league_id = league.id
            store.requeue_analyses(league.id)
        self._thread = threading.Thread(target=self._watch, name="analyses", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _watch(self) -> None:
        with ArenaStore(self.db_path) as store:
            while not self.stopping.wait(POLL):
                try:
                    while not self.stopping.is_set() and analyze_next(store, self.league_id, self.arena,
                                                                      self.in_process):
                        pass
                except Abandoned:
                    return
                except StoreError:
                    continue  # a busy database: look again
                except Exception:  # a bug: the watcher goes on, the league too
                    traceback.print_exc()

    def in_process(self, replay: bytes, seat: int, playouts: int, seed: int) -> tuple[bytes, float]:
        """:func:`analysis_of` in a process of its own at nice :data:`ANALYSIS_NICE`, waited for until it answers
        or the daemon stops (then it is killed: :class:`Abandoned`). :raises AnalysisFailed: it could not."""
        receiving, sending = self._context.Pipe(duplex=False)
        child = self._context.Process(target=_in_child, args=(sending, replay, seat, playouts, seed),
                                      name="analysis", daemon=True)
        child.start()
        sending.close()
        try:
            while not receiving.poll(POLL):
                if self.stopping.is_set():
                    raise Abandoned()
                if not child.is_alive() and not receiving.poll(0):
                    raise AnalysisFailed(f"the analysis process ended without a result (exit {child.exitcode})")
            try:
                status, result, cpu = receiving.recv()
            except EOFError:
                raise AnalysisFailed("the analysis process ended without a result") from None
        finally:
            receiving.close()
            if child.is_alive():
                child.kill()
            child.join()
        if status != "done":
            raise AnalysisFailed(str(result))
        return bytes(result), float(cpu)
