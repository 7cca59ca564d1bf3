"""A bot is tested as it will play (issue 25): ``durak play`` and ``check-bot`` give it a tournament's core, limits,
HOME and TMPDIR, say so in one line, and take its folder (``--dir``) as a tournament takes ``dir``; a command
that names a path its sandbox would hide is refused before launch, naming the path."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import msgspec
import pytest

from protocol.records import ResultRecord, stderr_text
from referee.bots.errors import BotLaunchError
from referee.bots.launcher import BotCommand, preflight, scrubbed_env
from referee.bots.sandbox.isolation import DEFAULT
from referee.games.botargs import BotArgError, default_name, seat_dirs
from tests.clirun import invoke, run
from tests.configs import Bot, write_toml
from tests.sandboxes import BOTS, needs_bwrap

pytestmark = needs_bwrap

PYTHON = sys.executable


@pytest.fixture
def bot_dir(open_tmp: Path) -> Path:
    """A bot's own folder (searchable by every uid), holding the surroundings bot."""
    folder = open_tmp / "mybot"
    folder.mkdir(mode=0o755)
    shutil.copy(BOTS / "surroundings.py", folder / "bot.py")
    (folder / "bot.py").chmod(0o644)
    return folder


def surroundings(output: str) -> list[dict[str, object]]:
    """What each surroundings bot said of itself, from ``durak play --stderr`` output."""
    return [json.loads(line.partition("stderr| ")[2]) for line in output.splitlines() if "stderr| {" in line]


def test_play_gives_a_bot_one_core_a_private_home_and_says_what_it_gave(bot_dir: Path) -> None:
    output = run("play", "--dir", str(bot_dir), f"{PYTHON} -S bot.py", f"{PYTHON} -S {bot_dir / 'bot.py'}",
                 "--stderr", "all", "--seed", "1")
    (said,) = [line for line in output.splitlines() if line.startswith("each bot: ")]
    assert "sandbox bwrap" in said and "memory 1024 MiB" in said and "HOME=TMPDIR=/tmp" in said
    core = int(said.split(", core ")[1].split(",")[0])
    assert core in os.sched_getaffinity(0)
    first, second = surroundings(output)
    assert first == {"home": "/tmp", "tmpdir": "/tmp", "home_writable": True, "cwd": str(bot_dir), "cores": 1}
    assert second["home"] == "/tmp" and second["home_writable"] and second["cores"] == 1
    if len(os.sched_getaffinity(0)) > 1:  # the control: without the default, the bots get every core
        spread = run("play", "--dir", str(bot_dir), f"{PYTHON} -S bot.py", f"{PYTHON} -S bot.py", "--dir",
                     f"1:{bot_dir}", "--stderr", "all", "--all-cores")
        assert {entry["cores"] for entry in surroundings(spread)} == {len(os.sched_getaffinity(0))}
        assert "cores " in spread


def test_a_tournament_gives_the_same_home_tmpdir_and_one_core(bot_dir: Path, tmp_path: Path) -> None:
    config = write_toml(tmp_path / "t.toml", [Bot("a", f"{PYTHON} -S bot.py", bot_dir),
                                              Bot("b", f"{PYTHON} -S bot.py", bot_dir)],
                        header='name = "t"\ndeals = 1')
    run("tournament", str(config), "--jobs", "1")
    exported = invoke("export", str(tmp_path / "t.db"), "--stderr").out.splitlines()
    record = msgspec.json.decode(exported[0], type=ResultRecord)
    assert record.stderr is not None
    seen = [json.loads(line) for seat in record.stderr for line in stderr_text(seat).splitlines() if "{" in line]
    assert seen and all(entry == {"home": "/tmp", "tmpdir": "/tmp", "home_writable": True, "cwd": str(bot_dir),
                                  "cores": 1} for entry in seen)


def test_check_bot_takes_the_bots_folder_and_says_what_it_gave(bot_dir: Path) -> None:
    done = invoke("check-bot", "--dir", str(bot_dir), f"{PYTHON} -S bot.py", "--variant", "podkidnoy",
                  "--deck", "36")
    assert done.code == 0, done.output
    assert "checked with sandbox bwrap" in done.output and ", core " in done.output


# --- the bot's folder, and what its sandbox would hide ------------------------------------------------------


