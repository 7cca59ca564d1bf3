"""Control groups (referee.bots.sandbox.cgroups) against a fake cgroupfs: a tmp_path tree laid out like a pure v1, a
pure v2 and a hybrid machine, checking which hierarchy serves each feature and which file each operation touches."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from referee.bots.sandbox.cgroups import (
    BotCgroup,
    CgroupLimits,
    CgroupRun,
    Hierarchy,
    V1Group,
    V2Group,
    own_hierarchies,
)
from referee.bots.sandbox.isolation import Bind, with_cgroups

_MIB = 1 << 20
_V1 = {"freezer": "freezer", "memory": "memory", "pids": "pids", "cpuset": "cpuset", "cpu,cpuacct": "cpu,cpuacct"}

# What the kernel puts in a new group: v1 per controller of the hierarchy, v2 its core files and, per controller
# offered, the controller's files.
_V1_FILES = {
    "freezer": {"freezer.state": "THAWED\n"},
    "memory": {"memory.limit_in_bytes": "9223372036854771712\n", "memory.memsw.limit_in_bytes": "9223372036854771712\n",
               "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"},
    "pids": {"pids.max": "max\n"},
    "cpuset": {"cpuset.cpus": "\n", "cpuset.mems": "\n"},
    "cpuacct": {"cpuacct.usage": "0\n"},
    "cpu": {"cpu.shares": "1024\n"},
}
_V2_CORE = {"cgroup.freeze": "0\n", "cgroup.events": "populated 0\nfrozen 0\n", "cgroup.kill": "",
            "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n", "cgroup.controllers": "\n",
            "cgroup.subtree_control": "\n"}
_V2_FILES = {
    "memory": {"memory.max": "max\n", "memory.swap.max": "max\n",
               "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"},
    "pids": {"pids.max": "max\n"},
    "cpuset": {"cpuset.cpus": "\n", "cpuset.mems": "\n"},
}


class FakeCgroupfs:
    """Cgroup mounts under ``root`` (a mount directory name -> its v1 controllers, or None for the v2 hierarchy),
    the referee in each hierarchy's root group, and the kernel's part: ``mkdir`` fills a new group with its
    control files, ``rmdir`` takes them along, and a write replaces a file's value (as the kernel parses it)."""

    def __init__(self, root: Path, mounts: Mapping[str, str | None], *, v2_controllers: str = "",
                 absent: tuple[str, ...] = ()) -> None:
        self.root = root
        self.mounts = dict(mounts)
        self.v2_controllers = v2_controllers
        self.absent = absent  # control files the kernel does not make in a new group (an older kernel)
        for mount in self.mounts:
            (root / mount).mkdir(parents=True)
            self._fill(root / mount)
            if mount == "cpuset":
                (root / mount / "cpuset.cpus").write_text("0-1\n")
                (root / mount / "cpuset.mems").write_text("0\n")
        if None in self.mounts.values():
            (root / self._v2_mount() / "cgroup.controllers").write_text(v2_controllers + "\n")
        self.proc = root / "proc"
        self.proc.mkdir()
        (self.proc / "mountinfo").write_text("".join(self._mount_line(n, mount) for n, mount in enumerate(mounts)))
        (self.proc / "cgroup").write_text("".join(
            f"{n + 1}:{controllers}:/\n" if controllers is not None else "0::/\n"
            for n, controllers in enumerate(self.mounts.values())))

    def _v2_mount(self) -> str:
        return next(mount for mount, controllers in self.mounts.items() if controllers is None)

    def _mount_line(self, n: int, mount: str) -> str:
        controllers = self.mounts[mount]
        kind = "cgroup2 cgroup2 rw" if controllers is None else f"cgroup cgroup rw,{controllers}"
        return f"{40 + n} 31 0:{40 + n} / {self.root / mount} rw,relatime - {kind}\n"

    def _fill(self, group: Path) -> None:
        controllers = self.mounts[group.relative_to(self.root).parts[0]]
        if controllers is None:
            files = dict(_V2_CORE)
            for controller in self.v2_controllers.split():
                files.update(_V2_FILES.get(controller, {}))
        else:
            files = {name: text for controller in controllers.split(",")
                     for name, text in _V1_FILES[controller].items()}
        for name, text in {"cgroup.procs": "", **files}.items():
            if name not in self.absent:
                (group / name).write_text(text)

    def _under(self, path: object) -> bool:
        return isinstance(path, str | os.PathLike) and os.fspath(path).startswith(os.fspath(self.root) + os.sep)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_mkdir, real_rmdir, real_open = os.mkdir, os.rmdir, os.open

        def mkdir(path: str, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
            real_mkdir(path, mode, dir_fd=dir_fd)
            if self._under(path):
                self._fill(Path(path))

        def rmdir(path: str, *, dir_fd: int | None = None) -> None:
            if self._under(path) and os.path.isdir(path) and not any(entry.is_dir() for entry in os.scandir(path)):
                for entry in os.scandir(path):
                    os.unlink(entry.path)
            real_rmdir(path, dir_fd=dir_fd)

        def open_(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
            if self._under(path) and flags & (os.O_WRONLY | os.O_RDWR):
                flags |= os.O_TRUNC
            return real_open(path, flags, mode, dir_fd=dir_fd)

        monkeypatch.setattr(os, "mkdir", mkdir)
        monkeypatch.setattr(os, "rmdir", rmdir)
        monkeypatch.setattr(os, "open", open_)


def _pure_v1(root: Path) -> FakeCgroupfs:
    return FakeCgroupfs(root, _V1)


def _pure_v2(root: Path) -> FakeCgroupfs:
    return FakeCgroupfs(root, {"unified": None}, v2_controllers="cpuset cpu io memory pids")


def _hybrid(root: Path) -> FakeCgroupfs:
    """Like this kind of machine (ARCHITECTURE.md): a v2 hierarchy with no controllers of its own beside v1's."""
    return FakeCgroupfs(root, {**_V1, "unified": None}, v2_controllers="hugetlb")


LAYOUTS: dict[str, Callable[[Path], FakeCgroupfs]] = {"v1": _pure_v1, "v2": _pure_v2, "hybrid": _hybrid}
# The mount whose run group serves each feature.
EXPECTED = {
    "v1": {"freeze": "freezer", "kill": "freezer", "memory": "memory", "pids": "pids", "cpuset": "cpuset",
           "cpu": "cpu,cpuacct"},
    "v2": dict.fromkeys(("freeze", "kill", "memory", "pids", "cpuset", "cpu"), "unified"),
    "hybrid": {"freeze": "unified", "kill": "unified", "memory": "memory", "pids": "pids", "cpuset": "cpuset",
               "cpu": "unified"},
}
# The mounts where a bot gets a group: those serving a feature, and the v1 ones runtimes read their limits from
# (the JVM wants cpuset, cpu, cpuacct and memory; on a hybrid machine cpu,cpuacct serves no feature of ours).
BOT_MOUNTS = {layout: set(features.values()) for layout, features in EXPECTED.items()}
BOT_MOUNTS["hybrid"].add("cpu,cpuacct")


@pytest.fixture
def make_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[FakeCgroupfs], CgroupRun]]:
    """Open a run on a fake cgroupfs, found as the referee finds its own (from its /proc files); closed after."""
    runs: list[CgroupRun] = []

    def make_run(fake: FakeCgroupfs) -> CgroupRun:
        fake.install(monkeypatch)
        runs.append(run := CgroupRun.open(own_hierarchies(str(fake.proc))))
        return run

    yield make_run
    for run in runs:
        run.close()
        assert not [path for path in run.paths if os.path.exists(path)]


