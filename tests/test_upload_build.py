"""The daemon builds an uploaded bot (referee/league/build.py): real builds work, and each attack a build can make
gets its verdict, with a control showing the attack real where the defence can be turned off."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import socket
import stat
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from proctools import eventually
from sandboxes import leases_held_here, needs_bwrap, processes_of, require_cgroups

from referee.bots.errors import LauncherError
from referee.bots.sandbox.isolation import Isolation
from referee.league import build as build_module
from referee.league.build import BuildLimits, BuildOutcome, BuildRefused, build_bot

pytestmark = needs_bwrap

#: Small limits: the file's builds take seconds, not minutes.
LIMITS = BuildLimits(wall_seconds=5, memory_mb=192, scratch_mb=64, max_processes=32, output_bytes=4096, tar_mb=4)
BOT_C = '#include <stdio.h>\nint main(void) { puts("{\\"hello\\": 1}"); return 0; }\n'
#: The build's first line of output: its uid, so that a test can look for its processes afterwards.
SAY_UID = "id -u; "


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Path]:
    """A bot's source folder; the test checks afterwards that no build wrote to it."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "bot.c").write_text(BOT_C)
    (folder / "bot.py").write_text("print('hello')\n")
    before = _digest(folder)
    yield folder
    assert _digest(folder) == before, "the build changed its source folder"


