"""Control groups for bots: each bot process tree gets a group in every hierarchy it needs, to be frozen, killed,
capped in memory and pids, pinned to cores and timed; cgroup v2 where usable per feature, v1 where not. Each
version is a type of its own (:mod:`.v1`, :mod:`.v2`) behind :class:`~.group.ControlGroup`."""

from referee.bots.sandbox.cgroupfs import Hierarchy, own_hierarchies, parse_hierarchies
from referee.bots.sandbox.cgroups.bot import JOIN_FAILED, BotCgroup
from referee.bots.sandbox.cgroups.group import CgroupLimits, ControlGroup
from referee.bots.sandbox.cgroups.run import FEATURES, CgroupError, CgroupRun
from referee.bots.sandbox.cgroups.v1 import V1Group
from referee.bots.sandbox.cgroups.v2 import V2Group

__all__ = ["FEATURES", "JOIN_FAILED", "BotCgroup", "CgroupError", "CgroupLimits", "CgroupRun", "ControlGroup",
           "Hierarchy", "V1Group", "V2Group", "own_hierarchies", "parse_hierarchies"]
