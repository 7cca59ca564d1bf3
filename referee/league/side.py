"""The daemon's unrated side games (:mod:`referee.results.side_store`): the queue's requests, oldest first, as
slots the coordinator plays beside the league's own, at low priority.

Low priority means exactly this: a side game is handed to the coordinator only when it asks the league's course for
more work (a worker is free, or about to be), after the league's next group, and only while no other side game waits
or is in flight. So side games hold at most one worker at any time and the league every other; with one worker, a
side game alternates with a league group. Each request's games are duplicate deals of the asker's own seed domain
(:meth:`~referee.league.config.LoadedLeague.side_seed`): game ``i`` is deal ``i // k`` at rotation ``i % k`` of its
``k`` seats. They are stored in the request's own tournament row, so they never enter a rating or the board, and
they never count towards a version's quarantine (a run of verdicts is judged on league games).

A request whose versions no longer all play (retired, quarantined, replaced) when its turn comes, or while it is
played, is void; the games it played stay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from referee.engine.rng import derive_seed
from referee.league.config import LoadedLeague
from referee.results.arena_store import ArenaStore
from referee.results.league_store import VersionRow
from referee.results.rows import TournamentRow
from referee.results.side_store import SideRow
from referee.tournament.schedule import Slot

#: A side game's slot and deal keys start so (a league group's with ``g``, a finals' with ``f``).
SIDE_PREFIX = "s"


def is_side_deal(deal_key: str) -> bool:
    """Whether a slot's deal key (a record's ``deal``) is a side game's."""
    return deal_key.startswith(SIDE_PREFIX)


def side_slots(side: SideRow, seed: int) -> list[Slot]:
    """A request's games as slots: game ``i`` is deal ``i // k`` at rotation ``i % k``."""
    k = len(side.seats)
    table_key = ",".join(sorted(side.seats))
    slots = []
    for index in range(side.games):
        deal, rotation = divmod(index, k)
        deal_key = f"{SIDE_PREFIX}{side.id}|d{deal}"
        slots.append(Slot(key=f"{deal_key}|r{rotation}", table=(*side.seats[rotation:], *side.seats[:rotation]),
                          table_key=table_key, deal=deal, deal_key=deal_key, deal_seed=derive_seed(seed, deal),
                          rotation=rotation, games=1))
    return slots


class SideQueue:
    """The side requests as the league's course hands them out: one request at a time, one game at a time."""

    def __init__(self, store: ArenaStore, league: TournamentRow, loaded: LoadedLeague) -> None:
        self.store, self.league, self.loaded = store, league, loaded
        self.current: SideRow | None = None
        self.waiting: list[Slot] = []
        self.handed: str | None = None  # the key of the side game in flight
        self._rows: dict[int, int] = {}  # each started request's tournament row

    def more(self, versions: Mapping[str, VersionRow], stopped: Mapping[str, str]) -> list[Slot]:
        """The next side game, or nothing while one is in flight or none is asked for."""
        if self.handed is not None:
            return []
        while not self.waiting and self._start_next(versions, stopped):
            pass
        if not self.waiting:
            return []
        slot = self.waiting.pop(0)
        self.handed = slot.key
        return [slot]

    def tournament_of(self, slot: Slot) -> int:
        """The tournament row a side game goes to: its request's (read from its key, not from what is in flight: a
        cluster may hand back a game stored already, whose request may be over)."""
        side_id = int(slot.deal_key[len(SIDE_PREFIX):].split("|", 1)[0])
        if side_id not in self._rows:
            row = self.store.side(side_id).tournament_id
            assert row is not None, f"side request {side_id} was never started"
            self._rows[side_id] = row
        return self._rows[side_id]

    def on_stored(self, slot: Slot) -> None:
        if slot.key != self.handed:
            return
        self.handed = None
        if not self.waiting and self.current is not None:
            if self.current.status == "playing":
                self._finish(self.current, "done", f"{self.current.games} games played")
            self.current = None

    def stop(self, name: str, why: str) -> None:
        """A version no longer plays: the request it sits in is void (its games played so far stay)."""
        if self.current is not None and self.current.status == "playing" and name in self.current.seats:
            self.waiting = []
            self._finish(self.current, "void", f"{name} no longer plays ({why})")
            self.current = replace(self.current, status="void")
            if self.handed is None:
                self.current = None

    def _start_next(self, versions: Mapping[str, VersionRow], stopped: Mapping[str, str]) -> bool:
        """Take the oldest request: False when there is none; a request that cannot be played is made void."""
        side = self.store.next_side(self.league.id)
        if side is None:
            return False
        if (problem := self._problem(side)) is not None:  # a row the web server's user wrote by hand
            self._finish(side, "void", problem)
            return True
        gone = [name for name in side.seats if name not in versions or name in stopped]
        if gone:
            why = stopped.get(gone[0], "not a version of the league")
            self._finish(side, "void", f"{gone[0]} no longer plays ({why})")
            return True
        seed = self.loaded.side_seed(self.league.seed, side.author, side.id)
        side = self.store.start_side(side, self.league, seed)
        assert side.tournament_id is not None
        stored = self.store.stored_slots(side.tournament_id)
        self.current = side
        self.waiting = [slot for slot in side_slots(side, seed) if slot.key not in stored]
        if not self.waiting:
            self._finish(side, "done", f"{side.games} games played")
            self.current = None
        return True

    def _problem(self, side: SideRow) -> str | None:
        """Why a request cannot be played as its row says (the web checks the same before it writes one)."""
        if len(side.seats) not in self.loaded.config.sizes or len(set(side.seats)) != len(side.seats):
            return "the request's seats are not a table the league plays"
        if not 1 <= side.games <= self.loaded.arena.side_games_per_hour:
            return f"the request asks for {side.games} games, not 1 to {self.loaded.arena.side_games_per_hour}"
        return None

    def _finish(self, side: SideRow, status: Literal["done", "void"], result: str) -> None:
        self.store.finish_side(side.id, status, result)