def test_a_class_path_outside_the_bots_folder_is_refused_before_launch_naming_the_path(
        bot_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (bot_dir / "classes").mkdir()
    (bot_dir / "lib").mkdir()
    (bot_dir / "lib" / "dep.jar").write_bytes(b"PK")
    monkeypatch.chdir(bot_dir)  # an author runs it from the bot's folder, which the sandbox shows as empty
    java = ["java", "-cp", "classes:lib/dep.jar:/usr", "Bot"]
    with pytest.raises(BotLaunchError, match=f"class path part {bot_dir / 'classes'} is hidden by the sandbox"):
        preflight(BotCommand(java, env=scrubbed_env()), DEFAULT)
    done = invoke("check-bot", "java -cp classes:lib/dep.jar Bot")
    assert done.code != 0 and done.output.count("\n") == 1 and str(bot_dir / "classes") in done.output
    preflight(BotCommand(java, cwd=bot_dir, env=scrubbed_env()), DEFAULT)  # with its folder named, it is shown


@pytest.mark.parametrize("named", [
    pytest.param(lambda hidden: (["--class-path", f"{hidden}:/usr/share"], {}), id="--class-path"),
    pytest.param(lambda hidden: ([f"--class-path={hidden}"], {}), id="--class-path="),
    pytest.param(lambda hidden: ([f"--data={hidden}"], {}), id="--option="),
    pytest.param(lambda hidden: ([str(hidden)], {}), id="word"),
    pytest.param(lambda hidden: ([], {"CLASSPATH": f"/usr:{hidden}"}), id="CLASSPATH"),
    pytest.param(lambda hidden: ([], {"PYTHONPATH": str(hidden)}), id="PYTHONPATH"),
    pytest.param(lambda hidden: ([], {"NODE_PATH": f"{hidden}:"}), id="NODE_PATH"),
])
def test_each_way_of_naming_a_hidden_path_is_refused(named, bot_dir: Path, open_tmp: Path) -> None:  # type: ignore[no-untyped-def]
    hidden = open_tmp / "elsewhere"
    hidden.mkdir()
    words, env = named(hidden)
    command = BotCommand([PYTHON, "-S", "bot.py", *words], cwd=bot_dir, env=scrubbed_env(env))
    with pytest.raises(BotLaunchError, match=f"{hidden} is hidden by the sandbox"):
        preflight(command, DEFAULT)
    words, env = named(bot_dir / "bot.py")  # the control: the same, naming the bot's own file
    preflight(BotCommand([PYTHON, "-S", "bot.py", *words], cwd=bot_dir, env=scrubbed_env(env)), DEFAULT)


def test_paths_the_sandbox_makes_or_shows_are_not_refused(bot_dir: Path) -> None:
    words = ["/dev/null", "/proc/self", "/tmp", "/usr/share", "--log=/dev/stderr", "3"]
    preflight(BotCommand([PYTHON, "-S", "bot.py", *words], cwd=bot_dir, env=scrubbed_env()), DEFAULT)


def test_a_file_in_the_hosts_tmp_is_refused_as_hidden_by_the_private_tmp(bot_dir: Path) -> None:
    host_file = Path("/tmp") / f"durak-test-{os.getpid()}.bin"
    host_file.write_bytes(b"weights")
    try:
        with pytest.raises(BotLaunchError, match="its /tmp is a private, empty tmpfs"):
            preflight(BotCommand([PYTHON, "-S", "bot.py", str(host_file)], cwd=bot_dir, env=scrubbed_env()),
                      DEFAULT)
    finally:
        host_file.unlink()


def test_a_bots_name_is_its_folders_else_its_first_file_arguments_else_its_programs(
        bot_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(bot_dir)
    assert default_name(["java", "-cp", "classes:/usr/share/java/gson.jar", "Bot"], str(bot_dir)) == "mybot"
    assert default_name(["java", "-cp", "classes:/usr/share/java/gson.jar", "Bot"]) == "java"
    assert default_name(["python3", "-u", "bot.py", "--depth", "3"]) == "mybot"  # bot.py names no bot: its folder
    assert default_name(["./missing/thing.py"]) == "thing.py"


def test_dir_options_name_a_seat_by_number_or_given_name(bot_dir: Path) -> None:
    assert seat_dirs([str(bot_dir)], [None, None]) == [str(bot_dir), None]
    assert seat_dirs([f"1:{bot_dir}"], [None, None]) == [None, str(bot_dir)]
    assert seat_dirs([f"b:{bot_dir}"], ["a", "b"]) == [None, str(bot_dir)]
    for options, problem in (([f"2:{bot_dir}"], "no seat 2"), ([str(bot_dir), str(bot_dir)], "has a folder"),
                             ([str(bot_dir / "nope")], "no folder")):
        with pytest.raises(BotArgError, match=problem):
            seat_dirs(options, [None, None])
    done = invoke("play", "--dir", str(bot_dir / "nope"), "a", "b")
    assert done.code == 2 and done.output.count("\n") == 1 and "no folder" in done.output
