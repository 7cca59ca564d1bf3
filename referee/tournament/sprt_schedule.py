"""The schedule of an SPRT of NEW against BASE: duplicate deal groups, a pure function of the bots and the seed.

A *deal group* (the unit of :mod:`referee.rating.sprt`) is one deal played in every seat rotation by arm NEW and
again by arm BASE, in the same seats against the same opponents:

* head to head (no field): NEW and BASE at one 2-seat table, the deal in every seating. Both arms are the
  same games (NEW's seat in one is BASE's in the other), so a group is the tournament's deal of the table
  ``BASE,NEW``: the same table id, deal seed and seat orders as a round robin of the two would have.
* against a field of ``k - 1`` bots: arm 0 seats NEW, arm 1 seats BASE, in the same seat of the same base
  order, the field in the others; each arm plays the deal in every rotation. The arm's seat in the base
  order is drawn like a tournament table's base order (a seeded shuffle of the sorted field with the arm's
  seat first).

Group ``g`` is deal ``g`` of the group's table: its seed is the tournament's ``derive_seed(seed, "deal",
table_id, g)`` with ``table_id`` the sorted names of NEW, BASE and the field, and every slot of the group
(both arms, all rotations) shares the deal key ``table_id|dg``, so the runner never plays two of them at
once and a group is known complete when all its slot keys are stored. Slot keys start with ``s:`` (a
tournament's with ``t:``) and name the arm against a field: ``s:base,f1,new|d3|a1|r2``.

Each arm has processes of its own (:attr:`Slot.arm` is part of :func:`~referee.tournament.schedule.instance_for`):
a field bot plays a deal once per rotation in each arm, never twice in one process.

Groups are numbered from 0 and each depends only on its number, so the schedule is as long as the test
needs: a resume regenerates the same groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.engine.rng import SeededRng, derive_seed
from referee.results.deals import ARMS, rotation_count
from referee.tournament.schedule import Slot, seat_order, table_key


@dataclass(frozen=True)
class SprtPlan:
    """What fixes an SPRT's slots: the bots, the seat rotations (``cyclic`` or ``all``) and the series length."""

    new: str
    base: str
    field: tuple[str, ...] = ()
    rotations: str = "cyclic"
    series: int = 1

    def __post_init__(self) -> None:
        names = [self.new, self.base, *self.field]
        if len(set(names)) != len(names):
            raise ValueError("NEW, BASE and the field must be different bots")

    @property
    def players(self) -> int:
        return 2 if not self.field else 1 + len(self.field)

    @property
    def table_id(self) -> str:
        return table_key([self.new, self.base, *self.field])

    @property
    def games_per_group(self) -> int:
        arms = 1 if not self.field else len(ARMS)
        return arms * rotation_count(self.players, self.rotations) * self.series

    def base_order(self, seed: int, arm: int = 0) -> tuple[str, ...]:
        """Rotation 0's seats of ``arm``: head to head the tournament's order of the table ``BASE,NEW``; against a
        field the arm's bot and the sorted field, shuffled with the arm's seat the same in both arms."""
        members = [(self.new, self.base)[arm], *sorted(self.field)] if self.field else sorted([self.new, self.base])
        seats = list(range(len(members)))
        SeededRng(derive_seed(seed, "seats", self.table_id)).shuffle(seats)
        return tuple(members[i] for i in seats)

    def group(self, seed: int, index: int) -> list[Slot]:
        """The slots of deal group ``index``: arm by arm (NEW's first), rotation by rotation."""
        deal_key = f"{self.table_id}|d{index}"
        deal_seed = derive_seed(seed, "deal", self.table_id, index)
        count = rotation_count(self.players, self.rotations)
        slots = []
        for arm in range(len(ARMS) if self.field else 1):
            base = self.base_order(seed, arm)
            for rotation in range(count):
                table = seat_order(base, rotation, self.rotations)
                arm_key = f"|a{arm}" if self.field else ""
                slots.append(Slot(key=f"s:{deal_key}{arm_key}|r{rotation}", table=table, table_key=table_key(table),
                                  deal=index, deal_key=deal_key, deal_seed=deal_seed, rotation=rotation,
                                  games=self.series, arm=arm))
        return slots

    def groups(self, seed: int, start: int, stop: int) -> list[Slot]:
        """The slots of groups ``start`` to ``stop - 1``, in schedule order."""
        return [slot for index in range(start, stop) for slot in self.group(seed, index)]

