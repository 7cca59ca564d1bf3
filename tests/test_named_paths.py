"""The root daemon answers no question about a host file that a build or a bot's command names: a path outside what
the sandbox shows is looked up as the bot's uid, never as root, so a link to /etc/shadow, a file in a folder only
root may enter and nothing at all answer alike; a build's words are never looked up at all (the build meets them in
its sandbox). Root and bubblewrap: the ``sandbox`` mark.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.bots.errors import BotLaunchError
from referee.bots.plan import BotCommand, plan_launch
from referee.bots.sandbox.isolation import Isolation
from referee.league.build import BuildLimits, build_bot
from tests.sandboxes import needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.skipif(os.geteuid() != 0, reason="the daemon's checks as root")]


@pytest.fixture
def host() -> Iterator[Path]:
    """A folder outside everything a sandbox shows (under root's home, not /tmp: that is the bot's own tmpfs)."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-named-", dir=os.path.expanduser("~")))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _link_to_shadow(secret: Path) -> None:
    secret.parent.mkdir(mode=0o755)
    secret.symlink_to("/etc/shadow")


def _in_root_only_folder(secret: Path) -> None:
    secret.parent.mkdir(mode=0o700)
    secret.write_text("root's secret\n")


def _missing(secret: Path) -> None:
    pass


#: The three host states of one path: the answers must not tell them apart.
STATES: dict[str, Callable[[Path], None]] = {"link to /etc/shadow": _link_to_shadow,
                                             "file in a 0700 folder": _in_root_only_folder, "missing": _missing}


def _answers(host: Path, answer: Callable[[Path], str]) -> dict[str, str]:
    """``answer(path)`` for the same path in each of :data:`STATES`."""
    found = {}
    for state, make in STATES.items():
        secret = host / "inner" / "secret"
        shutil.rmtree(host / "inner", ignore_errors=True)
        make(secret)
        found[state] = answer(secret)
    return found


def _bot_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="durak-test-named-bot-"))
    folder.chmod(0o755)
    return folder


def _plan(words: list[str], cwd: Path) -> str:
    """What the launch checks answer for the bot ``true WORDS...`` in ``cwd``: its refusal, or "planned"."""
    try:
        plan_launch(BotCommand(["true", *words], cwd=cwd, env={"PATH": "/usr/bin:/bin"}), Isolation("bwrap"))
    except BotLaunchError as exc:
        return str(exc)
    return "planned"


def test_a_command_naming_a_path_outside_the_sandbox_gets_one_answer(host: Path) -> None:
    bot = _bot_dir()
    try:
        answers = _answers(host, lambda secret: _plan([str(secret)], bot))
    finally:
        shutil.rmtree(bot)
    assert len(set(answers.values())) == 1, answers  # byte-identical, whatever the path is
    assert answers["missing"] == "planned"  # the bot's uid cannot see into root's home: nothing there to refuse


def test_a_path_the_bots_uid_can_see_outside_the_sandbox_is_still_refused(tmp_path: Path) -> None:
    """The control of the above: the look-up is made, as the bot's uid, and refuses what it finds."""
    bot, seen = _bot_dir(), Path(tempfile.mkdtemp(prefix="durak-test-named-seen-", dir="/var/lib"))
    try:
        seen.chmod(0o755)
        (seen / "classes").mkdir()
        assert _plan([str(seen / "classes")], bot).startswith(f"bot command word {seen / 'classes'} is hidden by")
    finally:
        shutil.rmtree(bot)
        shutil.rmtree(seen)


def test_a_word_inside_the_sandbox_is_looked_up_as_the_bots_uid() -> None:
    """A file in a folder of the bot's that only root may enter: its uid cannot tell it from a missing one, and
    neither can the answer (root would: "out of reach (... mode 700, owner uid 0)")."""
    bot = _bot_dir()
    try:
        (bot / "private").mkdir(mode=0o700)
        missing = _plan(["private/secret"], bot)
        (bot / "private" / "secret").write_text("x")
        present = _plan(["private/secret"], bot)
    finally:
        shutil.rmtree(bot)
    assert present == missing == "planned"


def test_a_build_naming_a_host_path_gets_one_answer(host: Path, tmp_path: Path) -> None:
    """``build = "ln -s TARGET shadow"`` for the same TARGET in each state: the same outcome and output, and nothing
    about TARGET (its mode, its owner, whether it exists)."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.c").write_text("int main(void) { return 0; }\n")

    def build(target: Path) -> str:
        output = tmp_path / "out.tar"
        output.unlink(missing_ok=True)
        done = build_bot(source, ["ln", "-s", str(target), "shadow"], Isolation("bwrap"),
                         BuildLimits(wall_seconds=30), output_tar=output)
        return re.sub(r"\d+\.\d s", "N s", f"{done.verdict} {done.exit_code} {done.summary()} {done.output!r}")

    answers = _answers(host, build)
    assert len(set(answers.values())) == 1, answers
    assert answers["missing"].startswith("ok 0 build ok")  # the link is made inside; the upload's check refuses it
    assert "/etc/shadow" not in answers["link to /etc/shadow"]
