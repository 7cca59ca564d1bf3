"""``durak analyze`` on small stored games: the table, the JSON, the viewer's marks, a database's game, and the
one-line errors of a bad game or seat."""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clirun import invoke, run
from test_report import embedded

from protocol.cards import CARD_NAMES
from protocol.rules import Rules
from referee.analysis.analyze import pooled_interval
from referee.analysis.batch import sample
from referee.analysis.evaluate import DEFAULT_PLAYOUTS
from referee.analysis.exact import EXACT_CARDS, NODE_BUDGET
from referee.analysis.marks import THRESHOLDS, mark_of
from referee.cli.exitcodes import ExitCode
from referee.engine import SeededRng, new_game
from referee.report.game_data import game_data
from referee.results.record import GameRecord
from referee.results.replay import replay_lines

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bots" / "python"


def logged_game(folder: Path, seed: int = 4, variant: str = "podkidnoy") -> tuple[Path, list[int]]:
    """A 2-player game of random legal actions written as a ``durak play --log`` file; its decisions per seat."""
    rules = Rules(variant=variant)  # type: ignore[arg-type]
    game = new_game(rules, 2, SeededRng(seed))
    rng = random.Random(seed)
    decided = [0, 0]
    while game.result is None:
        assert game.to_move is not None
        decided[game.to_move] += 1
        game.apply(rng.choice(game.legal_actions()))
    assert game.result is not None
    record = GameRecord(game=f"g{seed}", deal=f"{seed}:0", names=["ann", "bob"], rules=rules, dealer=game.dealer,
                        deck=[CARD_NAMES[c] for c in game.deck], result=game.result, actions=game.actions,
                        verdicts=[], times=[None, None], events=list(game.events))
    path = folder / f"g{seed}.log"
    path.write_bytes(replay_lines(record))
    return path, decided


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="durak-test-analysis-"))
    yield path
    shutil.rmtree(path)


def analysis(*args: str) -> Any:
    return json.loads(run("analyze", *args, "--json"))


def test_the_json_values_every_legal_action_and_judges_each_decision_of_the_seat(folder: Path) -> None:
    log, decided = logged_game(folder)
    found = analysis(str(log), "--seat", "bob", "--playouts", "6")
    assert (found["bot"], found["seat"], found["players"], found["playouts"]) == ("bob", 1, 2, 6)
    assert found["value"].startswith("the chance of not being the fool")
    assert found["thresholds"] == dict(THRESHOLDS)
    decisions = found["decisions"]
    assert len(decisions) == decided[1]
    assert [d["number"] for d in decisions] == list(range(1, decided[1] + 1))
    for d in decisions:
        if d["method"] == "forced":
            assert d["values"] == [] and d["loss"] == 0 and d["mark"] is None
            continue
        values = {v["action"]: v for v in d["values"]}
        top = max(v["value"] for v in values.values())
        assert d["taken"] in values and values[d["best"]]["value"] == top
        assert d["loss"] == pytest.approx(top - values[d["taken"]]["value"])
        assert d["mark"] == mark_of(d["loss"], d["error"])
        assert (d["error"] == 0) == (d["method"] == "exact") or d["loss"] == 0
    chosen = [d for d in decisions if d["method"] != "forced"]
    summary = found["summary"]
    assert summary["choices"] == len(chosen) and summary["decisions"] == len(decisions)
    assert summary["mean_loss"] == pytest.approx(sum(d["loss"] for d in chosen) / len(chosen))
    assert sum(summary["marks"].values()) == sum(1 for d in chosen if d["mark"])
    assert summary["exact"] == sum(1 for d in chosen if d["method"] == "exact") > 0  # 2 players: the end is exact


def test_the_same_seed_gives_the_same_analysis_and_another_seed_other_samples(folder: Path) -> None:
    log, _ = logged_game(folder)
    once = analysis(str(log), "--seat", "ann", "--playouts", "4", "--seed", "3")
    assert analysis(str(log), "--seat", "ann", "--playouts", "4", "--seed", "3") == once
    other = analysis(str(log), "--seat", "ann", "--playouts", "4", "--seed", "4")
    estimated = [d["values"] for d in once["decisions"] if d["method"] == "estimate"]
    assert estimated != [d["values"] for d in other["decisions"] if d["method"] == "estimate"]


