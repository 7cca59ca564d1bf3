"""The sample bots of every language under the default sandbox (issue 25): the compiled ones (sample_bots/c, cpp,
java, go) build without a warning with scripts/build_sample_bots and pass check-bot run as sample_bots/README.md
writes them, with their folder given (``--dir``); they read lines of any length over raw pipes and play a
tournament; and each sample language's crash mode (``DURAK_SAMPLE_CRASH=1``) is a crash verdict that quotes the
line where its runtime states the error (PROTOCOL.md 2).

A module fixture copies each compiled bot's sources to a temporary folder and builds them there, so the checkout
stays clean and the script is tested too; a language whose compiler (or library) is missing is skipped. The
folder comes from ``tempfile`` and is opened to every uid: under root the referee runs each bot as a uid of its
own, which cannot enter pytest's private ``tmp_path``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import clirun
import msgspec
import pytest
from test_sample_bots_offline import play, running

from protocol.records import ResultRecord
from protocol.rules import VARIANTS, Rules
from tests.configs import Bot, write_toml

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
RANDOM_BOT = f"{shlex.quote(sys.executable)} {shlex.quote(str(SAMPLES / 'python' / 'random_bot.py'))}"
GSON = "/usr/share/java/gson.jar"
#: Each bot's sources, copied to the build folder.
SOURCES = {"c": ("bot.c",), "cpp": ("bot.cpp",), "java": ("Bot.java",), "go": ("main.go", "go.mod")}
#: Each bot's command, as sample_bots/README.md writes it, run in its folder.
COMMANDS = {"c": "./bot", "cpp": "./bot", "go": "./bot", "java": f"java -cp classes:{GSON} Bot"}
#: The stderr line the referee quotes in a crash verdict (PROTOCOL.md 2), before "sample crash: ...".
CRASH_LINE = {"python": "RuntimeError:", "js": "Error:", "c": "bot.c:", "cpp": "what():",
              "java": "Caused by: java.lang.IllegalStateException:", "go": "panic:"}


@pytest.fixture(scope="module")
def build() -> Iterator[tuple[Path, dict[str, str], str]]:
    """The build folder (a copy of sample_bots/ with the Python bots beside the compiled ones), scripts/
    build_sample_bots's line for each language, and its whole output."""
    top = Path(tempfile.mkdtemp(prefix="durak-test-compiled-"))
    folder = top / "sample_bots"
    try:
        top.chmod(0o755)
        shutil.copytree(SAMPLES / "python", folder / "python", ignore=shutil.ignore_patterns("__pycache__"))
        for language, names in SOURCES.items():
            (folder / language).mkdir()
            for name in names:
                shutil.copy(SAMPLES / language / name, folder / language / name)
        built = subprocess.run([str(ROOT / "scripts" / "build_sample_bots"), str(folder)], capture_output=True,
                               text=True, timeout=600)
        lines = {line.split()[1]: line for line in built.stdout.splitlines() if len(line.split()) > 1
                 and not line.startswith(" ")}
        yield folder, lines, built.stdout + built.stderr
    finally:
        shutil.rmtree(top)


def built(language: str, build: tuple[Path, dict[str, str], str]) -> Path:
    """The folder of ``language``'s bot, built; the test is skipped where its compiler is missing."""
    folder, lines, output = build
    line = lines.get(language, "")
    if line.startswith("skipped"):
        pytest.skip(line)
    assert line.startswith("built"), output
    return folder / language


