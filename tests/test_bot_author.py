"""The bot author's tools (issue 10): a bot's stderr where its author looks, and only there; check-bot over
every variant and deck; settings through the environment; the version; --debug anywhere."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest
from clirun import invoke

from protocol.events import CardsDrawn, event_for_seat
from protocol.records import ResultRecord, stderr_text
from referee.results.narrate import describe_event
from referee.results.store import Store
from referee.tournament.config import load_config
from referee.tournament.runner import RunRequest, run_tournament
from tests.test_match_hostile_bots import shell
from tests.test_tournament_run import write_config

ROOT = Path(__file__).resolve().parent.parent
SAW = re.compile(r"saw (\d+)$")


def durak(*args: str) -> tuple[int, str, str]:
    ran = invoke(*args)
    return ran.code, ran.out, ran.err


def stderr_lines(out: str, label: str) -> list[str]:
    return [line.split("stderr| ", 1)[1] for line in out.splitlines() if f"{label} stderr| " in line]


# -- durak play --------------------------------------------------------------------------------------


def test_play_prints_the_chosen_seats_stderr_after_each_game_and_no_other() -> None:
    code, out, err = durak("play", f"a={shell('play', saw=1)}", f"b={shell('play', saw=1)}", "--seed", "3",
                           "--games", "2", "--stderr", "a")
    assert code == 0, err
    assert out.count("   stderr of 0:a:") == 2 and "1:b" not in out
    lines = stderr_lines(out, "0:a")
    assert lines and all(SAW.match(line) or line.startswith("over ") for line in lines)


def test_play_verbose_prints_stderr_live_before_the_move_it_was_written_for() -> None:
    code, out, err = durak("play", f"a={shell('play', saw=1)}", f"b={shell('play')}", "--seed", "3", "--verbose",
                           "--stderr", "0")
    assert code == 0, err
    lines = out.splitlines()
    told = [i for i, line in enumerate(lines) if "0:a stderr| saw" in line]
    assert len(told) > 3
    for i in told:  # each is followed by the narration of a's own decision
        assert re.match(r"   0:a (attacks|beats|passes|takes|throws|transfers)", lines[i + 1]), lines[i:i + 2]
    assert "   trump card TD" in lines[:6]  # the deal: hands, then the face-up trump card


def test_play_prints_the_last_stderr_of_a_bot_that_forfeits() -> None:
    code, out, _ = durak("play", f"a={shell('crash', after=2)}", f"b={shell('play')}", "--seed", "3")
    assert code == 0
    assert "   last stderr of 0:a:\n   0:a stderr| bot.py: crashing on purpose" in out


def test_play_stderr_of_a_seat_that_is_not_there_is_a_one_line_error() -> None:
    code, _, err = durak("play", shell("play"), shell("play"), "--stderr", "carol")
    assert code == 2 and err == "durak: error: no seat 'carol': the seats are 0-1 (hostile, hostile#2)\n"


ENV_BOT = textwrap.dedent("""\
    import json, os, sys
    print("DEPTH=" + os.environ.get("DEPTH", "-"), "SECRET=" + os.environ.get("DURAK_TEST_SECRET", "-"),
          file=sys.stderr, flush=True)
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "hello":
            print(json.dumps({"type": "hello", "protocol": m["protocol"], "name": "env"}), flush=True)
        elif m["type"] == "request":
            print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
        elif m["type"] == "shutdown":
            break
    """)


def test_play_env_gives_settings_to_every_seat_or_one_and_nothing_else(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    bot = tmp_path / "env_bot.py"
    bot.write_text(ENV_BOT)
    monkeypatch.setenv("DURAK_TEST_SECRET", "referee's")
    command = f"{sys.executable} -S {bot}"
    code, out, err = durak("play", f"a={command}", f"b={command}", "--seed", "3", "--stderr", "all",
                           "--env", "DEPTH=3", "--env", "b:DEPTH=4", "--sandbox", "none")
    assert code == 0, err
    assert stderr_lines(out, "0:a") == ["DEPTH=3 SECRET=-"] and stderr_lines(out, "1:b") == ["DEPTH=4 SECRET=-"]
    code, _, err = durak("play", command, command, "--env", "no equals sign")
    assert code == 2 and "--env takes NAME=VALUE or SEAT:NAME=VALUE, not 'no equals sign'" in err


def test_a_seat_is_told_the_face_up_trump_card_another_seat_draws() -> None:
    """The trump card lies face up: when another seat draws it, a seat's view of the game names it."""
    drawn = CardsDrawn(seat=1, count=2, cards=["7H", "TD"], shown=["TD"])
    assert describe_event(event_for_seat(drawn, 0), ["a", "b"]) == "   b draws 2, the last the face-up trump card TD"
    assert describe_event(event_for_seat(drawn, 1), ["a", "b"]) == "   b draws 2: 7H TD"


