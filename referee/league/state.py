"""The matchmaker's state rebuilt from the store (:class:`~referee.league.matchmaker.LeagueState`), and a league's
groups as the slots a worker plays.

Nothing of the matchmaker's state lives only in memory: who met whom, who was seated last, each version's fair
share and how many groups were issued follow from the stored groups, in one pass (a restart after a million games
reads them once); each version's rated games and rating follow from the board (:mod:`.board`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from referee.league.matchmaker import NEVER, Group, LeagueState, MatchSettings, VersionState, replay
from referee.results.league_store import GroupRow, VersionRow
from referee.tournament.schedule import Slot


def version_state(version: VersionRow, *, rating: tuple[float, float] | None = None, games: int = 0,
                  last_seated: float = NEVER) -> VersionState:
    """A stored version as the matchmaker sees it (unrated: 1500, an infinite error)."""
    elo, error = rating or (1500.0, math.inf)
    return VersionState(id=version.name, bot=version.bot, author=version.author, rating=elo, error=error,
                        games=games, last_seated=last_seated, active=version.active)


def rebuild_state(seed: int, versions: Sequence[VersionRow], groups: Sequence[GroupRow],
                  board: Mapping[str, tuple[float, float]], rated: Mapping[str, int],
                  settings: MatchSettings) -> LeagueState:
    """The state after ``groups`` (every group issued, in order), replayed as they were issued
    (:func:`~referee.league.matchmaker.replay`): meetings, each version's games issued and served, its groups
    per size and the number of its latest group, the open groups in flight; ratings and rated games from the board.

    :raises ValueError: the groups are not numbered 0, 1, 2, ... (a database that lost one).
    """
    states = tuple(version_state(v, rating=board.get(v.name), games=rated.get(v.name, 0)) for v in versions)
    return replay(LeagueState(seed=seed, versions=states),
                  ((as_group(row), row.status == "open") for row in groups), settings)


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
