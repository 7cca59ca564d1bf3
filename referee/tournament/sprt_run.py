"""An SPRT run: the runner plays the duplicate deal groups of :mod:`.sprt_schedule` until
:mod:`referee.rating.sprt` decides.

The test is a tournament of the database like any other (its games are rated, exported, replayed and
reported as a tournament's), whose name says it is an SPRT and whose fingerprint covers what fixes its games
and its decision: the schedule (variant, rules, rotations, series, NEW, BASE and the field) and the test (Elo
bounds, alpha, beta, rating mode). ``max_games`` is left out, so a resume with a larger one goes on testing.

Decisions are taken over completed groups in schedule order only: group g counts once all its slots are
stored and every group before it has counted, and the test stops at the first group after which the
decision is not "continue". A group that completes early (several are in flight at once) waits; groups
stored beyond the decision (in flight when it was taken, then finished by a resumed run) never change it. So
the decision is a function of the stored games, and a resumed run reaches the same one at the same group.
"""

from __future__ import annotations

import hashlib
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TextIO, TypeVar

import msgspec

from referee.rating.bradley_terry import Mode
from referee.rating.outcomes import outcome_text, parse_outcome
from referee.rating.sprt import Hypotheses, Placing, ScoreTally, SprtState, arm_score, field_group, sprt_state
from referee.results.record import GameRecord
from referee.results.store import Store, TournamentRow
from referee.tournament.config import LoadedConfig, SprtConfig, sprt_problem
from referee.tournament.course import SlotJobs, TournamentKey
from referee.tournament.errors import TournamentError
from referee.tournament.progress import Progress
from referee.tournament.schedule import SCHEDULE_VERSION, Slot
from referee.tournament.sprt_schedule import SprtPlan

T = TypeVar("T")


class SprtError(ValueError):
    """SPRT arguments that do not make sense: a bot the config does not have, bad bounds; one line."""