@pytest.fixture(autouse=True)
def nothing_left(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """After every build: no uid lease held, no host folder of a build left in the temp folder. The test's builds
    make their folders in a temp folder of its own: another xdist worker's builds (the upload and web tests) come
    and go in the shared one meanwhile."""
    own = Path(tempfile.mkdtemp(prefix="durak-test-build-tmp-"))
    own.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    yield
    assert leases_held_here() == set()
    left = list(own.glob("durak-build-*"))
    shutil.rmtree(own, ignore_errors=True)
    assert left == []


def _digest(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


def build(source: Path, script: str, tmp_path: Path, **changes: float) -> tuple[BuildOutcome, Path]:
    """Build ``source`` with the shell ``script`` under :data:`LIMITS` with ``changes``; the outcome and where its
    tar would be."""
    output_tar = tmp_path / "built.tar"
    output_tar.unlink(missing_ok=True)
    limits = dataclasses.replace(LIMITS, **changes)
    return build_bot(source, ["sh", "-c", script], Isolation(), limits, output_tar=output_tar), output_tar


def build_uid(outcome: BuildOutcome) -> int:
    uid = int(outcome.output.split("\n", 1)[0])
    assert uid != 0, "the build ran as root"
    return uid


def assert_all_gone(outcome: BuildOutcome) -> None:
    uid = build_uid(outcome)
    assert eventually(lambda: processes_of(uid) == [], timeout=2.0), f"processes of build uid {uid} survived"


def members(output_tar: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(output_tar) as tar:
        return {os.path.normpath(info.name): info for info in tar}


# --- real builds --------------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_a_c_bot_builds_and_its_tar_holds_the_program_and_the_source(source: Path, tmp_path: Path) -> None:
    outcome, output_tar = build(source, "cc -O2 -o bot bot.c", tmp_path)
    assert outcome.verdict == "ok" and outcome.ok and outcome.exit_code == 0, outcome.output
    assert outcome.summary().startswith("build ok in ")
    files = members(output_tar)
    assert files["bot"].mode & stat.S_IXUSR and files["bot"].isfile()
    assert "bot.c" in files and "bot.py" in files
    program = tmp_path / "bot"
    with tarfile.open(output_tar) as tar:  # the program built is the program run
        program.write_bytes(tar.extractfile(files["bot"]).read())  # type: ignore[union-attr]
    program.chmod(0o700)
    ran = os.popen(str(program)).read()
    assert ran == '{"hello": 1}\n'


def test_a_python_build_compiles_its_modules(source: Path, tmp_path: Path) -> None:
    outcome, output_tar = build(source, "python3 -m compileall -q . && echo built > STAMP", tmp_path)
    assert outcome.ok, outcome.output
    names = set(members(output_tar))
    assert "STAMP" in names and any(name.startswith("__pycache__/bot.") for name in names)


@pytest.mark.skipif(shutil.which("go") is None, reason="no Go toolchain")
def test_a_go_build_with_vendored_deps_runs_under_the_build_filter(tmp_path: Path) -> None:
    """The bots' whole filter fails this build at once ("RLock /build/go.mod: operation not permitted"): go takes
    an flock on go.mod. The build filter leaves locks open (referee/bots/sandbox/seccomp.py BUILD_POLICY)."""
    source = tmp_path / "go-src"
    dep = source / "vendor" / "example.com" / "dep"
    dep.mkdir(parents=True)
    (source / "go.mod").write_text("module example.com/bot\n\ngo 1.19\n\nrequire example.com/dep v1.0.0\n")
    (source / "main.go").write_text('package main\n\nimport "example.com/dep"\n\nfunc main() { println(dep.Hi()) }\n')
    (dep / "dep.go").write_text('package dep\n\nfunc Hi() string { return "hi" }\n')
    (source / "vendor" / "modules.txt").write_text("# example.com/dep v1.0.0\n## explicit\nexample.com/dep\n")
    outcome, output_tar = build(source, "go build -o bot .", tmp_path, wall_seconds=60, tar_mb=32)
    assert outcome.ok, outcome.output
    assert members(output_tar)["bot"].mode & stat.S_IXUSR


def test_the_seccomp_filter_still_shuts_namespaces_to_a_build(source: Path, tmp_path: Path) -> None:
    outcome, output_tar = build(source, "unshare --user --map-root-user true", tmp_path)
    assert outcome.verdict == "failed" and outcome.exit_code != 0
    assert "Operation not permitted" in outcome.output
    assert not output_tar.exists()


def test_a_failed_build_says_its_exit_code(source: Path, tmp_path: Path) -> None:
    outcome, output_tar = build(source, "echo to stdout; echo to stderr >&2; exit 2", tmp_path)
    assert (outcome.verdict, outcome.exit_code, outcome.ok) == ("failed", 2, False)
    assert outcome.output == "to stdout\nto stderr\n"  # both streams, through one pipe
    assert outcome.summary().startswith("build failed: exit 2 after ")
    assert not output_tar.exists()


# --- attacks ------------------------------------------------------------------------------------------------


def test_a_fork_bomb_is_stopped_by_the_process_cap_and_leaves_nothing(source: Path, tmp_path: Path) -> None:
    require_cgroups("pids")
    started = time.monotonic()
    outcome, _ = build(source, SAY_UID + "while :; do sleep 30 & done", tmp_path)
    assert outcome.verdict == "processes", outcome.summary()
    assert outcome.summary().startswith("build stopped: over its limit of 32 processes after ")
    assert time.monotonic() - started < LIMITS.wall_seconds + 2
    assert_all_gone(outcome)


def test_control_without_the_cap_the_same_forks_all_start(source: Path, tmp_path: Path) -> None:
    script = SAY_UID + "i=0; while [ $i -lt 100 ]; do sleep 1 & i=$((i + 1)); done; wait; echo all 100"
    assert build(source, script, tmp_path)[0].verdict == "processes"
    outcome, _ = build(source, script, tmp_path, max_processes=256)
    assert outcome.ok and "all 100" in outcome.output, outcome.summary()
    assert_all_gone(outcome)


@pytest.mark.parametrize("target", ["big", "/tmp/big"])
def test_a_build_that_fills_its_disk_gets_the_disk_verdict(source: Path, tmp_path: Path, target: str) -> None:
    outcome, output_tar = build(source, f"dd if=/dev/zero of={target} bs=1M 2>&1", tmp_path)
    assert outcome.verdict == "disk", (outcome.summary(), outcome.output)
    assert outcome.summary().startswith("build failed: its 64 MiB scratch folder is full after ")
    assert not output_tar.exists()


def test_a_source_larger_than_the_scratch_folder_is_the_disk_verdict(source: Path, tmp_path: Path) -> None:
    (tmp_path / "src" / "data.bin").write_bytes(os.urandom(3 << 20))
    try:
        outcome, _ = build(source, "echo never", tmp_path, scratch_mb=2)
    finally:
        (tmp_path / "src" / "data.bin").unlink()
    assert outcome.verdict == "disk" and "never" not in outcome.output, outcome.output


def test_a_build_that_sleeps_past_its_limit_is_stopped_in_time(source: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    outcome, output_tar = build(source, SAY_UID + "trap '' TERM INT HUP; sleep 60 & sleep 60", tmp_path,
                                wall_seconds=2)
    took = time.monotonic() - started
    assert outcome.verdict == "timeout" and outcome.summary() == "build stopped: over its 2 s limit"
    assert 2 <= took < 4, took
    assert not output_tar.exists()
    assert_all_gone(outcome)


def test_a_build_that_eats_memory_past_its_cap_gets_the_memory_verdict(source: Path, tmp_path: Path) -> None:
    require_cgroups("memory")
    script = SAY_UID + "python3 -c 'x = b\"m\" * (256 << 20); print(\"got\", len(x))'"
    outcome, _ = build(source, script, tmp_path)
    assert outcome.verdict == "memory", (outcome.summary(), outcome.output)
    assert outcome.summary().startswith("build stopped: over its 192 MiB memory limit after ")
    assert_all_gone(outcome)
    control, _ = build(source, script, tmp_path, memory_mb=512)
    assert control.ok and "got 268435456" in control.output


def test_memory_is_capped_for_the_whole_tree_not_per_process(source: Path, tmp_path: Path) -> None:
    """Six children of 48 MiB each: none is large, together they are over the 192 MiB cap. The build ignores its
    children's fate and exits 0: a process killed at the cap is the memory verdict all the same."""
    script = SAY_UID + """python3 - <<'EOF'
import os, time
for _ in range(6):
    if os.fork() == 0:
        x = b"m" * (48 << 20)
        time.sleep(1)
        os._exit(0)
for _ in range(6):
    os.wait()
EOF"""
    outcome, _ = build(source, script, tmp_path)
    assert outcome.verdict == "memory", (outcome.summary(), outcome.output)
    assert_all_gone(outcome)


def test_children_left_running_by_a_build_are_killed_before_its_files_are_packed(source: Path,
                                                                                 tmp_path: Path) -> None:
    """They hold the output pipe open: unless killed, the build would run into its wall-time limit."""
    outcome, output_tar = build(source, SAY_UID + "(trap '' TERM; sleep 30 >>late.txt) & echo started", tmp_path)
    assert outcome.ok and outcome.seconds < 2, outcome.summary()
    assert "started" in outcome.output and "late.txt" in members(output_tar)
    assert_all_gone(outcome)


@contextlib.contextmanager
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.5)
        yield server


def connected(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except TimeoutError:
        return False
    return True


@pytest.mark.parametrize("trusted_level", ["process", "none"])
def test_a_build_cannot_reach_the_network(source: Path, tmp_path: Path, trusted_level: str) -> None:
    with listener() as server:
        port = server.getsockname()[1]
        script = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 1); print(\"in\")'"
        outcome, _ = build(source, script, tmp_path)
        assert outcome.verdict == "failed" and "in\n" not in outcome.output
        assert "ConnectionRefusedError" in outcome.output or "unreachable" in outcome.output
        assert not connected(server)
        # Control: the same build at a level with the network (allowed for trusted code only) gets in.
        control = build_bot(source, ["sh", "-c", script], Isolation(trusted_level), LIMITS,  # type: ignore[arg-type]
                            output_tar=tmp_path / "control.tar", trusted=True)
        assert control.ok and control.output == "in\n", control.output
        assert connected(server)


@pytest.mark.parametrize("level", ["process", "none"])
def test_a_level_without_a_network_namespace_is_refused_unless_trusted(source: Path, tmp_path: Path,
                                                                        level: str) -> None:
    with pytest.raises(BuildRefused) as refused:
        build_bot(source, ["true"], Isolation(level), LIMITS, output_tar=tmp_path / "out.tar")  # type: ignore[arg-type]
    assert "\n" not in str(refused.value) and '"bwrap"' in str(refused.value)
    assert not (tmp_path / "out.tar").exists()


def test_writes_outside_the_scratch_folder_reach_nothing_of_the_host(source: Path, tmp_path: Path) -> None:
    token = f"durak-build-test-{os.getpid()}-{time.monotonic_ns()}"
    script = (f"echo x > {source}/pwned; echo x > /tmp/{token}; echo x > /var/tmp/{token}; echo x > /{token}; "
              f"echo x > /usr/{token}; echo x > $HOME/{token}; ls {source}; exit 0")
    outcome, output_tar = build(source, script, tmp_path)
    assert outcome.ok, outcome.output
    for host in (Path("/tmp"), Path("/var/tmp"), Path("/"), Path("/usr")):
        assert not (host / token).exists()
    assert not (source / "pwned").exists()  # and the fixture checks the whole source folder
    assert token not in members(output_tar) and "pwned" not in members(output_tar)


def test_an_output_flood_is_capped_and_the_build_still_judged(source: Path, tmp_path: Path) -> None:
    outcome, _ = build(source, "head -c 5000000 /dev/zero | tr '\\0' x; echo; exit 3", tmp_path)
    assert (outcome.verdict, outcome.exit_code) == ("failed", 3)
    kept, _, note = outcome.output.partition("\n[")
    assert kept == "x" * LIMITS.output_bytes
    assert note == f"{5000001 - LIMITS.output_bytes} more bytes of output dropped]\n"


def test_a_tar_over_its_cap_gets_the_output_verdict(source: Path, tmp_path: Path) -> None:
    outcome, output_tar = build(source, "head -c 6000000 /dev/urandom > blob", tmp_path)
    assert outcome.verdict == "output", outcome.summary()
    assert outcome.summary().startswith("build refused: its files are over the 4 MiB cap after ")
    assert not output_tar.exists()
    control, output_tar = build(source, "head -c 3000000 /dev/urandom > blob", tmp_path)
    assert control.ok and members(output_tar)["blob"].size == 3000000


def test_hostile_output_comes_back_as_text_never_interpreted(source: Path, tmp_path: Path) -> None:
    outcome, _ = build(source, "printf 'a\\033[2Jb\\000c\\r\\n\\377\\033]0;title\\007'; exit 1", tmp_path)
    assert outcome.output == "a\x1b[2Jb\x00c\r\n\ufffd\x1b]0;title\x07"
    assert outcome.summary() == f"build failed: exit 1 after {outcome.seconds:.1f} s"


def test_a_sandbox_that_cannot_start_is_its_own_verdict(source: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_uid(plan: object) -> object:
        raise LauncherError("every bot uid is in use\nsecond line")

    monkeypatch.setattr(build_module, "start", no_uid)
    outcome, output_tar = build(source, "true", tmp_path)
    assert (outcome.verdict, outcome.reason) == ("sandbox", "every bot uid is in use")
    assert outcome.summary() == "build could not run in its sandbox: every bot uid is in use"
    assert not output_tar.exists()


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="scratch_mb must be positive"):
        BuildLimits(scratch_mb=0)
