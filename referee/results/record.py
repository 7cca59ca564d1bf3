"""The record of one game between bots: what the match layer leaves, the store keeps and replays tell."""

from __future__ import annotations

import msgspec

from protocol.events import AnyEvent
from protocol.records import ResultRecord, SeatTimes, StderrChunk, Verdict
from protocol.rules import Rules
from protocol.views import GameResult


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Everything about one game between bots: enough to replay it and to rate it."""

    game: str
    deal: str
    names: list[str]
    rules: Rules
    dealer: int
    deck: list[str]
    result: GameResult
    actions: int  # decisions taken
    verdicts: list[Verdict]
    times: list[SeatTimes | None]
    events: list[AnyEvent]
    strikes: list[int] = []  # per seat: replies after the move time, inside the grace (the last may be the verdict)
    stderr: list[list[StderrChunk]] = []  # per seat, what its bot wrote to stderr during the game (capped)
    move_us: list[list[int]] = []  # per seat, each decision's time in microseconds (the referee's clock)
    bot_seeds: list[int] = []  # per seat, the seed its game message carried (PROTOCOL.md 4.3)

    def to_result_record(self) -> ResultRecord:
        """The rating-facing record (``durak play --json``, ``durak export``)."""
        result, names = self.result, self.names
        return ResultRecord(
            game=self.game, deal=self.deal, variant=self.rules.variant, players=list(names),
            order=[[names[s] for s in group] for group in result.order], fools=[names[s] for s in result.fools],
            end=result.end, verdicts=list(self.verdicts), chases=result.chases,
            capped=result.end == "action_cap", rules=self.rules, times=list(self.times),
            strikes=list(self.strikes),
        )
