"""The compiled sample bots (sample_bots/cpp, sample_bots/java, sample_bots/go) build without a warning, play
every variant through the referee against the sample random bot, speak the protocol over raw pipes, and crash
when told to (``DURAK_SAMPLE_CRASH=1``).

A module fixture copies each bot's sources to a temporary folder and builds them there with
scripts/build_sample_bots, so the checkout stays clean and the script is tested too; a language whose compiler
(or library) is missing is skipped. The folder comes from ``tempfile`` and is opened to every uid, as in
tests/conftest.py: under root the referee runs each bot as a uid of its own, which cannot enter pytest's
private ``tmp_path``. The games run at ``--sandbox process`` for now.
"""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_bots"
RANDOM_BOT = f"{shlex.quote(sys.executable)} {shlex.quote(str(SAMPLES / 'python' / 'random_bot.py'))}"
GSON = "/usr/share/java/gson.jar"
#: Each bot's sources, copied to the build folder.
SOURCES = {"cpp": ("bot.cpp",), "java": ("Bot.java",), "go": ("main.go", "go.mod")}
#: The stderr line the referee quotes in a crash verdict (PROTOCOL.md 2), before "sample crash: ...".
CRASH_LINE = {"cpp": "what():", "java": "Caused by: java.lang.IllegalStateException:", "go": "panic:"}


@pytest.fixture(scope="module")
def build() -> Iterator[tuple[Path, dict[str, str], str]]:
    """The build folder, scripts/build_sample_bots's line for each language, and its whole output."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-compiled-"))
    try:
        folder.chmod(0o755)
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
        shutil.rmtree(folder)


@pytest.fixture(params=list(SOURCES))
def language(request: pytest.FixtureRequest, build: tuple[Path, dict[str, str], str]) -> str:
    _, lines, output = build
    line = lines.get(request.param, "")
    if line.startswith("skipped"):
        pytest.skip(line)
    assert line.startswith("built"), output
    return str(request.param)


@pytest.fixture
def bot(language: str, build: tuple[Path, dict[str, str], str]) -> str:
    """The bot's command line: as its header says, but with absolute paths (the referee's working directory is
    not the bot's folder)."""
    folder = build[0] / language
    if language == "java":
        return f"java -cp {shlex.quote(f'{folder}/classes:{GSON}')} Bot"
    return shlex.quote(str(folder / "bot"))


@pytest.mark.parametrize("players", [2, 4])
def test_it_plays_every_variant_against_the_random_bot(bot: str, players: int) -> None:
    """check-bot: one process plays every variant and deck in every seat of the table, with no verdict."""
    report = clirun.run("check-bot", bot, "--players", str(players), "--sandbox", "process")
    for variant in VARIANTS:
        for deck in (36, 52):
            assert re.search(rf"^ok +{variant} +{deck} cards +{players} games,", report, re.MULTILINE), report
    assert report.rstrip().endswith("PASS"), report


def test_the_crash_mode_is_a_crash_verdict(bot: str, language: str) -> None:
    """DURAK_SAMPLE_CRASH=1: the bot crashes at its first request, and the verdict quotes the runtime's line."""
    ran = clirun.invoke("play", f"subject={bot}", f"random={RANDOM_BOT}", "--env", "0:DURAK_SAMPLE_CRASH=1",
                        "--seed", "1", "--json", "--sandbox", "process")
    assert ran.code == 0, ran.output
    (record,) = [msgspec.json.decode(line, type=ResultRecord) for line in ran.out.splitlines() if line.startswith("{")]
    (verdict,) = record.verdicts
    assert (verdict.seat, verdict.kind, record.fools) == (0, "crash", ["subject"]), verdict
    assert f"{CRASH_LINE[language]} sample crash: DURAK_SAMPLE_CRASH=1" in verdict.reason, verdict.reason


def test_it_reads_long_and_loose_lines_and_exits_on_shutdown(bot: str, tmp_path: Path) -> None:
    """Over raw pipes (the offline driver): a 1 MiB line of an unknown message type, then a game written as a
    newer referee might write it (keys reordered, spaces, unknown fields, request ids not counted), then
    shutdown: exit status 0, and nothing written after the last reply."""
    junk = b'{"type":"from_the_future","data":[' + b",".join([b'{"s":"]}\\"\\\\","n":null}'] * 50_000) + b"]}"
    assert len(junk) > 1 << 20
    with running(shlex.split(bot), 1, tmp_path / "bot") as (subject,), \
            running(shlex.split(RANDOM_BOT), 1, tmp_path / "random") as (rnd,):
        subject.send_line(junk)
        result, actions, _ = play([subject, rnd], Rules(variant="perevodnoy"), seed=11, game_id="long")
        assert result.end in ("fool", "draw") and actions
        subject.shut_down()
        rnd.shut_down()