def test_the_table_has_a_row_per_decision_and_the_summary(folder: Path) -> None:
    log, decided = logged_game(folder)
    lines = run("analyze", str(log), "g4", "--seat", "ann", "--playouts", "4").splitlines()
    assert lines[0] == "game g4 (podkidnoy, 2 players): ann at seat 0, 4 worlds per decision, seed 0"
    assert lines[2].split() == ["step", "#", "method", "taken", "best", "loss", "mark", "values"]
    rows = lines[4:4 + decided[0]]
    assert [row.split()[1] for row in rows] == [str(n) for n in range(1, decided[0] + 1)]
    assert all(row.split()[2] in ("estimate", "exact", "forced") for row in rows)
    assert lines[4 + decided[0]].startswith(f"{decided[0]} decisions, ")
    assert "mean loss" in lines[4 + decided[0]]
    assert lines[5 + decided[0]] == "thresholds: blunder >= 0.20, mistake >= 0.10, inaccuracy >= 0.05 " \
                                    "(and above the error bar)"


def test_the_viewer_shows_the_seat_its_marks_on_its_own_steps(folder: Path) -> None:
    log, decided = logged_game(folder)
    page = folder / "marked.html"
    told = run("analyze", str(log), "--seat", "bob", "--playouts", "4", "--html", str(page))
    assert told.endswith(f"wrote {page}\n")
    (game,) = embedded(page, "games-data")
    assert game["seat"] == 1
    judged = [step for step in game["steps"] if "j" in step]
    assert len(judged) == decided[1] and all(step["w"] == 1 for step in judged)
    found = analysis(str(log), "--seat", "bob", "--playouts", "4")
    assert [s["j"]["m"] for s in judged] == [d["mark"] for d in found["decisions"]]
    assert [s["a"] for s in judged] == [d["taken"] for d in found["decisions"]]
    for step in judged:
        del step["j"]
    assert game == json.loads(json.dumps(game_data(log.read_bytes(), seat=1)))  # bob's own view, marks added only


@pytest.mark.parametrize(("args", "code", "says"), [
    (["--seat", "nobody"], ExitCode.CONFIG, "durak: error: bot 'nobody' did not play this game (players: ann, bob)"),
    (["7", "--seat", "ann"], ExitCode.CONFIG, "durak: error: no game '7' in "),
    ([], ExitCode.USAGE, "durak: error: name the bot whose decisions to judge: --seat BOT"),
    (["--seat", "ann", "--playouts", "1"], ExitCode.USAGE, "Invalid value for '--playouts'"),
])
def test_a_bad_game_or_seat_is_one_line_and_an_exit_code(folder: Path, args: list[str], code: int, says: str
                                                           ) -> None:
    log, _ = logged_game(folder)
    ran = invoke("analyze", str(log), *args)
    assert ran.code == code
    assert says in ran.err
    if says.startswith("durak: error:"):
        assert ran.err.count("\n") == 1 and ran.out == ""


def test_a_missing_source_is_one_line(folder: Path) -> None:
    ran = invoke("analyze", str(folder / "none.db"), "1", "--seat", "ann")
    assert ran.code == ExitCode.DATABASE
    assert ran.err.startswith("durak: error: no database or log file at ") and ran.err.count("\n") == 1


@pytest.fixture(scope="module")
def stored() -> Iterator[Path]:
    """A database of 2 games between the sample random and heuristic bots (one deal, both seatings)."""
    folder = Path(tempfile.mkdtemp(prefix="durak-test-analysis-db-"))
    folder.chmod(0o755)
    shutil.copytree(SAMPLES, folder / "samples")
    config = folder / "t.toml"
    config.write_text('name = "pair"\ndeals = 1\nsandbox = "process"\n'
                      '[[bots]]\nname = "r"\ncommand = "{python} random_bot.py 1"\ndir = "samples"\n'
                      '[[bots]]\nname = "h"\ncommand = "{python} heuristic_bot.py"\ndir = "samples"\n')
    run("tournament", str(config), "--db", str(folder / "t.db"), "--jobs", "1")
    yield folder / "t.db"
    shutil.rmtree(folder)