@pytest.fixture(params=["cpp", "java", "go"])
def language(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("players", [2, 4])
def test_it_passes_check_bot_under_the_default_sandbox(language: str, build: tuple[Path, dict[str, str], str],
                                                      players: int) -> None:
    """check-bot as sample_bots/README.md writes it: one process plays every variant and deck in every seat of
    the table, with no verdict and no strike, in the default sandbox."""
    report = clirun.run("check-bot", "--dir", str(built(language, build)), COMMANDS[language], "--players",
                        str(players))
    assert "checked with sandbox bwrap" in report
    for variant in VARIANTS:
        for deck in (36, 52):
            assert re.search(rf"^ok +{variant} +{deck} cards +{players} games,", report, re.MULTILINE), report
    assert report.rstrip().endswith("PASS"), report


def test_it_reads_long_and_loose_lines_and_exits_on_shutdown(language: str, build: tuple[Path, dict[str, str], str],
                                                             tmp_path: Path) -> None:
    """Over raw pipes (the offline driver): a 1 MiB line of an unknown message type, then a game written as a
    newer referee might write it (keys reordered, spaces, unknown fields, request ids not counted), then
    shutdown: exit status 0, and nothing written after the last reply."""
    junk = b'{"type":"from_the_future","data":[' + b",".join([b'{"s":"]}\\"\\\\","n":null}'] * 50_000) + b"]}"
    assert len(junk) > 1 << 20
    folder = built(language, build)
    bot = COMMANDS[language].replace("./bot", str(folder / "bot")).replace("classes:", f"{folder}/classes:")
    with running(shlex.split(bot), 1, tmp_path / "bot") as (subject,), \
            running(shlex.split(RANDOM_BOT), 1, tmp_path / "random") as (rnd,):
        subject.send_line(junk)
        result, actions, _ = play([subject, rnd], Rules(variant="perevodnoy"), seed=11, game_id="long")
        assert result.end in ("fool", "draw") and actions
        subject.shut_down()
        rnd.shut_down()


@pytest.mark.parametrize("crashing", list(CRASH_LINE))
def test_each_sample_languages_crash_mode_is_quoted_by_its_error_line(
        crashing: str, build: tuple[Path, dict[str, str], str]) -> None:
    """DURAK_SAMPLE_CRASH=1: the bot crashes at its first request, and the crash verdict quotes the line where its
    runtime states the error (a traceback's last line, node's Error line, Java's Caused by, C++'s what(), Go's
    panic), not the stack frame or banner that came last."""
    folder, command = {"python": (SAMPLES / "python", f"{shlex.quote(sys.executable)} -S heuristic_bot.py"),
                       "js": (SAMPLES / "js", "node bot.js")}.get(crashing, (None, None))
    if folder is None:
        folder, command = built(crashing, build), COMMANDS[crashing]
    elif shutil.which(command.split()[0]) is None:
        pytest.skip(f"{command.split()[0]} is not installed")
    ran = clirun.invoke("play", "--dir", str(folder), f"subject={command}", f"random={RANDOM_BOT}", "--env",
                        "0:DURAK_SAMPLE_CRASH=1", "--seed", "1", "--json")
    assert ran.code == 0, ran.output
    (record,) = [msgspec.json.decode(line, type=ResultRecord) for line in ran.out.splitlines() if line.startswith("{")]
    (verdict,) = record.verdicts
    assert (verdict.seat, verdict.kind, record.fools) == (0, "crash", ["subject"]), verdict
    assert f"(stderr: {CRASH_LINE[crashing]}" in verdict.reason and "sample crash: DURAK_SAMPLE_CRASH=1" in \
        verdict.reason, verdict.reason


def test_a_java_authors_class_path_passes_with_its_folder_and_is_refused_without(
        build: tuple[Path, dict[str, str], str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's author: ``check-bot --dir BOTDIR "java -cp classes:lib/gson.jar Bot"`` passes under the default
    sandbox; the same without --dir (run from BOTDIR, which the sandbox shows as empty) is refused before launch
    with one line naming the hidden class folder."""
    source = built("java", build)
    botdir = source.parent / "java-author"
    shutil.copytree(source, botdir)
    (botdir / "lib").mkdir(mode=0o755)
    shutil.copy(GSON, botdir / "lib" / "gson.jar")
    (botdir / "lib" / "gson.jar").chmod(0o644)
    command = "java -cp classes:lib/gson.jar Bot"
    report = clirun.run("check-bot", "--dir", str(botdir), command)
    assert report.rstrip().endswith("PASS"), report
    monkeypatch.chdir(botdir)
    refused = clirun.invoke("check-bot", command)
    assert refused.code != 0 and refused.output.count("\n") == 1, refused.output
    assert f"class path part {botdir / 'classes'} is hidden by the sandbox" in refused.output


def test_the_compiled_bots_play_a_tournament(build: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    """A round robin of the C++, Java and Go bots and the sample random bot under the default sandbox: every game
    stored, none lost by a verdict."""
    bots = [Bot(language, COMMANDS[language], built(language, build)) for language in ("cpp", "java", "go")]
    bots.append(Bot("random", "{python} random_bot.py", SAMPLES / "python", files=["random_bot.py"]))
    config = write_toml(tmp_path / "compiled.toml", bots, header='name = "compiled"\ndeals = 1')
    output = clirun.run("tournament", str(config), "--jobs", "1")
    exported = clirun.run("export", str(tmp_path / "compiled.db")).splitlines()
    records = [msgspec.json.decode(line, type=ResultRecord) for line in exported if line.startswith("{")]
    assert len(records) == 12 and not [verdict for record in records for verdict in record.verdicts], output
    assert {name for record in records for name in record.players} == {"cpp", "java", "go", "random"}


def test_the_readmes_commands_run_as_written(build: tuple[Path, dict[str, str], str]) -> None:
    """sample_bots/README.md's lines that play and check the compiled bots, run from the root of a copy where they
    are built (``.venv/bin/durak`` there is this interpreter's ``durak``)."""
    for language in ("cpp", "java", "go"):
        built(language, build)
    text = (SAMPLES / "README.md").read_text().split("## Compiled bots")[1].split("\n## ")[0]
    block = re.findall(r"```bash\n(.*?)```", text, re.S)[-1]
    lines = [line.replace(".venv/bin/durak ", f"{Path(sys.executable).parent / 'durak'} ", 1)
             for line in block.splitlines() if line.startswith(".venv/bin/durak ")]
    assert any("check-bot" in line for line in lines) and any(" play " in f" {line} " for line in lines)
    env = dict(os.environ)
    for line in lines:
        ran = subprocess.run(line, shell=True, cwd=build[0].parent, env=env, capture_output=True, text=True,
                             timeout=300)
        assert ran.returncode == 0, (line, ran.stdout[-2000:], ran.stderr)
        assert "check-bot" not in line or ran.stdout.rstrip().endswith("PASS"), (line, ran.stdout)
