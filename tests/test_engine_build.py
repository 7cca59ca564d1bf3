"""The compiled and the pure-Python engine: built from one source, they must play the same games.

setup.py compiles the engine with mypyc at install time; ``DURAK_PURE=1`` loads the sources instead
(protocol/build.py). These tests run where the compiled build is installed (CI's ``pip install -e``): under
``DURAK_PURE=1`` (scripts/test's second pass over the engine tests) the ones about the compiled build skip.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from protocol.build import stale_compiled_modules
from protocol.rules import VARIANTS, Rules
from referee.engine import SeededRng, engine_build, new_game

ROOT = Path(__file__).resolve().parent.parent
PURE_RUN = os.environ.get("DURAK_PURE") == "1"
needs_compiled = pytest.mark.skipif(PURE_RUN, reason="this run loads the pure engine (DURAK_PURE=1)")

#: Plays seeded games with seeded random choices; prints each game's events and result as JSON lines.
GAMES_SNIPPET = """
import random, sys
import msgspec
from protocol.rules import Rules
from referee.engine import SeededRng, engine_build, new_game
variant, players, deck, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
print(engine_build())
for i in range(count):
    game = new_game(Rules(variant=variant, deck=deck), players, SeededRng(i))
    choose = random.Random(i)
    while game.result is None:
        game.apply(choose.choice(game.legal_actions()))
    print(msgspec.json.encode([game.events, game.result, [game.view(s) for s in range(players)]]).decode())
"""


def play_in_subprocess(variant: str, players: int, deck: int, count: int, *, pure: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "DURAK_PURE"}
    if pure:
        env["DURAK_PURE"] = "1"
    done = subprocess.run([sys.executable, "-c", GAMES_SNIPPET, variant, str(players), str(deck), str(count)],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=True, timeout=300)
    return done.stdout.splitlines()


@needs_compiled
def test_the_compiled_engine_is_loaded() -> None:
    assert engine_build() == "compiled"


@needs_compiled
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("players", "deck"), [(2, 36), (2, 52), (3, 36), (6, 36)])
def test_both_builds_play_identical_games(variant: str, players: int, deck: int) -> None:
    """50 seeded games per variant and table: the same events, results and final views, line for line."""
    compiled = play_in_subprocess(variant, players, deck, 50, pure=False)
    pure = play_in_subprocess(variant, players, deck, 50, pure=True)
    assert compiled[0] == "compiled" and pure[0] == "pure"
    assert len(compiled) == 51
    assert compiled[1:] == pure[1:]


def test_this_process_plays_as_a_fresh_one() -> None:
    """The in-process engine (whichever build) agrees with a subprocess of the pure one."""
    lines = play_in_subprocess("perevodnoy", 3, 36, 5, pure=True)
    for i, line in enumerate(lines[1:]):
        game = new_game(Rules(variant="perevodnoy"), 3, SeededRng(i))
        choose = random.Random(i)
        while game.result is None:
            game.apply(choose.choice(game.legal_actions()))
        assert msgspec.json.encode([game.events, game.result, [game.view(s) for s in range(3)]]).decode() == line


@needs_compiled
def test_the_installed_durak_command_loads_the_compiled_engine(tmp_path: Path) -> None:
    """The console script, run away from the checkout, reports the compiled build in ``selfplay --json``."""
    durak = Path(sys.executable).with_name("durak")
    assert durak.is_file(), "pip install -e . installs the durak command beside the interpreter"
    env = {k: v for k, v in os.environ.items() if k not in ("DURAK_PURE", "PYTHONPATH")}
    done = subprocess.run([str(durak), "selfplay", "--json", "--games", "5"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(done.stdout)["engine"] == "compiled", done.stderr


def test_durak_pure_loads_the_sources(tmp_path: Path) -> None:
    env = {**os.environ, "DURAK_PURE": "1"}
    done = subprocess.run([sys.executable, "-m", "referee", "selfplay", "--json", "--games", "5"], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(done.stdout)["engine"] == "pure"


def test_a_source_edited_after_the_build_is_stale(tmp_path: Path) -> None:
    """A checkout whose engine source is newer than the compiled library: that source is named stale."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / "protocol").mkdir()
    (tmp_path / "referee" / "engine").mkdir(parents=True)
    sources = [tmp_path / "protocol" / "cards.py", tmp_path / "referee" / "engine" / "bout.py"]
    for source in sources:
        source.write_text("")
        source.with_name(source.stem + suffix).write_text("")
    library = tmp_path / "protocol" / f"_compiled__mypyc{suffix}"
    library.write_text("")
    past = time.time() - 100
    for source in sources:
        os.utime(source, (past, past))
    assert stale_compiled_modules(tmp_path) == []
    os.utime(sources[1])  # edited now, after the build
    assert stale_compiled_modules(tmp_path) == ["referee/engine/bout.py"]
    library.unlink()
    assert stale_compiled_modules(tmp_path) == []  # nothing compiled: nothing stale
