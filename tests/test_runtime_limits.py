"""Runtimes see their limits (issue 25): inside the default sandbox a bot's own control groups are shown read-only
under /sys/fs/cgroup, so the JVM (run with no -X/-XX flags and no JAVA_* variables) sizes its heap from the tree's
memory cap, and a bot that grows gets an OutOfMemoryError it can catch instead of the kernel's kill. The control
shows the sandbox as it was (no groups shown): the JVM sizes itself from the machine and is killed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protocol.records import stderr_text
from protocol.rules import Rules
from referee.bots.cores import one_core
from referee.bots.launcher import BotCommand, scrubbed_env
from referee.bots.limits import ResourceLimits, TimeControl
from referee.bots.sandbox.cgroups import BotCgroup
from referee.bots.sandbox.isolation import DEFAULT
from referee.bots.session import BotClient
from referee.games.match import Series, play_series
from referee.results.record import GameRecord
from tests.sandboxes import cgroup_features, needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK (javac) here")]

CAP_MIB = 256
#: A bot that answers the first legal action, names its maximum heap in its hello, and keeps 32 MiB more of
#: touched memory at every request; on an OutOfMemoryError it lets all go, says so on stderr and plays on.
GROWER = """\
import java.io.*;
import java.util.*;

public class Grower {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        List<byte[]> kept = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.contains("\\"type\\":\\"hello\\"")) {
                long max = Runtime.getRuntime().maxMemory();
                System.out.println("{\\"type\\":\\"hello\\",\\"protocol\\":2,\\"name\\":\\"max=" + max + " cpus="
                                   + Runtime.getRuntime().availableProcessors() + "\\"}");
            } else if (line.contains("\\"type\\":\\"request\\"")) {
                try {
                    byte[] more = new byte[32 << 20];
                    Arrays.fill(more, (byte) 1);
                    kept.add(more);
                } catch (OutOfMemoryError error) {
                    kept.clear();
                    System.err.println("caught " + error);
                }
                int id = line.indexOf("\\"id\\":") + 5;
                int legal = line.indexOf("\\"legal\\":[\\"") + 10;
                System.out.println("{\\"type\\":\\"action\\",\\"id\\":" + line.substring(id, line.indexOf(',', id))
                                   + ",\\"action\\":\\"" + line.substring(legal, line.indexOf('"', legal)) + "\\"}");
            } else if (line.contains("\\"type\\":\\"shutdown\\"")) {
                break;
            }
            System.out.flush();
        }
    }
}
"""


@pytest.fixture(scope="module")
def grower(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The grower compiled into a folder of its own that every uid can read."""
    folder = tmp_path_factory.mktemp("grower")
    folder.chmod(0o755)
    (folder / "Grower.java").write_text(GROWER)
    subprocess.run(["javac", "-d", str(folder), str(folder / "Grower.java")], check=True, capture_output=True)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def play_grower(folder: Path) -> tuple[GameRecord, str]:
    """One game of the grower (no JVM flags, no JAVA_* variables) capped at CAP_MIB against a Python bot; the
    record and the grower's hello name."""
    env = scrubbed_env()
    assert not any(name.startswith(("JAVA", "JDK_", "_JAVA")) for name in env)
    limits = ResourceLimits(memory_mb=CAP_MIB)
    clock = TimeControl(move_time=5.0, startup_time=20.0)
    subject = BotClient("grower", BotCommand(["java", "-cp", ".", "Grower"], cwd=folder, env=env), limits=limits,
                        time_control=clock, isolation=DEFAULT)
    opponent = BotClient("random", BotCommand([sys.executable, "-S", str(Path(__file__).parent / "hostile" / "bot.py"),
                                               "play"]), time_control=clock)
    try:
        hello = subject.start()
        (record,) = play_series(Series(Rules(), 1, seed=7), [subject, opponent])
    finally:
        subject.stop()
        opponent.stop()
    return record, hello.name


def max_heap(name: str) -> int:
    found = re.fullmatch(r"max=(\d+) cpus=\d+", name)
    assert found is not None, name
    return int(found.group(1))


def test_the_jvm_sizes_its_heap_from_the_trees_cap_and_catches_its_own_out_of_memory(grower: Path) -> None:
    if "memory" not in cgroup_features():
        pytest.skip("no memory control group here: RLIMIT_DATA stands in, which the JVM does not read")
    with one_core():  # as a tournament's game: the JVM sees the one core
        record, name = play_grower(grower)
    assert max_heap(name) <= CAP_MIB << 20 and name.endswith(" cpus=1")
    assert record.verdicts == [], record.verdicts
    said = stderr_text(record.stderr[0])
    assert said.count("caught java.lang.OutOfMemoryError") >= 1, said


def test_control_without_its_groups_shown_the_jvm_sizes_itself_from_the_machine_and_is_killed(
        grower: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if "memory" not in cgroup_features():
        pytest.skip("no memory control group here")
    monkeypatch.setattr(BotCgroup, "shown", lambda self: ())  # the sandbox as it was before issue 25
    record, name = play_grower(grower)
    assert max_heap(name) > CAP_MIB << 20
    assert [verdict.kind for verdict in record.verdicts] == ["memory"], record.verdicts

