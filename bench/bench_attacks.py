"""The confinement attacks of issue 8, each acted out against the referee this script is run from, at its
default isolation level; prints one line per attack with what the bot got away with.

Run by hand from a checkout (to compare, run the same file against another checkout of the referee)::

    python bench/bench_attacks.py                 # the referee of this checkout
    python bench/bench_attacks.py --referee DIR   # another checkout's referee, with this script's bots

The bots are tests/procbots of this checkout, copied to a folder every uid can read. Run as root to see the
uid attacks; run with a Python that lives under /root (pyenv) to see the root fallback.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BOTS = HERE / "tests" / "procbots"


def measured_group() -> Path | None:
    """A cgroup v2 group for this script and all it starts (the referee's bots included, however nested), to
    read their CPU time while a bot is paused: the same meter for every referee compared."""
    for root in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        try:
            own = next(line[3:] for line in Path("/proc/self/cgroup").read_text().splitlines() if line[:3] == "0::")
            group = Path(root + own.rstrip("/"), f"bench-attacks-{os.getpid()}")
            group.mkdir()
            (group / "cgroup.procs").write_text("0")
            return group
        except (OSError, StopIteration):
            continue
    return None


MEASURED: Path | None = None


def group_cpu_us() -> int:
    if MEASURED is None:
        return 0
    for line in (MEASURED / "cpu.stat").read_text().splitlines():
        if line.startswith("usage_usec"):
            return int(line.split()[1])
    return 0


def main() -> None:
    global MEASURED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--referee", type=Path, default=HERE, help="the checkout whose referee is attacked")
    args = parser.parse_args()
    sys.path.insert(0, str(args.referee.resolve()))
    MEASURED = measured_group()
    atexit.register(leave_measured_group)
    from referee.bots import BotCommand, BotError, BotProcess, ResourceLimits
    from referee.bots.sandbox.isolation import DEFAULT

    folder = Path(tempfile.mkdtemp(prefix="durak-attack-bots-"))
    shutil.copytree(BOTS, folder, dirs_exist_ok=True)
    folder.chmod(0o755)
    started: list[BotProcess] = []

    def start(name: str, *argv: str, limits: ResourceLimits | None = None) -> BotProcess:
        process = BotProcess(BotCommand([sys.executable, "-S", f"{name}.py", *argv], cwd=folder), limits,
                             isolation=DEFAULT)
        started.append(process)
        return process

    def ask(bot: BotProcess, op: str, arg: object = None) -> object:
        return json.loads(bot.exchange(json.dumps({"op": op, "arg": arg}).encode(), 5.0)[0])

    def attack(title: str, act: object) -> None:
        try:
            outcome = act()  # type: ignore[operator]
        except (BotError, OSError, RecursionError) as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        print(f"{title}: {outcome}", flush=True)
        for process in started:
            try:
                process.close()
            except Exception as exc:  # the kill switch raised here before: say so, go on
                print(f"    close() raised {type(exc).__name__}: {str(exc)[:80]}", flush=True)
        started.clear()

    def pause_escape() -> str:
        chain = start("fork_chain", os.environ.get("FORK_CHAIN_MIB", "256"))
        chain.read_line(time.monotonic() + 10)
        time.sleep(0.2)
        during, cpu = 0, 0
        for _ in range(5):
            before = int(chain.exchange(b"forks", 5.0)[0])
            chain.pause()
            used = group_cpu_us()
            time.sleep(0.2)
            cpu += group_cpu_us() - used  # the whole tree's (and the idle referee's) CPU while paused
            chain.resume()
            during += int(chain.exchange(b"forks", 5.0)[0]) - before  # forked while paused (and this reply)
        shown = f"{cpu / 1000:.1f} ms of CPU while paused" if MEASURED is not None else "no CPU counter here"
        return f"{shown}; {during} forks in 5 pauses of 0.2 s (counted from just before each pause to its reply)"

    def channels() -> str:
        writer, reader = start("probe"), start("probe")
        seen = {"lock": ask(writer, "lock", "/etc/passwd"), "F_GETLK": ask(reader, "locked", "/etc/passwd"),
                "inotify": ask(reader, "inotify", "/etc"), "shm write": ask(writer, "write", "/dev/shm/durak-hand")}
        seen["shm read by other"] = ask(reader, "read", "/dev/shm/durak-hand")
        seen["abstract"] = (ask(writer, "bind_abstract", "durak-hand"), ask(reader, "connect_abstract", "durak-hand"))
        with __import__("contextlib").suppress(OSError):
            os.unlink("/dev/shm/durak-hand")
        return json.dumps(seen)

    def root() -> str:
        bot = start("probe")
        return f"bot uid {ask(bot, 'ids')[0]} (interpreter {sys.executable})"  # type: ignore[index]

    def kill_switch() -> str:
        bot = start("deep_tree", "5000")
        bot.read_line(time.monotonic() + 20)
        tmpdir = bot.launched.tmpdir
        bot.close()
        left = tmpdir is not None and os.path.exists(tmpdir)
        if tmpdir is not None and left:
            shutil.rmtree(tmpdir, ignore_errors=True)
        return f"closed; TMPDIR left behind: {left}"

    def memory() -> str:
        bot = start("memory_child", limits=ResourceLimits(memory_mb=256))
        bot.read_line(time.monotonic() + 5)
        time.sleep(2.0)
        try:
            bot.pause()
            bot.resume()
        except BotError as exc:
            return f"verdict {exc.verdict}: {exc}"
        return "no verdict: a child may allocate beyond the bot's limit (RLIMIT_DATA is per process)"

    def disk() -> str:
        bot = start("fill_disk", "/tmp", "200", limits=ResourceLimits(file_size_mb=64, memory_mb=512))
        written, failure = bot.read_line(time.monotonic() + 60).split()
        left = sorted(Path("/tmp").glob("fill*"))  # the bot's writes, if /tmp was the machine's
        for file in left:
            file.unlink()
        return (f"{int(written)} MiB written in 1 MiB files (cap 200), then {failure.decode()}; "
                f"{len(left)} files were on the machine's /tmp")

    def cores() -> str:
        os.sched_setaffinity(0, {0})
        try:
            bot = start("probe")
            return f"a bot pinned to core 0 asked for all cores and may run on {ask(bot, 'cpus')}"
        finally:
            os.sched_setaffinity(0, range(os.cpu_count() or 1))

    print(f"referee {args.referee}, default level {DEFAULT.level!r}, python {sys.executable}, uid {os.geteuid()}")
    for title, act in [("1 pause escape", pause_escape), ("2 covert channels", channels), ("3 root", root),
                       ("4 kill switch", kill_switch), ("5 memory of a child", memory), ("5 disk fill", disk),
                       ("5 other cores", cores)]:
        attack(title, act)
    shutil.rmtree(folder, ignore_errors=True)


def leave_measured_group() -> None:
    """Back to where this script came from, then the group can go; registered before the referee's own exit
    handler, so that it runs after it (the referee's groups are inside this one)."""
    if MEASURED is not None:
        (MEASURED.parent / "cgroup.procs").write_text("0")
        MEASURED.rmdir()


if __name__ == "__main__":
    main()
