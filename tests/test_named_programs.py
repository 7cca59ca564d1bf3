"""The launch checks look a bot's program, its ``#!`` interpreter and its PATH up as the bot's uid, in what its sandbox
shows, never as root: ``command = "/root/x"``, a ``#!`` line or an ``[env] PATH`` naming a host path answers alike
whether the path is a link to /etc/shadow, a file in a folder only root may enter, or nothing; and an entrant's file
naming an interpreter outside the sandbox never makes the sandbox show that host tree. Root and bubblewrap: the
``sandbox`` mark.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.bots.errors import BotLaunchError
from referee.bots.plan import BotCommand, LaunchPlan, plan_launch
from referee.bots.sandbox.isolation import Isolation, within
from tests.sandboxes import needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.skipif(os.geteuid() != 0, reason="the daemon's checks as root")]

#: A league's isolation (entrants' bots) at each level that gives a bot a uid of its own.
LEVELS = [Isolation("bwrap"), Isolation("process")]
PATH = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def host() -> Iterator[Path]:
    """A folder outside everything a sandbox shows, under root's home (mode 700): searchable by root alone."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-programs-", dir=os.path.expanduser("~")))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def bot() -> Iterator[Path]:
    """A bot's folder, as the league's store keeps one: readable by all."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-programs-bot-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _link_to_shadow(path: Path) -> None:
    path.parent.mkdir(mode=0o755, parents=True)
    path.symlink_to("/etc/shadow")


def _in_root_only_folder(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True)
    shutil.copy("/bin/sh", path)
    path.chmod(0o755)  # a program root could run: only its folder keeps the bot's uid out


def _missing(path: Path) -> None:
    pass


#: The three host states of one path: the answers must not tell them apart.
STATES: dict[str, Callable[[Path], None]] = {"link to /etc/shadow": _link_to_shadow,
                                             "program in a 0700 folder": _in_root_only_folder, "missing": _missing}


def _answers(folder: Path, path: Path, answer: Callable[[], str]) -> dict[str, str]:
    """``answer()`` with ``path`` (inside ``folder``, which is made anew) in each of :data:`STATES`."""
    found = {}
    for state, make in STATES.items():
        shutil.rmtree(folder, ignore_errors=True)
        make(path)
        folder.mkdir(mode=0o755, exist_ok=True)
        found[state] = answer()
    return found


def _plan(command: BotCommand, isolation: Isolation) -> str:
    try:
        plan = plan_launch(command, isolation)
    except BotLaunchError as exc:
        return str(exc)
    return f"planned {plan.program} {plan.interpreter} {_host_binds(plan, Path('/root'))}"


def _host_binds(plan: LaunchPlan, host: Path) -> list[str]:
    """What of ``host`` the plan's sandbox would show."""
    binds = [*plan.isolation.ro_binds, *(bind.source or "" for bind in plan.view)]
    return [source for source in binds if within(source, str(host))]


@pytest.mark.parametrize("isolation", LEVELS, ids=lambda isolation: isolation.level)
def test_a_program_named_outside_the_sandbox_gets_one_answer(host: Path, bot: Path, isolation: Isolation) -> None:
    """``command = "/root/.../x"``: once "not executable" (root saw a file), once "out of reach (... mode 700, owner
    uid 0)", once "not found"; now one answer, the bot's uid's."""
    secret = host / "inner" / "secret"
    answers = _answers(host / "inner", secret, lambda: _plan(BotCommand([str(secret)], cwd=bot, env=PATH), isolation))
    assert set(answers.values()) == {f"bot program {str(secret)!r} not found"}, answers


def test_a_program_on_an_entrants_path_outside_the_sandbox_gets_one_answer(host: Path, bot: Path) -> None:
    """``[env] PATH`` naming a host folder: root's ``which`` found the program in a 0700 folder and the plan went on
    to "outside the sandbox"; the bot's uid finds nothing there in any state."""
    folder = host / "inner"
    env = {"PATH": f"{folder}:/usr/bin:/bin"}
    answers = _answers(folder, folder / "secret", lambda: _plan(BotCommand(["secret"], cwd=bot, env=env),
                                                                 Isolation("bwrap")))
    assert set(answers.values()) == {"bot program 'secret' not found"}, answers


def test_a_program_in_the_bots_folder_is_looked_up_as_its_uid(bot: Path) -> None:
    """Inside the sandbox too: a link to /etc/shadow (root: "not executable"), a program in a 0700 folder of the
    bot's (root: "out of reach (... mode 700, owner uid 0)") and nothing answer alike."""
    answers = _answers(bot / "private", bot / "private" / "x",
                       lambda: _plan(BotCommand(["./private/x"], cwd=bot, env=PATH), Isolation("bwrap")))
    assert set(answers.values()) == {"bot program './private/x' not found"}, answers