# -- stored games: replay and export ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A stored tournament of two bots that both write to stderr: the database and one game's key."""
    folder = tmp_path_factory.mktemp("arena")
    config = write_config(folder, {"alice": "play saw=1", "bob": "crash after=3"}, deals=1)
    db = folder / "t.db"
    run_tournament(load_config(config), RunRequest(db, jobs=1), io.StringIO())
    with Store(db, create=False) as store:
        game = next(store.records()).game
    return db, game


def test_replay_with_seat_shows_that_bots_stderr_beside_its_moves_and_never_anothers(arena: tuple[Path, str]
                                                                                    ) -> None:
    db, game = arena
    code, out, err = durak("replay", str(db), game, "--seat", "alice")
    assert code == 0, err
    lines = out.splitlines()
    told = [i for i, line in enumerate(lines) if line.startswith("   alice stderr| saw")]
    assert told and all(lines[i + 1].startswith("   alice ") for i in told)
    assert "crashing on purpose" not in out and "bob stderr|" not in out  # nor in the crash reason
    assert re.search(r"\nresult: bob forfeits \(crash\) and is the fool\nverdict: bob \(seat \d\) crash\n$", out)
    code, out, _ = durak("replay", str(db), game, "--seat", "bob")
    assert "bob stderr| bot.py: crashing on purpose" in out and "alice stderr|" not in out
    code, out, _ = durak("replay", str(db), game)
    assert "stderr|" not in out
    code, out, _ = durak("replay", str(db), game, "--stderr")
    assert "alice stderr| saw" in out and "bob stderr| bot.py: crashing on purpose" in out


def test_export_has_stderr_only_when_the_organizer_asks(arena: tuple[Path, str], tmp_path: Path) -> None:
    db, _ = arena
    code, out, _ = durak("export", str(db))
    assert code == 0 and "saw " not in out and out.count('"stderr":null') == 2
    code, out, _ = durak("export", str(db), "--stderr")
    records = [msgspec.json.decode(line, type=ResultRecord) for line in out.splitlines()]  # with their deals
    assert code == 0 and len(records) == 2
    for record in records:
        assert record.stderr is not None and record.deck is not None and len(record.deck.split()) == 36
        alice, bob = (record.players.index(name) for name in ("alice", "bob"))
        assert SAW.match(record.stderr[alice][0].text.splitlines()[0])
        assert "crashing on purpose" in stderr_text(record.stderr[bob])
    (tmp_path / "with_stderr.jsonl").write_text(out)  # still a results file the leaderboard reads
    code, out, err = durak("leaderboard", str(tmp_path / "with_stderr.jsonl"))
    assert code == 0, err


def test_a_bots_stderr_never_reaches_another_bot(tmp_path: Path) -> None:
    """The crash reason quotes the offender's stderr: the other bot is told only the verdict."""
    log = tmp_path / "b.jsonl"
    code, _, err = durak("play", f"a={shell('crash', after=2)}", f"b={shell('play', log=log)}", "--seed", "3",
                         "--games", "2", "--sandbox", "none")  # trusted: it writes its log beside the test
    assert code == 0, err
    received = log.read_text()
    assert '"verdict":"crash"' in received and "crashing on purpose" not in received


