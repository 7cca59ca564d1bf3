"""``durak analyze``: a seat's decisions in a stored game judged from that seat's information only."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import typer
from tabulate import tabulate

from referee.analysis.analyze import GameAnalysis, Judgement, analyze_game
from referee.analysis.evaluate import DEFAULT_PLAYOUTS, Settings
from referee.analysis.exact import EXACT_CARDS
from referee.analysis.marks import THRESHOLDS
from referee.analysis.observe import seat_named
from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.options import HtmlOption, TournamentOption
from referee.cli.paths import check_writable
from referee.cli.results import load_game
from referee.report.game_data import NO_TRACES, SeatTraces, game_data
from referee.report.page import viewer_page, write_private
from referee.text import visible

PlayoutsOption = Annotated[int, typer.Option(
    "--playouts", min=2, help="Worlds sampled per decision; every legal action is played out once in each.")]
SeedOption = Annotated[int, typer.Option("--seed", min=0, help="Seed for the sampled worlds and playouts.")]


@app.command(help=f"""Judge every decision of one seat of a stored game from that seat's information only.

For each decision of BOT: every legal action's value (the chance of not
being the fool, at every table size; a draw counts 1/2), the action taken,
the best one and the loss with its 95% error bar. Values are estimated over
--playouts worlds (the cards the seat could not see dealt at random,
consistent with all it saw) with every action played out in each; at 2
players once the stock is empty every card is known, and endgames of up to
{EXACT_CARDS} cards are solved exactly. Marks: {', '.join(f'{m} (loss >= {t:.2f})' for m, t in THRESHOLDS)},
each only when the loss is also above its error bar. --html writes the
replay viewer from BOT's seat with its marks; --json the analysis as data.
""")
def analyze(  # noqa: PLR0913 (a typer command: a parameter per option)
    source: Annotated[str, typer.Argument(help="A results database, or a `durak play --log` file.")],
    game: Annotated[str | None, typer.Argument(
        help="The game, as durak replay takes it: its id or number (in a log file, its place in the file). May be "
             "left out for a log file of one game.")] = None,
    seat: Annotated[str | None, typer.Option("--seat", help="The bot whose decisions are judged.")] = None,
    playouts: PlayoutsOption = DEFAULT_PLAYOUTS,
    seed: SeedOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the analysis as JSON.")] = False,
    tournament_id: TournamentOption = None,
    html: HtmlOption = None,
) -> None:
    with reported_errors():
        if seat is None:
            raise UsageError("name the bot whose decisions to judge: --seat BOT")
        if html is not None:
            check_writable(html, "the page")
        data, stored = load_game(source, game, tournament_id)
        analysis = analyze_game(data, seat_named(data, seat), Settings(playouts=playouts, seed=seed))
        if html is not None:
            traces = SeatTraces(stored.stderr, stored.record.strikes, stored.move_us) if stored is not None \
                else NO_TRACES
            shown = game_data(data, traces, seat=analysis.seat, game_id=stored.number if stored else None)
            write_private(html, viewer_page([with_marks(shown, analysis)]))
    if as_json:
        typer.echo(msgspec.json.encode(analysis).decode())
        return
    for line in table_lines(analysis):
        typer.echo(line)
    if html is not None:
        typer.echo(f"wrote {html}")


def with_marks(data: dict[str, Any], analysis: GameAnalysis) -> dict[str, Any]:
    """The viewer's data for the analyzed seat's view with each of its decisions judged: the step where the
    seat chose carries ``j`` (``m`` mark or null, ``l`` loss, ``e`` error bar, ``b`` best action, ``k`` method).
    The seat's n-th step is its n-th decision (a step starts with the action chosen in it)."""
    mine = [step for step in data["steps"] if step.get("w") == analysis.seat]
    for step, judged in zip(mine, analysis.decisions, strict=True):
        step["j"] = {"m": judged.mark, "l": round(judged.loss, 4), "e": round(judged.error, 4), "b": judged.best,
                     "k": judged.method}
    return data


def table_lines(analysis: GameAnalysis) -> list[str]:
    """The analysis for people: a row per decision (every legal action's value last), then the summary."""
    lines = [f"game {visible(analysis.game)} ({analysis.variant}, {analysis.players} players): "
             f"{visible(analysis.bot)} at seat {analysis.seat}, {analysis.playouts} worlds per decision, "
             f"seed {analysis.seed}",
             f"value: {analysis.value}; loss: the best action's value less the taken one's, +- its 95% error bar"]
    rows = [[str(j.step), str(j.number), j.method, j.taken, "" if j.best == j.taken else j.best, _loss(j),
             j.mark or "", ", ".join(f"{v.action} {v.value:.2f}" for v in j.values)] for j in analysis.decisions]
    lines.append(tabulate(rows, headers=["step", "#", "method", "taken", "best", "loss", "mark", "values"],
                          disable_numparse=True))
    lines += summary_lines(analysis)
    return lines


def summary_lines(analysis: GameAnalysis) -> list[str]:
    s = analysis.summary
    by_step = {j.step: j for j in analysis.decisions}
    marks = ", ".join(f"{mark}s {count}" for mark, count in s.marks.items()).replace("ys ", "ies ")
    lines = [f"{s.decisions} decisions, {s.choices} with a choice ({s.exact} solved exactly): mean loss "
             f"{s.mean_loss:.3f} +- {s.interval:.3f} per decision; {marks}",
             "thresholds: " + ", ".join(f"{m} >= {t:.2f}" for m, t in THRESHOLDS) + " (and above the error bar)"]
    if s.worst:
        lines.append("worst: " + "; ".join(f"step {step} {by_step[step].taken} (best {by_step[step].best}, "
                                           f"{_loss(by_step[step])})" for step in s.worst))
    return lines


def _loss(judged: Judgement) -> str:
    if judged.method == "forced":
        return "forced"
    if judged.best == judged.taken:
        return "best" + (" exact" if judged.method == "exact" else "")
    if judged.method == "exact":
        return f"{judged.loss:.2f} exact"
    return f"{judged.loss:.2f} +- {judged.error:.2f}"