def _bot(run: CgroupRun, limits: CgroupLimits | None = None) -> BotCgroup:
    return run.create("bot", limits or CgroupLimits())


def _value(path: str | Path) -> str:
    return Path(path).read_text().strip()


def _at(run: CgroupRun, feature: str, name: str) -> str:
    """The control file ``name`` of the bot group "bot" in the hierarchy that serves ``feature``."""
    return os.path.join(run.where[feature], "bot", name)


# -------------------------------------------------------------------------------------------- detection


def test_the_fake_proc_files_give_the_hierarchies_as_the_real_ones_would(tmp_path: Path) -> None:
    fake = _hybrid(tmp_path)
    found = own_hierarchies(str(fake.proc))
    assert found[0] == Hierarchy(2, frozenset(), str(tmp_path / "unified"), str(tmp_path / "unified"))
    cpu = str(tmp_path / "cpu,cpuacct")
    assert Hierarchy(1, frozenset({"cpu", "cpuacct"}), cpu, cpu) in found
    assert len(found) == 6
    assert own_hierarchies(str(tmp_path / "no-proc")) == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_feature_is_served_by_the_hierarchy_the_layout_gives_it(
        layout: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    assert run.missing == ()
    assert {feature: Path(path).parent.name for feature, path in run.where.items()} == EXPECTED[layout]
    assert all(Path(path).name == run.name for path in run.where.values())
    bot = _bot(run)
    assert bot.features == run.features
    mounts = [Path(path).parent.parent.name for path in bot.paths]  # one group per hierarchy used, v2 first
    assert sorted(mounts) == sorted(BOT_MOUNTS[layout])
    assert "unified" not in mounts or mounts[0] == "unified"
    procs = [os.path.join(path, "cgroup.procs") for path in bot.paths]
    assert bot.join_prefix()[4:] == [*procs, "--"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_sandbox_shows_the_bot_its_own_groups_at_their_mount_points_and_nothing_else(
        layout: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    bot = _bot(run, CgroupLimits(memory_bytes=256 * _MIB))
    shown = dict(bot.shown())
    assert sorted(shown) == sorted(bot.paths)
    assert {Path(mount).name for mount in shown.values()} == BOT_MOUNTS[layout]
    for group, mount in shown.items():
        assert group.startswith(mount + os.sep) and Path(group).name == "bot"
    cap = "memory.max" if layout == "v2" else "memory.limit_in_bytes"
    memory = _value(os.path.join(run.where["memory"], "bot", cap))
    assert memory == str(256 * _MIB)  # what a runtime reads from the group shown at the memory mount
    base = (Bind("tmpfs", None, "/tmp"), Bind("remount-ro", None, "/"))
    view = with_cgroups(base, bot.shown())
    assert view[0] == base[0] and view[-1] == base[-1]  # shown before the read-only remount
    binds = [bind for bind in view if bind.kind == "ro-bind"]
    assert {(bind.source, bind.dest) for bind in binds} == set(bot.shown())
    made = {bind.dest for bind in view if bind.kind in ("dir", "tmpfs")}
    for bind in binds:  # the folders above each mount point come first (bwrap makes them searchable by the bot)
        assert all(str(parent) in made for parent in Path(bind.dest).parents if str(parent) != "/"
                   and str(parent) not in shown.values())


def test_a_group_without_a_known_mount_point_is_not_shown(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    fake = _pure_v2(tmp_path)
    run = make_run(fake)  # installs the fake's kernel part
    (hierarchy,) = own_hierarchies(str(fake.proc))
    assert _bot(run).shown()
    blind = CgroupRun.open([dataclasses.replace(hierarchy, mount="")])
    try:
        assert blind.features and blind.create("bot", CgroupLimits()).shown() == ()
    finally:
        blind.close()


def test_a_hybrid_machine_without_v1_leaves_memory_pids_and_cpuset_missing(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(FakeCgroupfs(tmp_path, {"unified": None}, v2_controllers="hugetlb"))
    assert run.features == {"freeze", "kill", "cpu"}
    assert run.missing == ("memory: no cgroup v1 or v2 memory controller", "pids: no cgroup v1 or v2 pids controller",
                           "cpuset: no cgroup v1 or v2 cpuset controller")


# -------------------------------------------------------------------------------------------- limits


def test_v2_limits_go_to_memory_max_swap_pids_max_and_cpuset(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_pure_v2(tmp_path))
    _bot(run, CgroupLimits(memory_bytes=64 * _MIB, pids=32, cpus="1"))
    assert _value(_at(run, "memory", "memory.max")) == str(64 * _MIB)
    assert _value(_at(run, "memory", "memory.swap.max")) == "0"
    assert _value(_at(run, "pids", "pids.max")) == "32"
    assert _value(_at(run, "cpuset", "cpuset.cpus")) == "1"
    assert not os.path.exists(_at(run, "memory", "memory.limit_in_bytes"))


def test_v1_limits_go_to_limit_in_bytes_memsw_oom_control_pids_max_and_cpuset(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_pure_v1(tmp_path))
    _bot(run, CgroupLimits(memory_bytes=64 * _MIB, pids=32, cpus="1"))
    assert _value(_at(run, "memory", "memory.limit_in_bytes")) == str(64 * _MIB)
    assert _value(_at(run, "memory", "memory.memsw.limit_in_bytes")) == str(64 * _MIB)
    assert _value(_at(run, "memory", "memory.oom_control")) == "0"  # the OOM killer on
    assert _value(_at(run, "pids", "pids.max")) == "32"
    assert (_value(_at(run, "cpuset", "cpuset.cpus")), _value(_at(run, "cpuset", "cpuset.mems"))) == ("1", "0")
    parent = run.where["cpuset"]  # the run's group: cores and nodes of the referee's own
    assert (_value(os.path.join(parent, "cpuset.cpus")), _value(os.path.join(parent, "cpuset.mems"))) == ("0-1", "0")


def test_a_v1_cpuset_group_without_a_cpu_limit_gets_its_parents_cores_and_nodes(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_pure_v1(tmp_path))
    _bot(run, CgroupLimits(memory_bytes=None, pids=None, cpus=None))
    assert (_value(_at(run, "cpuset", "cpuset.cpus")), _value(_at(run, "cpuset", "cpuset.mems"))) == ("0-1", "0")
    assert _value(_at(run, "memory", "memory.limit_in_bytes")) == "9223372036854771712"  # uncapped: untouched
    assert _value(_at(run, "pids", "pids.max")) == "max"


def test_a_hybrid_machine_caps_through_v1_and_leaves_the_v2_group_uncapped(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_hybrid(tmp_path))
    bot = _bot(run, CgroupLimits(memory_bytes=64 * _MIB, pids=32, cpus="1"))
    assert _value(_at(run, "memory", "memory.limit_in_bytes")) == str(64 * _MIB)
    assert _value(_at(run, "pids", "pids.max")) == "32"
    v2_group = bot.paths[0]
    assert v2_group == os.path.join(run.where["freeze"], "bot")
    assert not [name for name in os.listdir(v2_group) if name.startswith(("memory.", "pids.", "cpuset."))]


def test_a_limit_that_cannot_be_written_leaves_no_group_behind(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(FakeCgroupfs(tmp_path, _V1, absent=("pids.max",)))
    with pytest.raises(OSError, match=r"^cgroups: cannot set up .*/pids/.*/bot/pids.max: No such file"):
        _bot(run, CgroupLimits(pids=8))
    assert not [path for path in run.paths if os.path.exists(os.path.join(path, "bot"))]


# -------------------------------------------------------------------------------------------- freeze, kill


def test_v2_freezes_through_cgroup_freeze_and_waits_for_cgroup_events(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_pure_v2(tmp_path))
    bot = _bot(run)
    assert bot.start_freeze()
    assert _value(_at(run, "freeze", "cgroup.freeze")) == "1"
    assert not bot.wait_frozen(0.05)  # the kernel has not said "frozen 1" yet
    Path(_at(run, "freeze", "cgroup.events")).write_text("populated 1\nfrozen 1\n")
    assert bot.wait_frozen(0.05)
    bot.thaw()
    assert _value(_at(run, "freeze", "cgroup.freeze")) == "0"
    Path(_at(run, "freeze", "cgroup.events")).write_text("populated 0\nfrozen 0\n")


def test_v1_freezes_through_freezer_state(tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_pure_v1(tmp_path))
    bot = _bot(run)
    assert bot.freeze(0.05)
    assert _value(_at(run, "freeze", "freezer.state")) == "FROZEN"
    bot.thaw()
    assert _value(_at(run, "freeze", "freezer.state")) == "THAWED"
    Path(_at(run, "freeze", "freezer.state")).write_text("FREEZING\n")  # a task that does not stop
    assert not bot.wait_frozen(0.05)


def test_a_hybrid_machine_freezes_in_v2_and_leaves_the_v1_freezer_alone(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_hybrid(tmp_path))
    bot = _bot(run)
    assert bot.start_freeze() and bot.frozen == os.path.join(tmp_path, "unified", run.name, "bot")
    assert _value(os.path.join(bot.frozen, "cgroup.freeze")) == "1"
    assert not os.path.exists(tmp_path / "freezer" / run.name)


def test_v2_kills_through_cgroup_kill_and_waits_until_unpopulated(
        tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(_hybrid(tmp_path))
    bot = _bot(run)
    assert bot.kill(0.05)
    assert _value(_at(run, "kill", "cgroup.kill")) == "1"
    assert _value(_at(run, "freeze", "cgroup.freeze")) == "0"  # not frozen for it
    Path(_at(run, "kill", "cgroup.events")).write_text("populated 1\nfrozen 0\n")  # a process that does not die
    assert not bot.kill(0.05)
    assert bot.is_populated()
    Path(_at(run, "kill", "cgroup.events")).write_text("populated 0\nfrozen 0\n")


def _sleeper_in(procs: str) -> subprocess.Popen[bytes]:
    """A real process listed in a fake cgroup.procs, which the fake kernel unlists once it is dead and reaped."""
    sleeper = subprocess.Popen(["sleep", "600"])
    Path(procs).write_text(f"{sleeper.pid}\n")
    threading.Thread(target=lambda: (sleeper.wait(), Path(procs).write_text("")), daemon=True).start()
    return sleeper


@pytest.mark.parametrize("layout", ["v1", "v2 before cgroup.kill"])
def test_without_cgroup_kill_each_member_is_killed_while_frozen(
        layout: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    fake = _pure_v1(tmp_path) if layout == "v1" else FakeCgroupfs(tmp_path, {"unified": None}, absent=("cgroup.kill",))
    run = make_run(fake)
    bot = _bot(run)
    assert "kill" in bot.features
    sleeper = _sleeper_in(_at(run, "kill", "cgroup.procs"))
    try:
        assert bot.kill(5.0)
        assert sleeper.wait(timeout=5) == -9
    finally:
        sleeper.kill()
    state = "freezer.state" if layout == "v1" else "cgroup.freeze"
    assert _value(_at(run, "freeze", state)) in ("THAWED", "0")  # thawed after, so that the kill is acted on
    assert not os.path.exists(_at(run, "kill", "cgroup.kill"))


# -------------------------------------------------------------------------------------------- counters


@pytest.mark.parametrize(("layout", "file", "text"), [
    ("v2", "memory.events", "low 0\nhigh 0\nmax 9\noom 5\noom_kill 3\n"),
    ("v1", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
    ("hybrid", "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
])
def test_oom_kills_are_read_from_the_memory_groups_own_file(
        layout: str, file: str, text: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    bot = _bot(run, CgroupLimits(memory_bytes=64 * _MIB))
    assert bot.oom_kills() == 0
    Path(_at(run, "memory", file)).write_text(text)
    assert bot.oom_kills() == 3


@pytest.mark.parametrize(("layout", "file", "text"), [
    ("v2", "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"),
    ("v1", "cpuacct.usage", "1500000\n"),
    ("hybrid", "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"),
])
def test_cpu_time_is_read_from_cpu_stat_or_cpuacct(
        layout: str, file: str, text: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    bot = _bot(run)
    assert bot.cpu_ns() == 0
    Path(_at(run, "cpu", file)).write_text(text)
    assert bot.cpu_ns() == 1_500_000


@pytest.mark.parametrize("layout", LAYOUTS)
def test_populated_comes_from_cgroup_events_in_v2_and_from_cgroup_procs_in_v1(
        layout: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    bot = _bot(run)
    assert not bot.is_populated() and bot.pids() == []
    Path(bot.paths[0], "cgroup.procs").write_text("4242\n")  # listed, but v2 says unpopulated: v2 is believed
    assert (bot.is_populated(), bot.pids()) == (layout == "v1", [4242])
    Path(bot.paths[0], "cgroup.procs").write_text("")


# -------------------------------------------------------------------------------------------- set aside, removal


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_wrappers_are_set_aside_beside_the_frozen_group_and_removed_with_it(
        layout: str, tmp_path: Path, make_run: Callable[[FakeCgroupfs], CgroupRun]) -> None:
    run = make_run(LAYOUTS[layout](tmp_path))
    bot = _bot(run)
    assert bot.aside is None
    assert bot.set_aside([4242])
    assert bot.frozen is not None and bot.aside == bot.frozen + ".wrappers"
    assert _value(os.path.join(bot.aside, "cgroup.procs")) == "4242"
    Path(bot.aside, "cgroup.procs").write_text("")
    assert bot.remove()
    assert not [path for path in (*bot.paths, bot.aside) if os.path.exists(path)]
    assert not bot.set_aside([4242])  # removed: nothing is made again


def test_the_types_say_their_version() -> None:
    assert (V1Group("/x", frozenset({"freezer"})).version, V2Group("/x").version) == (1, 2)
    assert V1Group("/a/b", frozenset({"freezer"})).sibling("c").path == "/a/c"


def test_the_fake_hybrid_layout_splits_the_features_as_this_machine_does_if_it_is_hybrid() -> None:
    """The fake's hybrid layout is this kind of machine's: where the real hierarchies are laid out so (a v2
    hierarchy without memory, pids and cpuset controllers of its own, beside v1 ones), the real run splits alike."""
    found = own_hierarchies()
    v2 = next((hierarchy for hierarchy in found if hierarchy.version == 2), None)
    offered = set(Path(v2.own, "cgroup.controllers").read_text().split()) if v2 is not None else set()
    v1 = {controller for hierarchy in found if hierarchy.version == 1 for controller in hierarchy.controllers}
    if v2 is None or offered & {"memory", "pids", "cpuset"} or not {"memory", "pids", "cpuset"} <= v1:
        pytest.skip("this machine's cgroups are not laid out like the fake hybrid one")
    with CgroupRun.open(found) as run:
        if run.missing:
            pytest.skip(f"control groups are incomplete here: {run.missing[0]}")
        split = {feature: "unified" if Path(path).parent == Path(v2.own) else Path(path).parent.name
                 for feature, path in run.where.items()}
    assert {feature: where for feature, where in split.items() if where == "unified"} == {
        feature: where for feature, where in EXPECTED["hybrid"].items() if where == "unified"}
    assert set(split) == set(EXPECTED["hybrid"])