@dataclass(frozen=True)
class SprtTest:
    """The hypotheses and error rates: H1 "NEW is at least ``elo1`` stronger" against H0 "at most ``elo0``"."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    mode: Mode = "fool"
    max_games: int | None = None

    def __post_init__(self) -> None:
        if problem := sprt_problem(self, in_config=False):
            raise SprtError(problem[1])

    @property
    def hypotheses(self) -> Hypotheses:
        return Hypotheses(self.elo0, self.elo1, self.alpha, self.beta)


@dataclass(frozen=True)
class SprtRequest:
    """What ``durak sprt`` asked for, argument by argument (None: not given, so the config's ``[sprt]`` key)."""

    new: str | None = None
    base: str | None = None
    field: Sequence[str] = ()
    elo0: float | None = None
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    max_games: int | None = None
    mode: Mode | None = None

    def resolve(self, loaded: LoadedConfig) -> tuple[str, str, tuple[str, ...], SprtTest]:
        """NEW, BASE, the field and the test: each given argument, else the config's key, else the default.

        :raises SprtError: NEW, BASE, --elo0 or --elo1 neither given nor in the config's ``[sprt]`` table."""
        keys = loaded.config.sprt or SprtConfig()
        missing = [what for what, given, key in (("NEW", self.new, keys.new), ("BASE", self.base, keys.base),
                                                 ("--elo0", self.elo0, keys.elo0), ("--elo1", self.elo1, keys.elo1))
                   if given is None and key is None]
        if missing:
            raise SprtError(f"give {' and '.join(missing)} (or set them in the [sprt] table of {loaded.path})")

        def pick(given: T | None, key: T) -> T:
            return key if given is None else given

        new, base = pick(self.new, keys.new), pick(self.base, keys.base)
        elo0, elo1 = pick(self.elo0, keys.elo0), pick(self.elo1, keys.elo1)
        assert new is not None and base is not None and elo0 is not None and elo1 is not None
        test = SprtTest(elo0, elo1, pick(self.alpha, keys.alpha), pick(self.beta, keys.beta),
                        pick(self.mode, keys.mode), pick(self.max_games, keys.max_games))
        return new, base, tuple(self.field or keys.field), test


def sprt_setup(loaded: LoadedConfig, new: str, base: str, field: Sequence[str] = ()) -> tuple[LoadedConfig, SprtPlan]:
    """The config with only the SPRT's bots, and the plan of its groups (the config's rotations and series).

    :raises SprtError: a name the config has no bot of, or a bot named twice."""
    names = [bot.name for bot in loaded.bots]
    for name in (new, base, *field):
        if name not in names:
            raise SprtError(f"{loaded.path} has no bot named {name!r} (its bots: {', '.join(names)})")
    try:
        plan = SprtPlan(new, base, tuple(field), rotations=loaded.config.rotations, series=loaded.config.series)
    except ValueError as exc:
        raise SprtError(str(exc)) from None
    wanted = {new, base, *field}
    return replace(loaded, bots=[bot for bot in loaded.bots if bot.name in wanted]), plan


def sprt_fingerprint(loaded: LoadedConfig, plan: SprtPlan, test: SprtTest) -> str:
    """SHA-256 (hex) of what fixes the SPRT's games and decision (the module docstring says what)."""
    document = {
        "sprt": 1, "schedule": SCHEDULE_VERSION, "rules": msgspec.to_builtins(loaded.rules),
        "rotations": plan.rotations, "series": plan.series, "new": plan.new, "base": plan.base,
        "field": sorted(plan.field), "elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha, "beta": test.beta,
        "mode": test.mode,
    }
    return hashlib.sha256(msgspec.json.encode(document, order="sorted")).hexdigest()


def placing(outcome: str, bot: str) -> Placing:
    """One game (an outcome text) as ``bot``'s arm saw it."""
    players, places, has_fool = parse_outcome(outcome)
    return Placing(places=tuple(places), drawn=not has_fool, seat=players.index(bot))


class GroupTracker:
    """The test's state over the completed groups in schedule order, fed stored slots in any order."""

    def __init__(self, plan: SprtPlan, test: SprtTest, seed: int) -> None:
        self.plan, self.test, self.seed = plan, test, seed
        self.outcomes: dict[str, list[str]] = {}  # slot key -> its games' outcome texts
        self.scores = ScoreTally()  # of the counted groups, NEW's point of view
        self.base_total = 0.0  # against a field: the sum of BASE's arm's scores over the counted groups
        self.state = self._state()

    def add(self, slot_key: str, outcomes: list[str]) -> None:
        self.outcomes[slot_key] = outcomes

    def advance(self) -> SprtState:
        """Count every group that is complete and next in order, until the test decides; the state."""
        while self.state.decision == "continue":
            slots = self.plan.group(self.seed, self.scores.groups)
            if any(slot.key not in self.outcomes for slot in slots):
                break
            self._count(slots)
            self.state = self._state()
        return self.state

    def _count(self, slots: list[Slot]) -> None:
        plan, mode = self.plan, self.test.mode
        if not plan.field:
            games = [placing(text, plan.new) for slot in slots for text in self.outcomes[slot.key]]
            self.scores.add(arm_score(games, mode))
            return
        arms = [[placing(text, (plan.new, plan.base)[arm]) for slot in slots if slot.arm == arm
                 for text in self.outcomes[slot.key]] for arm in (0, 1)]
        group = field_group(arms[0], arms[1], mode)
        self.scores.add(group.score)
        self.base_total += group.base

    def _state(self) -> SprtState:
        test = self.test
        groups = self.scores.groups
        base = (self.base_total / groups if groups else 0.5) if self.plan.field else None
        return sprt_state(self.scores, test.hypotheses, base_score=base,
                          games_per_group=self.plan.games_per_group, max_games=test.max_games)


def format_state(state: SprtState) -> str:
    """``LLR 1.23 [-2.94, 2.94]  Elo +45.1 [+20.3, +70.2]  30 groups, 60 games  continue``."""

    def elo(value: float | None, unbounded: str) -> str:
        return unbounded if value is None else f"{value:+.1f}"

    # an Elo of None is a score at 0 or 1: the low end is +inf only when every group scored 1 (no spread)
    score = state.score
    low = elo(state.elo_low, "+inf" if score == 1.0 else "-inf")
    high = elo(state.elo_high, "-inf" if score == 0.0 else "+inf")
    interval = f" [{low}, {high}]" if state.groups >= 2 else ""
    estimate = f"Elo {elo(state.elo, '?' if score is None else ('-inf' if score <= 0.5 else '+inf'))}"
    decision = {"H1": "H1 accepted", "H0": "H0 accepted", "truncated": "truncated (no decision)",
                "continue": "continue"}[state.decision]
    return (f"LLR {state.llr:.2f} [{state.lower:.2f}, {state.upper:.2f}]  {estimate}{interval}  "
            f"{state.groups} groups, {state.games} games  {decision}")


class SprtProgress(Progress):
    """The test's state as it goes: one line (redrawn in place on a terminal)."""

    def __init__(self, state: SprtState, done: int, stream: TextIO | None, max_games: int | None) -> None:
        super().__init__(max_games or sys.maxsize, done, stream)
        self.state = state

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self._start
        rate = (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0
        return f"sprt: {format_state(self.state)}  {rate:,.1f} games/s"


class SprtCourse(SlotJobs):
    """The runner's course (:class:`~referee.tournament.course.Course`) of an SPRT."""

    def __init__(self, loaded: LoadedConfig, plan: SprtPlan, test: SprtTest) -> None:
        self.plan, self.test = plan, test
        name = f"{loaded.config.name}: sprt {plan.new} against {plan.base}"
        self.tournament_key: TournamentKey | None = TournamentKey(name, sprt_fingerprint(loaded, plan, test))
        self.tracker: GroupTracker | None = None
        self.progress: SprtProgress | None = None
        self.next_group = 0  # the first group more() has not handed out
        self.stored_keys: set[str] = set()

    @property
    def state(self) -> SprtState:
        assert self.tracker is not None, "the run has not begun"
        return self.tracker.state

    def begin(self, store: Store, tournament: TournamentRow, stored_games: int,
              stream: TextIO | None) -> tuple[list[Slot], int | None, Progress]:
        self.tracker = GroupTracker(self.plan, self.test, tournament.seed)
        outcomes = store.slot_outcomes(tournament.id)
        key = re.compile(rf"s:{re.escape(self.plan.table_id)}\|d(\d+)\|.*")
        for slot_key, texts in outcomes.items():
            match = key.fullmatch(slot_key)
            if match is None or slot_key not in {s.key for s in self.plan.group(tournament.seed, int(match[1]))}:
                raise TournamentError(f"{store.path} holds games this SPRT does not schedule (e.g. {slot_key}); use "
                                      "--fresh to start a new tournament in it, or another --db")
            self.tracker.add(slot_key, texts)
        self.stored_keys = set(outcomes)
        state = self.tracker.advance()
        self.next_group = state.groups
        self.progress = SprtProgress(state, stored_games, stream, self.test.max_games)
        return [], None, self.progress

    def more(self) -> list[Slot]:
        assert self.tracker is not None
        limit = None if self.test.max_games is None else -(-self.test.max_games // self.plan.games_per_group)
        while self.tracker.state.decision == "continue" and (limit is None or self.next_group < limit):
            slots = [s for s in self.plan.group(self.tracker.seed, self.next_group) if s.key not in self.stored_keys]
            self.next_group += 1
            if slots:
                return slots
        return []

    def on_stored(self, done: list[tuple[Slot, list[GameRecord]]]) -> bool:
        assert self.tracker is not None and self.progress is not None
        for slot, games in done:
            self.tracker.add(slot.key, [outcome_text(game.to_result_record()) for game in games])
        self.progress.state = self.tracker.advance()
        return self.progress.state.decision != "continue"