@pytest.mark.parametrize("isolation", LEVELS, ids=lambda isolation: isolation.level)
def test_an_interpreter_named_outside_the_sandbox_gets_one_answer_and_binds_nothing(
        host: Path, bot: Path, isolation: Isolation) -> None:
    """An uploaded script whose ``#!`` names a host interpreter: root read it and (bwrap) bound the host tree above
    its ``bin/`` into the sandbox, read-only, showing the bot whatever that tree holds; now one refusal, nothing
    bound, whatever is there."""
    interpreter = host / "bin" / "sh"
    (bot / "bot.sh").write_text(f"#!{interpreter}\nread line; echo ok\n")
    (bot / "bot.sh").chmod(0o755)
    answers = _answers(host / "bin", interpreter,
                       lambda: _plan(BotCommand(["./bot.sh"], cwd=bot, env=PATH), isolation))
    assert set(answers.values()) == {f"bot program './bot.sh' names the interpreter {str(interpreter)!r} on its #! "
                                     "line, which its uid does not find in what its sandbox shows: a bot's "
                                     "interpreter must be one the sandbox shows (under /usr, or the referee's "
                                     "own)"}, answers


def test_an_entrants_path_never_makes_the_sandbox_show_a_host_tree(host: Path, bot: Path) -> None:
    """``#!/usr/bin/env x`` with ``[env] PATH`` naming a host ``bin/`` that holds ``x``: root's ``which`` found it
    and the sandbox showed the host tree (and its secrets, readable by all, behind root's 0700 home); now the
    search is the bot's uid's, in what its sandbox shows, and nothing of the host is bound."""
    (host / "bin").mkdir()
    shutil.copy("/bin/sh", host / "bin" / "x")
    (host / "secret.txt").write_text("the organizer's\n")
    (bot / "bot.sh").write_text("#!/usr/bin/env x\nread line; cat ../secret.txt\n")
    (bot / "bot.sh").chmod(0o755)
    plan = plan_launch(BotCommand(["./bot.sh"], cwd=bot, env={"PATH": f"{host / 'bin'}:/usr/bin:/bin"}),
                       Isolation("bwrap"))
    assert _host_binds(plan, host) == [] and plan.interpreter == "/usr/bin/env"


def test_a_program_and_interpreter_the_bots_uid_can_see_are_found(bot: Path) -> None:
    """The control: the look-ups are made, as the bot's uid, and find what the sandbox shows it."""
    (bot / "bot.sh").write_text("#!/bin/sh\nread line\n")
    (bot / "bot.sh").chmod(0o755)
    (bot / "env.sh").write_text("#!/usr/bin/env sh\nread line\n")
    (bot / "env.sh").chmod(0o755)
    (bot / "plain.sh").write_text("#!/bin/sh\n")  # readable, no x bit: the organizer's usual slip, said as such
    for isolation in LEVELS:
        planned = plan_launch(BotCommand(["./bot.sh"], cwd=bot, env=PATH), isolation)
        assert (planned.program, planned.interpreter, planned.runs_as) == ("./bot.sh", "/bin/sh", "own")
        assert plan_launch(BotCommand(["./env.sh"], cwd=bot, env=PATH), isolation).interpreter == "/usr/bin/sh"
        assert plan_launch(BotCommand(["sh", "-c", ""], cwd=bot, env=PATH), isolation).program == "/usr/bin/sh"
        assert _plan(BotCommand(["./plain.sh"], cwd=bot, env=PATH), isolation) == \
            "bot program './plain.sh' is not executable"


def test_a_leagues_bots_never_get_an_interpreters_tree_and_a_tournaments_may() -> None:
    """A league's table (its workers' too) is entrants': its isolation binds no tree a command or ``#!`` names; a
    tournament's and ``durak play``'s bots are the organizer's, whose interpreter under /root still runs."""
    from referee.games.play import prepare_isolation
    from referee.league.config import load_league
    from referee.tournament.config import load_config

    samples = Path(__file__).resolve().parent.parent / "sample_bots"
    assert not load_league(samples / "league.toml").table.isolation([]).interpreter_trees
    assert load_config(samples / "tournament.toml").isolation([]).interpreter_trees
    assert prepare_isolation("bwrap", []).interpreter_trees
