"""The matchmaker's state rebuilt from the store (:class:`~referee.league.matchmaker.LeagueState`), and a league's
groups as the slots a worker plays.

Nothing of the matchmaker's state lives only in memory: who met whom, who was seated last and how many groups were
issued follow from the stored groups, in one pass (a restart after a million games reads them once); each version's
rated games and rating follow from the board (:mod:`.board`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from referee.league.matchmaker import NEVER, Group, LeagueState, Pair, VersionState
from referee.results.league_store import GroupRow, VersionRow
from referee.tournament.schedule import Slot


def version_state(version: VersionRow, *, rating: tuple[float, float] | None = None, games: int = 0,
                  last_seated: float = NEVER) -> VersionState:
    """A stored version as the matchmaker sees it (unrated: 1500, an infinite error)."""
    elo, error = rating or (1500.0, math.inf)
    return VersionState(id=version.name, bot=version.bot, author=version.author, rating=elo, error=error,
                        games=games, last_seated=last_seated, active=version.active)


def rebuild_state(seed: int, versions: Sequence[VersionRow], groups: Sequence[GroupRow],
                  board: Mapping[str, tuple[float, float]], rated: Mapping[str, int]) -> LeagueState:
    """The state after ``groups`` (every group issued, in order): meetings counted per group issued, each
    version last seated at the number of its latest group, the open groups in flight.

    :raises ValueError: the groups are not numbered 0, 1, 2, ... (a database that lost one).
    """
    meetings: Counter[Pair] = Counter()
    last: dict[str, float] = {}
    in_flight = []
    for expected, row in enumerate(groups):
        if row.number != expected:
            raise ValueError(f"the league's groups skip from {expected - 1} to {row.number}")
        group = as_group(row)
        meetings.update(group.pairs())
        for name in row.seats:
            last[name] = row.number
        if row.status == "open":
            in_flight.append(group)
    states = tuple(version_state(v, rating=board.get(v.name), games=rated.get(v.name, 0),
                                 last_seated=last.get(v.name, NEVER)) for v in versions)
    return LeagueState(seed=seed, versions=states, meetings=dict(meetings), in_flight=tuple(in_flight),
                       issued=len(groups))


def as_group(row: GroupRow) -> Group:
    return Group(number=row.number, table=row.seats, deal_seed=row.deal_seed, anchor=row.anchor)


def as_row(group: Group) -> GroupRow:
    return GroupRow(number=group.number, deal_seed=group.deal_seed, seats=group.table, anchor=group.anchor)


def group_slots(group: Group) -> list[Slot]:
    """The group's k games: its deal at rotation r for r in 0..k-1, each its own slot (stored once, by key)."""
    table_key = ",".join(sorted(group.table))
    return [Slot(key=f"g{group.number}|r{rotation}", table=group.seats(rotation), table_key=table_key,
                 deal=group.number, deal_key=f"g{group.number}", deal_seed=group.deal_seed, rotation=rotation, games=1)
            for rotation in range(group.size)]


def group_of(slot: Slot) -> int:
    """The number of the group a league slot belongs to."""
    return slot.deal
