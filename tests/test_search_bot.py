"""The search bot (sample_bots/python/search_bot.py): whole games through real pipes, replayed the same at fixed
playouts, answers by a short deadline, and runs under the default sandbox.

The pipe tests use the driver of tests/test_sample_bots_offline.py (it checks every line a bot writes).
"""

from __future__ import annotations

import random
import shutil
import sys
import time
from pathlib import Path

import pytest
from clirun import invoke

from protocol.events import event_for_seat
from protocol.messages import GameStart, Reply, Request
from protocol.rules import VARIANTS, Rules
from referee.engine import SeededRng, new_game
from referee.tournament.config import load_config
from tests.test_sample_bots_offline import SAMPLES, play, running

sys.path.insert(0, str(SAMPLES / "python"))
import search_bot

SCRIPT = SAMPLES / "python" / "search_bot.py"


def search_argv(*options: str) -> list[str]:
    return [sys.executable, str(SCRIPT), *options]


@pytest.mark.parametrize("variant", VARIANTS)
def test_plays_whole_games_of_every_variant(variant: str, tmp_path: Path) -> None:
    """2 players with 36 cards and 4 with 52 (and 6 with 36 in perevodnoy, where transfers go round the table),
    the same processes throughout; the driver checks that every reply names its request and one of its legal
    actions."""
    tables = [(2, 36), (4, 52), *([(6, 36)] if variant == "perevodnoy" else [])]
    with running(search_argv("--playouts", "6"), max(players for players, _ in tables), tmp_path) as bots:
        for players, deck in tables:
            result, actions, _ = play(bots[:players], Rules(variant=variant, deck=deck), seed=players,
                                      game_id=f"g{players}")
            assert result.end in ("fool", "draw") and actions
        for bot in bots:
            bot.shut_down()


def test_fixed_playouts_replay_the_same_moves(tmp_path: Path) -> None:
    """At fixed playouts its moves follow from the game's seed alone: the same game plays the same way in new
    processes and again in the same ones after another game."""
    runs = []
    for attempt in range(2):
        with running(search_argv("--playouts", "6"), 2, tmp_path / str(attempt)) as bots:
            runs.append(play(bots, Rules(variant="perevodnoy"), seed=3, game_id="g")[1])
            play(bots, Rules(variant="perevodnoy"), seed=4, game_id="h")
            runs.append(play(bots, Rules(variant="perevodnoy"), seed=3, game_id="i")[1])
    assert runs[0] == runs[1] == runs[2] == runs[3]


def first_decision(rules: Rules, players: int, seed: int) -> tuple[GameStart, Request]:
    """The game message and first request of the first seat with a choice to make (more than one legal action)."""
    game = new_game(rules, players, SeededRng(seed))
    while len(game.legal_actions()) < 2:
        game.apply(game.legal_actions()[0])
    seat = game.to_move
    assert seat is not None
    start = GameStart(game="g", seat=seat, players=players, names=[f"s{i}" for i in range(players)], rules=rules,
                      dealer=game.dealer, view=game.view(seat), seed=seed)
    events = [event_for_seat(event, seat) for event in game.events]
    request = Request(id=5, game="g", view=game.view(seat), legal=[str(a) for a in game.legal_actions()],
                      time_ms=400, events=events)
    return start, request


@pytest.mark.parametrize("options", [(), ("--playouts", "100000000")], ids=["timed", "playouts-capped"])
def test_a_short_deadline_is_kept(options: tuple[str, ...], tmp_path: Path) -> None:
    """Thinking to the deadline, or with far more playouts than the time allows, it answers a 400 ms request
    by its deadline. The bound asserted is loose (3 s), so that a loaded machine cannot fail it; a bot that
    ignored the deadline would think for minutes."""
    start, request = first_decision(Rules(variant="podkidnoy"), 2, seed=11)
    with running(search_argv(*options), 1, tmp_path) as (bot,):
        bot.send(start)
        began = time.monotonic()
        bot.send(request)
        reply = bot.receive()
        took = time.monotonic() - began
        assert isinstance(reply, Reply) and reply.id == request.id and reply.action in request.legal
        assert took < 3.0, f"answered a {request.time_ms} ms request after {took:.1f} s"
        bot.shut_down()


def test_stop_time_keeps_the_margin_back() -> None:
    """It stops thinking DEFAULT_MARGIN_MS plus MARGIN_SHARE of the request's time before its deadline."""
    player = search_bot.Player(playouts=None, margin_ms=search_bot.DEFAULT_MARGIN_MS)
    for time_ms in (300, 1000, 3000):
        margin = search_bot.DEFAULT_MARGIN_MS + search_bot.MARGIN_SHARE * time_ms
        assert player.stop_time(time_ms, arrived=50.0) == pytest.approx(50.0 + (time_ms - margin) / 1000)


def test_search_runs_its_playouts_and_none_past_the_stop_time() -> None:
    """``search`` runs exactly ``playouts`` iterations when time allows, none once the stop time has passed
    (it still answers a legal action), and answers a legal action either way."""
    rules = Rules(variant="chase")
    start, request = first_decision(rules, 3, seed=2)
    for playouts, stop_at, expected in ((30, time.monotonic() + 600, 30), (30, time.monotonic() - 1, 0)):
        action, done = search_bot.search(rules, start.dealer, request.view, request.events, request.legal,
                                         random.Random(1), playouts, stop_at)
        assert done == expected and action in request.legal


def test_it_passes_check_bot_under_the_default_sandbox(tmp_path: Path) -> None:
    """`durak check-bot` with its default sandbox (bwrap): the bot sees only its folder, the interpreter,
    ``protocol`` and ``referee.engine``, and that is all it needs."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    shutil.copy(SCRIPT, folder / SCRIPT.name)
    (folder / SCRIPT.name).chmod(0o644)
    tmp_path.chmod(0o755)
    ran = invoke("check-bot", f"{sys.executable} {folder / SCRIPT.name} --playouts 10",
                 "--variant", "perevodnoy", "--variant", "fools_fool", "--deck", "36")
    assert ran.code == 0 and ran.out.rstrip().endswith("PASS"), ran.output


def test_the_strong_field_config_runs_the_search_bot_at_fixed_playouts() -> None:
    """sample_bots/strong.toml loads, and its search bot plays a fixed number of playouts (a reproducible field)."""
    loaded = load_config(SAMPLES / "strong.toml")
    assert [bot.name for bot in loaded.bots] == ["search", "heuristic", "random", "js"]
    search = loaded.bots[0]
    assert search.argv == [sys.executable, "search_bot.py", "--playouts", "200"]
    assert Path(search.dir) == SAMPLES / "python"
