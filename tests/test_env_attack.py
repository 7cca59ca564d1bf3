"""The bot's environment never reaches the wrappers that run as root before it: an ``LD_PRELOAD`` attack.

A tiny shared library logs, from its constructor, the uid and the name (``/proc/self/comm``) of every process
that loads it. The control gives it to the wrapper chain as the launcher did before (the wrappers' environment
carrying the bot's setting) and sees it run as root in prlimit, setpriv and bwrap. With the defence on, the
setting is refused wherever a bot's env is given, and with that refusal switched off the library still loads
only in the bot's own program, under the bot's uid.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clirun import invoke
from sandboxes import BWRAP, IS_ROOT, PROCESS, needs_bwrap

import referee.bots.launcher as launcher
import referee.bots.plan as plan
from referee.bots import BotCommand, BotLaunchError, BotProcess
from referee.bots.sandbox.isolation import PLAIN, Isolation
from referee.tournament.config import ConfigError, load_config

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="the attack library is built with gcc")

#: The processes that run before the bot, as root when the referee is: none of them may load the library.
WRAPPERS = {"sh", "prlimit", "setpriv", "bwrap", "unshare", "env"}
EVIL_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void evil(void) {
    char comm[32] = {0};
    int fd = open("/proc/self/comm", O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, comm, sizeof comm - 1);
        if (n > 0) comm[n - 1] = 0;
        close(fd);
    }
    FILE *log = fopen(LOG, "a");
    if (log) {
        fprintf(log, "%u %s\n", (unsigned) getuid(), comm);
        fclose(log);
    }
}
"""
LEVELS = [pytest.param(PLAIN, id="none"), pytest.param(PROCESS, id="process"),
          pytest.param(Isolation("bwrap", writable_dir=True), id="bwrap", marks=needs_bwrap)]


class Attack:
    """The library and its log, in a folder every uid can read (the bot's folder, shown in its sandbox)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.log = folder / "loaded.log"
        self.library = folder / "evil.so"
        source = folder / "evil.c"
        source.write_text(EVIL_C)
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", f'-DLOG="{self.log}"', "-o", str(self.library),
                        str(source)], check=True)

    def loaded_by(self) -> list[tuple[int, str]]:
        """(uid, process name) of each process that loaded the library since the last call."""
        if not self.log.exists():
            return []
        rows = [line.split(" ", 1) for line in self.log.read_text().splitlines()]
        self.log.write_text("")
        return [(int(uid), name) for uid, name in rows]

    def run_cat(self, isolation: Isolation, env: dict[str, str] | None = None) -> None:
        """Start ``cat`` as a bot in the attack's folder, echo one line through it, stop it."""
        command = BotCommand(["cat"], cwd=self.folder, env={"PATH": "/usr/bin:/bin", **(env or {})})
        with BotProcess(command, isolation=isolation) as bot:
            bot.write_line(b"hello", time.monotonic() + 10)
            assert bot.read_line(time.monotonic() + 10) == b"hello"


@pytest.fixture(scope="module")
def attack() -> Iterator[Attack]:
    folder = Path(tempfile.mkdtemp(prefix="durak-env-attack-"))
    folder.chmod(0o755)  # bots under root run as their own uid: they must reach the library
    try:
        made = Attack(folder)
        made.log.touch()
        made.log.chmod(0o666)  # written by every process that loads the library, whatever its uid
        yield made
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("isolation", LEVELS)
def test_control_a_bot_env_given_to_the_wrappers_runs_its_library_in_them(
        attack: Attack, isolation: Isolation, monkeypatch: pytest.MonkeyPatch) -> None:
    """The defence off: the wrappers' environment carries the bot's LD_PRELOAD, as the launcher's once did."""
    monkeypatch.setattr(launcher, "WRAPPER_ENV", {**launcher.WRAPPER_ENV, "LD_PRELOAD": str(attack.library)})
    attack.loaded_by()
    attack.run_cat(isolation)
    loaded = attack.loaded_by()
    wrappers = {"prlimit", "setpriv"} | ({"bwrap"} if isolation.level == "bwrap" else set())
    assert wrappers <= {name for _, name in loaded}, loaded
    if IS_ROOT:  # the attack: the bot's library runs as root in every wrapper before the sandbox exists
        assert wrappers <= {name for uid, name in loaded if uid == 0}, loaded


