"""The confinement guarantee at the default level (docs/ISOLATION.md), asserted without a clock where it can be:
a paused bot's tree gains no CPU time, bots reach each other through no lock, watch, socket or shared folder,
memory and disk are capped for the whole tree, cleanup survives any folder a bot builds, bots never run as
root, and a bot's helpers run only on its game's core.

Control-group tests skip where the machine has no such feature, and fail instead with CI=true (CI has them).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest
from conftest import FaultMatrix
from proctools import eventually
from sandboxes import BWRAP, IS_ROOT, PROCESS, Start, ask, needs_bwrap, require_cgroups, root_only, soon

from protocol.records import stderr_text
from referee.bots import BotCommand, BotProcess, ResourceLimits, launched
from referee.bots.errors import BotOutOfMemory, BotTimeout
from referee.bots.launcher import scrubbed_env
from referee.bots.sandbox.cgroupfs import members
from referee.bots.sandbox.cleanup import remove_tree
from referee.bots.sandbox.isolation import DEFAULT

pytestmark = pytest.mark.usefixtures("no_leaks")
ROOT = Path(__file__).resolve().parent.parent
SHARED = "/etc/passwd"  # a file every sandbox shows, read-only: the locks and watches of the attack


def stat_cpu_ns(process: BotProcess) -> int:
    cgroup = process.launched.cgroup
    assert cgroup is not None
    return cgroup.cpu_ns()


def is_bwrap(pid: int) -> bool:
    """Whether the process is bubblewrap itself (its monitor, or the sandbox's init): the referee's wrapper."""
    return Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap"


# --- the pause ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", [pytest.param(BWRAP, id="bwrap", marks=needs_bwrap),
                                       pytest.param(PROCESS, id="process")])
def test_a_paused_fork_chain_gains_no_cpu_time(bot: Start, isolation: object,
                                               fault_matrix: FaultMatrix) -> None:
    """The pause escape: a chain of slow forks, each child forking the next and exiting, kept running under
    SIGSTOP sweeps. Frozen by its control group, its whole tree runs not one instruction."""
    require_cgroups("freeze", "cpu")
    with bot(isolation, "fork_chain") as chain:
        assert chain.read_line(soon(10.0)) == b"ready"
        assert eventually(lambda: int(chain.exchange(b"forks", 5.0)[0]) > 0, 5.0)
        for _ in range(5):
            chain.pause()  # starts the freeze; the kernel finishes it within microseconds
            cgroup = chain.launched.cgroup
            assert cgroup is not None and cgroup.wait_frozen(5.0)
            before = stat_cpu_ns(chain)
            time.sleep(0.2)  # no clock decides anything: the counter must not move at all
            assert stat_cpu_ns(chain) == before
            chain.resume()
            time.sleep(0.02)
        forks = int(chain.exchange(b"forks", 5.0)[0])
        assert forks > 0 and stat_cpu_ns(chain) > before  # it did run between the pauses
    fault_matrix.record("think on others' time with a chain of slow forks", "none: blocked",
                        f"the bot's control group is frozen while paused: 0 ns of CPU in 5 pauses ({forks} forks "
                        "made while it ran)")


@needs_bwrap
def test_a_pause_freezes_the_bots_own_processes_and_sets_bwraps_two_aside(bot: Start) -> None:
    """bwrap's monitor and its sandbox's init fork nothing once the bot runs, so the first pause after the bot is
    seen in its group moves them to a group of their own: a pause then stops, and a resume wakes, only the bot's
    processes. What the bot forks stays with it in the frozen group, and both groups go with the bot."""
    require_cgroups("freeze", "cpu")
    with bot(BWRAP, "fork_chain") as chain:
        assert chain.read_line(soon(10.0)) == b"ready"
        cgroup = chain.launched.cgroup
        assert cgroup is not None and cgroup.frozen is not None and cgroup.aside is None
        assert [is_bwrap(pid) for pid in members(cgroup.frozen)].count(True) == 2  # before the first pause
        chain.pause()
        assert cgroup.wait_frozen(5.0) and cgroup.aside is not None
        assert [is_bwrap(pid) for pid in members(cgroup.aside)] == [True, True]
        frozen = members(cgroup.frozen)
        assert frozen and not any(is_bwrap(pid) for pid in frozen)
        before = stat_cpu_ns(chain)
        time.sleep(0.2)
        assert stat_cpu_ns(chain) == before  # the bot's tree is still frozen whole
        chain.resume()
        assert eventually(lambda: int(chain.exchange(b"forks", 5.0)[0]) > 0, 5.0)
        assert not any(is_bwrap(pid) for pid in members(cgroup.frozen))  # its forks joined it there
        groups = (cgroup.frozen, cgroup.aside)
    assert not any(os.path.exists(group) for group in groups)


@pytest.mark.parametrize("isolation", [pytest.param(BWRAP, id="bwrap", marks=needs_bwrap),
                                       pytest.param(PROCESS, id="process")])
def test_a_tree_that_did_not_freeze_is_judged_when_it_is_next_resumed(bot: Start, isolation: object,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A pause starts the freeze and returns; the next resume checks that the kernel reported the tree frozen
    (a bot that ran on others' time is not let on), so a tree that never freezes is a timeout then."""
    require_cgroups("freeze")
    with bot(isolation, "echo") as p:
        cgroup = p.launched.cgroup
        assert cgroup is not None
        p.pause()
        assert cgroup.wait_frozen(5.0)
        p.resume()  # frozen, as the kernel said: resumed
        assert p.exchange(b"hello", 5.0)[0] == b"hello"
        p.pause()
        monkeypatch.setattr(launched, "FREEZE_TIMEOUT", 0.05)
        monkeypatch.setattr(type(cgroup), "wait_frozen", lambda self, timeout: False)  # as if it never froze
        with pytest.raises(BotTimeout, match=r"^bot could not be paused: not frozen within 0.05 s$"):
            p.resume()


# --- channels between bots ----------------------------------------------------------------------------


@needs_bwrap
def test_locks_and_watches_on_a_shared_file_fail_with_an_errno(bot: Start, fault_matrix: FaultMatrix) -> None:
    with bot(DEFAULT, "probe") as writer, bot(DEFAULT, "probe") as reader:
        assert ask(writer, "lock", SHARED) == "EPERM"
        assert ask(reader, "locked", SHARED) == "EPERM"
        assert ask(writer, "flock", SHARED) == "EPERM"
        assert ask(writer, "ofd_lock", SHARED) == "EPERM"
        assert ask(reader, "inotify", "/etc") == "EPERM"
        assert ask(writer, "ids") is not None  # still alive: an errno, not a kill
    fault_matrix.record("signal a hand through locks or inotify on a shared read-only file", "none: blocked",
                        "seccomp: flock, the fcntl lock commands, dnotify and inotify fail with EPERM")


def test_without_the_filter_the_lock_channel_is_real(bot: Start) -> None:
    """The control: at the process level (no seccomp) one bot's lock is seen by another, so the test above
    would catch a filter that lets locks through."""
    with bot(PROCESS, "probe") as writer, bot(PROCESS, "probe") as reader:
        assert ask(writer, "lock", SHARED) == "ok"
        assert ask(reader, "locked", SHARED) == "locked"


@needs_bwrap
def test_bots_share_no_folder_socket_or_port(bot: Start, fault_matrix: FaultMatrix) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with bot(DEFAULT, "probe") as first, bot(DEFAULT, "probe") as second:
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            assert ask(first, "write", f"{folder}/hand") == "ok"
            assert ask(second, "read", f"{folder}/hand") == "ENOENT"
        assert ask(first, "bind_abstract", "durak-hand") == "ok"
        assert ask(second, "connect_abstract", "durak-hand") == "ECONNREFUSED"
        assert ask(first, "udp_bind", port) == "ok"
        assert ask(second, "udp_send", port) in {"ok", "ENETUNREACH"}
        assert ask(first, "udp_recv") == "EAGAIN"
    fault_matrix.record("pass a hand through /tmp, /dev/shm, an abstract socket or loopback UDP",
                        "none: blocked", "each bot has its own tmpfs folders, IPC and network namespaces")


# --- memory and disk --------------------------------------------------------------------------------------


@pytest.mark.parametrize("isolation", [pytest.param(BWRAP, id="bwrap", marks=needs_bwrap),
                                       pytest.param(PROCESS, id="process")])
def test_a_child_that_overruns_memory_is_the_bots_memory_verdict(bot: Start, isolation: object,
                                                                 fault_matrix: FaultMatrix) -> None:
    require_cgroups("memory")
    start = time.monotonic()
    with bot(isolation, "memory_child", limits=ResourceLimits(memory_mb=64)) as p:
        assert p.read_line(soon()) == b"started"
        assert eventually(lambda: p.launched.cgroup is not None and p.launched.cgroup.oom_kills() > 0, 10.0)
        with pytest.raises(BotOutOfMemory, match="exceeded its memory limit"):
            p.pause()  # where a game notices it between two turns
    fault_matrix.record("a child that allocates past the bot's memory", "memory",
                        "the tree's control group caps memory; the kernel's OOM kill is the bot's verdict",
                        time.monotonic() - start)


@needs_bwrap
def test_a_disk_filling_bot_stops_at_its_tmpfs_cap(bot: Start, fault_matrix: FaultMatrix) -> None:
    with bot(BWRAP, "fill_disk", "/tmp", limits=ResourceLimits(file_size_mb=8, memory_mb=256)) as p:
        written, failure = p.read_line(soon(10.0)).split()
        assert failure == b"ENOSPC" and 0 < int(written) <= 8  # files under RLIMIT_FSIZE, in a capped folder
        assert p.exchange(b"still here", 5.0)[0] == b"still here"
    fault_matrix.record("fill the disk", "none: blocked",
                        f"its /tmp is a tmpfs of file_size_mb, charged to its memory: ENOSPC after {int(written)} "
                        "MiB, nothing written to the referee's disk")


# --- cleanup --------------------------------------------------------------------------------------------


def test_a_5000_deep_tree_is_removed_and_the_bot_stopped_cleanly(bot: Start, fault_matrix: FaultMatrix) -> None:
    start = time.monotonic()
    with bot(PROCESS, "deep_tree", "5000") as p:
        assert p.read_line(soon(20.0)) == b"built"
        host = p.launched.tmpdir
        assert host is not None
    assert host is not None and not os.path.exists(host)
    fault_matrix.record("a 5,000-deep folder chain in its TMPDIR", "none",
                        "removed iteratively, folder by folder through fds, bounded in entries and time",
                        time.monotonic() - start)


def test_cleanup_never_raises_and_gives_up_within_its_bounds(tmp_path: Path) -> None:
    folder = tmp_path / "wide"
    folder.mkdir()
    for index in range(50):
        (folder / str(index)).write_text("x")
    os.symlink("/etc", folder / "link")  # removed, never followed
    assert remove_tree(str(folder), max_entries=10) is False  # bounded: gives up, logs, raises nothing
    assert Path("/etc/passwd").exists()
    assert remove_tree(str(folder)) is True and not folder.exists()
    assert remove_tree(str(folder)) is True  # already gone


# --- never root ------------------------------------------------------------------------------------------


@root_only
@needs_bwrap
def test_the_sample_bots_never_run_as_root(tmp_path: Path) -> None:
    """Under the default level every process of each sample bot runs with a uid that is not 0, with nothing
    set in the sample config, even where the interpreter lives under a folder only root may enter."""
    bots = ROOT / "sample_bots"
    commands = {"random": [sys.executable, "random_bot.py", "1"], "heuristic": [sys.executable, "heuristic_bot.py"]}
    folders = {"random": bots / "python", "heuristic": bots / "python"}
    if os.path.exists("/usr/bin/node") or any(os.access(f"{p}/node", os.X_OK) for p in os.defpath.split(":")):
        commands["js"], folders["js"] = ["node", "bot.js"], bots / "js"
    from referee.bots.session import BotClient

    for name, argv in commands.items():
        env = scrubbed_env({"HOME": str(folders[name])})
        client = BotClient(name, BotCommand(argv, cwd=folders[name], env=env), isolation=DEFAULT)
        try:
            client.start()
            process = client._process
            assert process is not None and process.launched.cgroup is not None
            uids = {int(Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split()[0])
                    for pid in process.launched.cgroup.pids() if not is_bwrap(pid)}
            assert uids and 0 not in uids, (name, uids)
        finally:
            client.stop()


# --- cores ---------------------------------------------------------------------------------------------------


def test_a_helper_spinning_during_its_bots_turn_runs_on_that_games_core_only(bot: Start,
                                                                             fault_matrix: FaultMatrix) -> None:
    require_cgroups("cpuset")
    cores = sorted(os.sched_getaffinity(0))
    core = cores[-1]
    os.sched_setaffinity(0, {core})  # as a tournament worker does: its bots get its core as their cpuset
    try:
        with bot(DEFAULT if IS_ROOT else PROCESS, "probe") as p:
            assert ask(p, "cpus") == [core]  # asked for every core, got its own
            spinner = ask(p, "spin")
            assert isinstance(spinner, int)
            time.sleep(0.1)
            cgroup = p.launched.cgroup
            assert cgroup is not None
            for pid in cgroup.pids():
                status = Path(f"/proc/{pid}/status").read_text()
                allowed = status.split("Cpus_allowed_list:")[1].split()[0]
                assert allowed == str(core), (pid, allowed)
                stat = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()
                assert int(stat[36]) == core  # field 39, "processor": where it last ran
    finally:
        os.sched_setaffinity(0, cores)
    fault_matrix.record("helpers that spin to slow the bots of another game", "none: blocked",
                        "each game's worker and its bots are held to one core by a cpuset")



# --- a tournament against vandals --------------------------------------------------------------------------


@pytest.mark.parametrize(("sandbox", "vandalism"), [
    pytest.param("bwrap", "fill=/tmp", id="bwrap-fill-tmp", marks=needs_bwrap),
    pytest.param("bwrap", "fill=/dev/shm deep=5000", id="bwrap-fill-shm-deep", marks=needs_bwrap),
    pytest.param("process", "deep=5000", id="process-deep"),
])
def test_a_tournament_against_vandals_finishes_with_every_result(tmp_path: Path, open_tmp: Path, sandbox: str,
                                                                vandalism: str, fault_matrix: FaultMatrix,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot that fills its writable folders to the cap, or builds a 5,000-deep folder chain, and otherwise
    plays legally: every game is played and stored, nothing of it is left on the machine, the run exits 0."""
    from clirun import run

    from referee.results.store import Store

    hostile = Path(__file__).parent / "hostile"
    config = tmp_path / "t.toml"
    config.write_text(f'name = "vandals"\ndeals = 2\nsandbox = "{sandbox}"\n[limits]\nfile_size_mb = 8\n'
                      f'[[bots]]\nname = "vandal"\ncommand = "{{python}} bot.py play {vandalism}"\ndir = "{hostile}"\n'
                      f'[[bots]]\nname = "player"\ncommand = "{{python}} bot.py play"\ndir = "{hostile}"\n')
    monkeypatch.setenv("TMPDIR", str(open_tmp))  # the workers' temp folder, where a bot's TMPDIR would be left
    start = time.monotonic()
    run("tournament", str(config), "--db", str(tmp_path / "t.db"), "--jobs", "2")
    with Store(tmp_path / "t.db", create=False) as store:
        records = list(store.records())
        stderr = " ".join(" ".join(map(stderr_text, store.replay(record.game).stderr)) for record in records)
    assert len(records) == 4 and not any(record.verdicts for record in records)
    if "fill" in vandalism:
        assert "MiB then No space left on device" in stderr
    if "deep" in vandalism:
        assert "deep 5000 folders" in stderr
    assert list(open_tmp.iterdir()) == []  # nothing left behind
    fault_matrix.record(f"{vandalism} in a tournament ({sandbox})", "none: contained",
                        "the tournament finishes with every result; its folders are capped tmpfs (bwrap) or removed "
                        "iteratively (process)", time.monotonic() - start)