# -- check-bot -------------------------------------------------------------------------------------------


def test_check_bot_covers_every_variant_and_both_decks_and_says_what_it_played() -> None:
    code, out, err = durak("check-bot", shell("play"), "--move-time", "2")
    assert code == 0, err
    assert "played: 1 game(s) in each seat of a 2-player table against the sample random bot" in out
    for variant in ("podkidnoy", "perevodnoy", "chase", "fools_fool"):
        for deck in (36, 52):
            assert re.search(rf"^ok   {variant:<11} {deck} cards  2 games, move median", out, re.M), out


def test_check_bot_takes_variant_deck_and_rule_options() -> None:
    code, out, err = durak("check-bot", shell("play"), "--variant", "chase", "--deck", "52", "--set",
                           "allow_transfer=true", "--players", "3")
    assert code == 0, err
    checks = [line for line in out.splitlines() if line.startswith(("ok", "FAIL"))]
    assert checks == [line for line in checks if line.startswith("ok   chase       52 cards  3 games")]
    assert len(checks) == 1 and "allow_transfer=true)" in checks[0]
    code, out, err = durak("check-bot", shell("play"), "--set", "transfer_after_beat=false")  # perevodnoy only
    assert code == 0 and {line.split()[1] for line in out.splitlines() if line.startswith("ok")} == {"perevodnoy"}
    code, _, err = durak("check-bot", shell("play"), "--deck", "40")
    assert code == 3 and err.startswith("durak: error: option 'deck'")


# -- the command line ------------------------------------------------------------------------------------


def test_version_names_the_referee_and_protocol() -> None:
    code, out, _ = durak("--version")
    assert code == 0
    assert re.fullmatch(r"durak-referee \S+, protocol 2, engine (compiled|pure), Python 3\.\d+\.\d+\n", out)


def test_debug_is_accepted_after_the_command_and_shows_the_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quiet = subprocess.run([sys.executable, "-m", "referee", "rules", "nosuch"], capture_output=True, text=True,
                           env=env, cwd=ROOT)
    loud = subprocess.run([sys.executable, "-m", "referee", "rules", "nosuch", "--debug"], capture_output=True,
                          text=True, env=env, cwd=ROOT)
    assert quiet.returncode == 3 and quiet.stderr == ("durak: error: unknown variant 'nosuch': expected one of "
                                                      "podkidnoy, perevodnoy, chase, fools_fool\n")
    assert loud.returncode != 0 and "Traceback" in loud.stderr and "RulesError" in loud.stderr


def test_the_protocol_quick_start_works_as_written(tmp_path: Path) -> None:
    """PROTOCOL.md 1: its bot saved where it says, its commands run as they stand, from a copy of the repository
    root (whose `.venv/bin/durak` is this interpreter's `durak`; nothing activated)."""
    text = (ROOT / "protocol" / "PROTOCOL.md").read_text().split("## 2. Framing")[0]
    bot = re.search(r"```python\n(.*?)```", text, re.S)
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert bot and len(blocks) == 2 and "Save it as\n`mybot/my_bot.py`" in text
    (tmp_path / "mybot").mkdir(mode=0o755)
    (tmp_path / "mybot" / "my_bot.py").write_text(bot.group(1))
    shutil.copytree(ROOT / "sample_bots" / "python", tmp_path / "sample_bots" / "python")
    lines = [line for block in blocks for line in block.splitlines()]
    assert all(line.startswith(".venv/bin/durak ") for line in lines), lines
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "durak").symlink_to(Path(sys.executable).parent / "durak")
    for line in lines:
        run = subprocess.run(line, shell=True, cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, (line, run.stdout[-2000:], run.stderr)
        if "check-bot" in line:
            assert run.stdout.rstrip().endswith("PASS"), (line, run.stdout)