@pytest.mark.parametrize("isolation", LEVELS)
def test_a_refused_variable_is_one_line_naming_it_wherever_a_bot_env_is_given(
        attack: Attack, isolation: Isolation, tmp_path: Path) -> None:
    attack.loaded_by()
    for name in ("LD_PRELOAD", "LD_AUDIT", "GCONV_PATH", "GLIBC_TUNABLES", "BASH_ENV", "MALLOC_TRACE"):
        with pytest.raises(BotLaunchError, match=f"environment variable '{name}' is refused"):
            attack.run_cat(isolation, {name: str(attack.library)})
        with pytest.raises(BotLaunchError, match=f"'{name}'"):
            launcher.scrubbed_env({name: "x"})
    assert attack.loaded_by() == []
    config = tmp_path / "t.toml"
    config.write_text(f'name = "t"\n[[bots]]\nname = "a"\ncommand = "cat"\ndir = "{attack.folder}"\n'
                      f'env = {{ LD_PRELOAD = "{attack.library}" }}\n'
                      f'[[bots]]\nname = "b"\ncommand = "cat"\ndir = "{tmp_path}"\n')
    with pytest.raises(ConfigError, match=r"key 'bots\[0\].env' \(bot 'a'\): environment variable 'LD_PRELOAD' "
                                          "is refused"):
        load_config(config)


def test_durak_play_refuses_a_loader_variable_in_one_line(attack: Attack) -> None:
    bot = f"{sys.executable} {Path(__file__).parent.parent / 'sample_bots' / 'python' / 'random_bot.py'}"
    done = invoke("play", bot, bot, "--env", f"1:LD_PRELOAD={attack.library}")
    assert done.code == 2
    assert done.output.strip().endswith("durak: error: --env '1:LD_PRELOAD=" + str(attack.library) + "': "
                                        "environment variable 'LD_PRELOAD' is refused in a bot's settings: the "
                                        "loader or a shell reads it before the bot runs (docs/ISOLATION.md)")
    assert len(done.output.strip().splitlines()) == 1
    assert attack.loaded_by() == []


@pytest.mark.parametrize("isolation", LEVELS)
def test_with_the_refusal_off_the_library_loads_only_in_the_bot_under_its_own_uid(
        attack: Attack, isolation: Isolation, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variable that slipped past the refusal reaches only the bot's program: the wrappers never get the
    bot's env, and the last exec sets it after the change of uid."""
    monkeypatch.setattr(plan, "check_bot_env", lambda env: None)
    attack.loaded_by()
    attack.run_cat(isolation, {"LD_PRELOAD": str(attack.library)})
    loaded = attack.loaded_by()
    assert {name for _, name in loaded} == {"cat"}, loaded
    if IS_ROOT and isolation.level != "none":  # level none is the referee's own uid, for trusted helpers
        assert all(uid != 0 for uid, _ in loaded), loaded


@needs_bwrap
def test_under_bwrap_the_bot_gets_exactly_its_env(attack: Attack) -> None:
    """The last exec clears what bwrap and setpriv had and sets the bot's env, plus the referee's TMPDIR and HOME
    there (as the kernel gave it: Python itself may add LC_CTYPE to os.environ)."""
    code = "print(sorted(open('/proc/self/environ').read().split(chr(0))[:-1]))"
    command = BotCommand([sys.executable, "-S", "-c", code], cwd=attack.folder, env={"ONLY": "1"})
    with BotProcess(command, isolation=BWRAP) as bot:
        assert bot.read_line(time.monotonic() + 10) == b"['HOME=/tmp', 'ONLY=1', 'TMPDIR=/tmp']"
