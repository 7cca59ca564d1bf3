"""The daemon's publisher of replay views (schema 12's ``replay_views``): each public league game's replay as
anyone may see it (:func:`~referee.report.game_data.public_view`), made once, in a thread of the daemon at the
lowest priority, and kept as compressed bytes that the web serves as they are. A replay is the costliest page a
visitor asks for (the game replayed through the engine: 5-8 ms of CPU at 100,000 games), and it never changes once
its group is complete: made when the game becomes public, never per request.

The database queues the work itself (a trigger queues a group's games in the transaction that completes it, and the
migration queued every game public before it): the publisher takes the queue newest first, a batch per short
transaction, and sleeps when it is empty. The league daemon runs it beside the league (``durak league run``
passes it in: the league layer does not know the viewer's data).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from referee.background import as_background
from referee.report.game_data import GAME_DATA_VERSION, encode_view, public_view
from referee.results.league_store import LeagueStore
from referee.results.store import StoreError

#: Games made per transaction: a batch takes about 0.2 s of CPU, so the daemon's own writes never wait long.
BATCH = 25
#: How long the publisher sleeps when nothing is queued.
IDLE_SECONDS = 1.0

log = logging.getLogger(__name__)


def publish_queued(store: LeagueStore, limit: int = BATCH) -> int:
    """Make the views of up to ``limit`` queued games (newest first) and keep them; how many were taken. A game
    that cannot be replayed is kept as such (the web builds it on request, and answers as it does)."""
    queued = store.queued_replay_views(limit)
    made: list[tuple[int, bytes | None]] = []
    for stored in store.replays_by_id(queued):
        try:
            made.append((stored.id, encode_view(public_view(stored, stored.number or 0))))
        except Exception as exc:  # a replay the viewer cannot show: the web's own build says why, on request
            log.warning("replay view of game id %d not made: %s: %s", stored.id, type(exc).__name__, exc)
            made.append((stored.id, None))
    if queued:
        found = {game_id for game_id, _ in made}
        made += [(game_id, None) for game_id in queued if game_id not in found]  # gone since: a no-op
        store.keep_replay_views(made, GAME_DATA_VERSION)
    return len(queued)


class ReplayPublisher:
    """A thread beside the league daemon that keeps the replay views of the database at ``db_path`` made."""

    def __init__(self, db_path: Path, *, batch: int = BATCH, idle_seconds: float = IDLE_SECONDS) -> None:
        self._db_path = db_path
        self._batch = batch
        self._idle = idle_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replay-publisher", daemon=True)
        self.made = 0  # views taken since started (for tests and the daemon's notes)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        as_background()  # the web's requests and the league's games come first
        try:
            with LeagueStore(self._db_path) as store:  # a writer (the daemon made and migrated it)
                store.requeue_replay_views(GAME_DATA_VERSION)
                while not self._stop.is_set():
                    self._step(store)
        except StoreError as exc:  # the database cannot be opened: the daemon itself says why
            log.warning("the replay publisher stopped: %s", exc)

    def _step(self, store: LeagueStore) -> None:
        """One batch, then a wait when the queue is empty or a write failed (a busy database: tried again after
        the wait, never given up while the daemon runs)."""
        try:
            taken = publish_queued(store, self._batch)
        except StoreError as exc:
            log.warning("replay views not kept this time: %s", exc)
            taken = 0
        self.made += taken
        if taken < self._batch:
            self._stop.wait(self._idle)