def test_a_database_game_is_analyzed_by_its_number_as_durak_replay_names_it(stored: Path) -> None:
    found = analysis(str(stored), "2", "--seat", "h", "--playouts", "3")
    assert found["bot"] == "h" and found["decisions"]
    ran = invoke("analyze", str(stored), "--seat", "h")
    assert ran.code == ExitCode.USAGE and "name the game" in ran.err


def test_a_bots_sample_gives_its_accuracy_per_variant_and_its_worst_decisions(stored: Path) -> None:
    found = json.loads(invoke("analyze", str(stored), "--bot", "r", "--games", "1", "--playouts", "3", "--json").out)
    assert (found["bot"], found["games"], found["playouts"]) == ("r", 1, 3)
    (variant,) = found["variants"]
    (number,) = {w["game"] for w in found["worst"]}
    single = analysis(str(stored), str(number), "--seat", "r", "--playouts", "3")
    assert variant["variant"] == "podkidnoy" and variant["games"] == 1
    assert variant["decisions"] == single["summary"]["choices"]
    assert variant["mean_loss"] == pytest.approx(single["summary"]["mean_loss"])
    assert variant["marks"] == single["summary"]["marks"]
    judged = {d["step"]: d for d in single["decisions"]}
    assert all(judged[w["step"]]["taken"] == w["taken"] and judged[w["step"]]["loss"] == w["loss"]
               for w in found["worst"])
    both = invoke("analyze", str(stored), "--bot", "r", "--playouts", "3", "--jobs", "2", "--json").out
    assert json.loads(both)["games"] == 2
    assert both == invoke("analyze", str(stored), "--bot", "r", "--playouts", "3", "--json").out  # in process
    told = invoke("analyze", str(stored), "--bot", "r", "--playouts", "3")
    assert told.code == 0 and told.err.endswith("analyzed 2/2 games\n")
    assert told.out.splitlines()[0] == "r: 2 of its 2 games analyzed, 3 worlds per decision, seed 0; loss in the " \
                                       "chance of not being the fool"
    assert f"durak replay {stored} {number} --seat r;" in told.out


@pytest.mark.parametrize(("args", "code", "says"), [
    (["1", "--bot", "r"], ExitCode.USAGE, "--bot analyzes a sample of games: it takes no GAME, --seat or --html"),
    (["--bot", "nobody"], ExitCode.CONFIG, "bot 'nobody' played no game of tournament 1 of "),
])
def test_a_bad_sample_is_one_line(stored: Path, args: list[str], code: int, says: str) -> None:
    ran = invoke("analyze", str(stored), *args)
    assert ran.code == code and ran.err.startswith("durak: error: ") and says in ran.err
    assert ran.err.count("\n") == 1


def test_the_readme_states_the_thresholds_and_bounds_the_code_holds() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    section = readme[readme.index("## Post-game analysis"):readme.index("## Isolation")]
    rows = {line.split("|")[1].strip(): float(line.split("|")[2]) for line in section.splitlines()
            if line.strip().startswith("| ") and line.split("|")[1].strip() in dict(THRESHOLDS)}
    assert rows == dict(THRESHOLDS)
    assert f"(default {DEFAULT_PLAYOUTS})" in section
    assert f"endgame of up to {EXACT_CARDS} cards" in section
    assert f"budget of {NODE_BUDGET:,} positions" in section


def test_the_pooled_interval_treats_games_as_clusters() -> None:
    """Mean loss per decision over games of (total loss, decisions): games alike have no spread; two unlike games
    give the ratio estimator's 95% half-width, 1.96 * sqrt(n / (n - 1) * sum((L_g - m * D_g)^2)) / sum(D_g)."""
    assert pooled_interval([(1.0, 10), (2.0, 20), (0.5, 5)]) == (pytest.approx(0.1), pytest.approx(0.0))
    mean, half = pooled_interval([(1.0, 10), (3.0, 10)])
    assert mean == pytest.approx(0.2)
    assert half == pytest.approx(1.96 * (2 * ((1.0 - 2.0) ** 2 + (3.0 - 2.0) ** 2)) ** 0.5 / 20)
    assert pooled_interval([(0.0, 0)]) == (0.0, 0.0)
    assert sample([1, 2, 3], 5, 0) == [1, 2, 3]
    drawn = sample(list(range(1, 101)), 10, 7)
    assert drawn == sorted(drawn) and len(set(drawn)) == 10 and drawn == sample(list(range(1, 101)), 10, 7)
