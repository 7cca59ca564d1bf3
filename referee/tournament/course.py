"""What a run plays: the config's schedule (:class:`ScheduleCourse`), or an SPRT's deal groups until it decides
(:class:`referee.tournament.sprt_run.SprtCourse`), behind one :class:`Course` interface."""

from __future__ import annotations

from typing import NamedTuple, Protocol, TextIO

from referee.results.record import GameRecord
from referee.results.store import Store, TournamentRow
from referee.tournament.config import LoadedConfig
from referee.tournament.errors import TournamentError
from referee.tournament.progress import Progress
from referee.tournament.schedule import Slot, schedule
from referee.tournament.worker import Job


class TournamentKey(NamedTuple):
    """What names a tournament row and tells whether a database holds it: its name and fingerprint."""

    name: str
    fingerprint: str


class Course(Protocol):
    """What a run plays, handed to the coordinator slot by slot."""

    #: The tournament row's name and fingerprint; None: the config's (with its legacy fingerprints).
    tournament_key: TournamentKey | None

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        """The slots to play first (none stored yet), the run's total games (None: open-ended) and its progress.

        :raises TournamentError: the database holds slots that this course does not schedule."""

    def more(self) -> list[Slot]:
        """The next slots of an open-ended course, asked for whenever too few are waiting; [] when there are
        no more."""

    def on_stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        """Called with each batch once stored; True ends the run (the batches in flight are abandoned)."""

    def job(self, slot: Slot, disqualified: dict[str, str]) -> Job:
        """What a worker is sent to play ``slot``: the slot, the bots whose seats forfeit (``disqualified``) and,
        for a course whose bots come and go, how to start the table's bots."""


class SlotJobs:
    """A course whose workers know its bots from the config: a job is the slot and the disqualified bots."""

    def job(self, slot: Slot, disqualified: dict[str, str]) -> Job:
        return Job(slot=slot, disqualified=dict(disqualified))


class ScheduleCourse(SlotJobs):
    """A tournament: every slot of the config's schedule not stored yet."""

    tournament_key: TournamentKey | None = None

    def __init__(self, loaded: LoadedConfig) -> None:
        self.loaded = loaded

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        slots = schedule(self.loaded.config, tournament.seed)
        stored_keys = store.stored_slots(tournament.id)
        stale = stored_keys - {slot.key for slot in slots}
        if stale:
            raise TournamentError(f"{store.path} holds games this config does not schedule (e.g. {min(stale)}); "
                                  "use --fresh to start a new tournament in it, or another --db")
        total = sum(slot.games for slot in slots)
        pending = [slot for slot in slots if slot.key not in stored_keys]
        return pending, total, Progress(total, stored_games, stream=stream)

    def more(self) -> list[Slot]:
        return []

    def on_stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        return False
