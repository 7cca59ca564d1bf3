"""The docs' example commands run as written after the README's first line (issue 38): `.venv/bin/durak`, nothing
activated, Python bots named by `{python}`; every bot of every `play` and `check-bot` example passes the launch's
checks under the default sandbox, the README's human examples play through a pseudo-terminal, and a Python the
sandbox cannot show is refused with the fix named, `{python}`."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from typer.main import get_command

from protocol.rules import Rules
from referee.bots.launcher import BotCommand, preflight, scrubbed_env
from referee.bots.words import PYTHON_WORD
from referee.cli.app import app
from referee.games.botargs import parse_bot_arg
from referee.games.play import PlayOptions, prepare_isolation, table_commands
from tests.humanpty import ROOT, play_human
from tests.sandboxes import needs_bwrap

DOCS = ["README.md", "sample_bots/README.md"]
DURAK = ".venv/bin/durak"
_PYTHON_NAME = re.compile(r"python[0-9.]*")


def example_commands(doc: str) -> list[list[str]]:
    """Every `.venv/bin/durak ...` command of ``doc``: the lines of its bash blocks (continuations joined, comments
    dropped) and its inline code; each as its words from `durak`'s arguments on."""
    text = (ROOT / doc).read_text()
    lines = [line for block in re.findall(r"```bash\n(.*?)```", text, re.S)
             for line in block.replace("\\\n", " ").splitlines()]
    lines += re.findall(r"`([^`\n]*durak [^`\n]*)`", re.sub(r"```.*?```", "", text, flags=re.S))
    commands = []
    for line in lines:
        words = shlex.split(line, comments=True)
        while DURAK in words:
            words = words[words.index(DURAK) + 1:]
            end = words.index("&&") if "&&" in words else len(words)
            commands.append(words[:end])
    return commands


def test_the_docs_examples_call_the_installed_durak_and_no_bare_python() -> None:
    """Nothing to activate: a block's command line starts with .venv/bin/durak (or a setup step), and a bot
    command never names `python` or `python3` by name (the sandbox's lookup, not the shell's, would resolve it).
    PROTOCOL.md's quick start too (tests/test_bot_author.py runs it)."""
    for doc in [*DOCS, "protocol/PROTOCOL.md"]:
        text = (ROOT / doc).read_text()
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                assert not re.match(r"\s*durak ", line), (doc, line)
        for words in example_commands(doc):
            for word in words:
                first = word.split("=", 1)[-1].split()[:1] if " " in word else []
                assert not (first and _PYTHON_NAME.fullmatch(first[0])), (doc, words, word)
    assert len(example_commands("README.md")) >= 4 and len(example_commands("sample_bots/README.md")) >= 8


def _bots_of(words: list[str]) -> list[BotCommand]:
    """The bot commands a `play` or `check-bot` example starts, parsed by `durak`'s own command line."""
    group = get_command(app)
    command = group.get_command(click.Context(group), words[0])  # type: ignore[attr-defined]
    assert command is not None
    params = command.make_context(words[0], words[1:], resilient_parsing=True).params
    if words[0] == "check-bot":
        _, argv = parse_bot_arg(params["command"])
        folder = params["folder"]
        return [BotCommand(argv, cwd=os.path.abspath(folder) if folder else None, env=scrubbed_env({}))]
    options = PlayOptions(rules=Rules(), bots=list(params["bots"]), human=params["human"], players=params["players"],
                          env=tuple(params["env"] or ()), dirs=tuple(params["dirs"] or ()))
    return [bot for _, bot in table_commands(options)]


def _built(bot: BotCommand) -> bool:
    """Whether the bot's program is there: a build output (./sample_bots/c/bot) or a runtime (node, java) that
    the docs ask to build or install first. A Python named by name is always checked: `{python}` is the fix."""
    program = bot.argv[0]
    if "/" in program:
        return os.path.exists(os.path.join(bot.cwd or str(ROOT), program))
    return _PYTHON_NAME.fullmatch(program) is not None or shutil.which(program) is not None


@needs_bwrap
@pytest.mark.parametrize("doc", DOCS)
def test_every_bot_of_the_docs_examples_passes_the_launch_checks_under_the_default_sandbox(
        doc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    isolation = prepare_isolation("bwrap", [])
    checked = 0
    for words in example_commands(doc):
        if words[0] not in ("play", "check-bot") or "--help" in words:
            continue
        for bot in _bots_of(words):
            if _built(bot):
                preflight(bot, isolation)  # BotLaunchError: the example fails as written
                checked += 1
    assert checked >= 3


@needs_bwrap
def test_the_readmes_human_examples_play_as_written() -> None:
    """Each README human example, from the repository root, through a terminal: the bots start in the default
    sandbox, the person is asked, and Ctrl-C at the first prompt resigns (exit 14)."""
    human = [words for words in example_commands("README.md") if words[:3] == ["play", "--human", "0"]]
    assert len(human) == 2 and any(f"{PYTHON_WORD} sample_bots/python/heuristic_bot.py" in w for w in human)
    for words in human:
        session = play_human([*words[1:], "--seed", "1"], lambda index, choices: None, interrupt_at=0, timeout=120)
        text = session.text()
        assert session.code == 14 and "your move [" in text and "Traceback" not in text, text[-2000:]


@needs_bwrap
def test_a_python_the_sandbox_cannot_show_is_refused_naming_the_fix(open_tmp: Path) -> None:
    """A user's virtualenv whose `python` links to an interpreter the sandbox does not show (pyenv's, say): the
    error says to write `{python}`, not to add binds, which no option offers."""
    real, venv = open_tmp / "pyenv", open_tmp / "venv" / "bin"
    real.mkdir()
    venv.mkdir(parents=True)
    shutil.copy(os.path.realpath(sys.executable), real / "python3")
    (venv / "python").symlink_to(real / "python3")
    env = {**os.environ, "PATH": f"{venv}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-m", "referee", "play", "python sample_bots/python/heuristic_bot.py",
                          f"{PYTHON_WORD} sample_bots/python/random_bot.py"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode != 0 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith(f"durak: error: bot program {venv / 'python'} is outside the sandbox "
                                 f"({real / 'python3'} is not shown): write {PYTHON_WORD} for the referee's own "
                                 f"interpreter ({sys.executable})"), ran.stderr
    assert "binds" not in ran.stderr
