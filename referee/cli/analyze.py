"""``durak analyze``: a seat's decisions in a stored game judged from that seat's information only."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from concurrent.futures import CancelledError, Executor, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated

import msgspec
import typer
from tabulate import tabulate

from referee import __version__
from referee.analysis.analyze import GameAnalysis, Judgement, analyze_game
from referee.analysis.batch import BatchAnalysis, GameJob, accuracy, analyze_games, referee_version, sample
from referee.analysis.evaluate import DEFAULT_PLAYOUTS, Settings
from referee.analysis.exact import EXACT_CARDS
from referee.analysis.marks import THRESHOLDS
from referee.analysis.observe import seat_named
from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.options import HtmlOption, TournamentOption
from referee.cli.paths import check_writable
from referee.cli.results import load_game, reading
from referee.report.analysis_marks import with_marks
from referee.report.game_data import NO_TRACES, game_data, stored_traces
from referee.report.page import viewer_page, write_private
from referee.results.sources import ResultsReadError
from referee.text import visible
from referee.tournament.executors.dask import ClusterUnavailable, connect
from referee.tournament.worker import WorkerFailed

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

With --bot BOT instead (a database, no GAME): a sample of --games of BOT's
games (drawn by --seed), analyzed --jobs at a time or on the Dask cluster at
--cluster ADDRESS (the same result either way), with a progress line on
stderr; per variant BOT's mean loss per decision with its 95% interval (games
as clusters) and marks, then its worst decisions across the games, each with
the durak replay and durak analyze --html commands that show it.
""")
def analyze(  # noqa: PLR0913 (a typer command: a parameter per option)
    source: Annotated[str, typer.Argument(help="A results database, or a `durak play --log` file.")],
    game: Annotated[str | None, typer.Argument(
        help="The game, as durak replay takes it: its id or number (in a log file, its place in the file). May be "
             "left out for a log file of one game.")] = None,
    seat: Annotated[str | None, typer.Option("--seat", help="The bot whose decisions are judged.")] = None,
    bot: Annotated[str | None, typer.Option(
        "--bot", help="Instead of one game: a sample of this bot's games of the database, its accuracy per "
                      "variant and its worst decisions across them.")] = None,
    games: Annotated[int, typer.Option("--games", min=1, help="With --bot: games in the sample.")] = 20,
    jobs: Annotated[int | None, typer.Option(
        "--jobs", "-j", min=1, help="With --bot: games analyzed in parallel on this machine (default 1).")] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", help="With --bot: analyze the games on a Dask cluster instead, its scheduler's address "
                          "(tcp://HOST:8786, tls://...), reached as durak tournament --cluster reaches it "
                          "(docs/SCALING.md); every worker needs this durak-referee version.")] = None,
    playouts: PlayoutsOption = DEFAULT_PLAYOUTS,
    seed: SeedOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the analysis as JSON.")] = False,
    tournament_id: TournamentOption = None,
    html: HtmlOption = None,
) -> None:
    if bot is not None:
        _batch(source, game, bot, BatchOptions(games, jobs, cluster, Settings(playouts=playouts, seed=seed),
                                               as_json, tournament_id, seat is not None or html is not None))
        return
    with reported_errors():
        if jobs is not None or cluster is not None:
            raise UsageError("--jobs and --cluster are for a sample of games (--bot BOT), not one game")
        if seat is None:
            raise UsageError("name the bot whose decisions to judge: --seat BOT (or --bot BOT for a sample of its "
                             "games)")
        if html is not None:
            check_writable(html, "the page")
        data, stored = load_game(source, game, tournament_id)
        analysis = analyze_game(data, seat_named(data, seat), Settings(playouts=playouts, seed=seed))
        if html is not None:
            traces = stored_traces(stored) if stored is not None else NO_TRACES
            shown = game_data(data, traces, seat=analysis.seat, game_id=stored.number if stored else None)
            write_private(html, viewer_page([with_marks(shown, analysis)]))
    if as_json:
        typer.echo(msgspec.json.encode(analysis).decode())
        return
    for line in table_lines(analysis):
        typer.echo(line)
    if html is not None:
        typer.echo(f"wrote {html}")


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


@dataclass(frozen=True)
class BatchOptions:
    games: int
    jobs: int | None
    cluster: str | None
    settings: Settings
    as_json: bool
    tournament_id: int | None
    single_game_options: bool  # --seat or --html, which a sample does not take


def _batch(source: str, game: str | None, bot: str, options: BatchOptions) -> None:
    """``durak analyze DB --bot BOT``: a sample of the bot's games, its accuracy and worst decisions."""
    with reported_errors():
        if game is not None or options.single_game_options:
            raise UsageError("--bot analyzes a sample of games: it takes no GAME, --seat or --html")
        if options.jobs is not None and options.cluster is not None:
            raise UsageError("--jobs is for a run on this machine: with --cluster, the Dask workers' threads (dask "
                             "worker --nthreads) set how many games run at once")
        with reading(source) as store:
            chosen = store.tournament(options.tournament_id).id
            numbers = [row.number for row in store.games(chosen) if bot in row.record.players]
            if not numbers:
                raise ResultsReadError(f"bot {bot!r} played no game of tournament {chosen} of {source!r}")
            jobs = []
            for number in sample(numbers, options.games, options.settings.seed):
                data = store.replay(str(number), chosen).replay
                jobs.append(GameJob(number, data, seat_named(data, bot)))
        with _pool(options) as pool:
            analyzed = analyze_games(jobs, options.settings, pool, _progress)
        result = accuracy(bot, analyzed, options.settings)
    if options.as_json:
        typer.echo(msgspec.json.encode(result).decode())
        return
    replays = {job.number: job for job in jobs}
    for line in batch_lines(result, source, len(numbers), replays):
        typer.echo(line)


@contextmanager
def _pool(options: BatchOptions) -> Iterator[Executor | None]:
    """Where the sample's games are analyzed: the Dask cluster, ``--jobs`` processes, or (None) this process."""
    if options.cluster is not None:
        with dask_pool(options.cluster) as pool:
            yield pool
    elif options.jobs is not None and options.jobs > 1:
        with ProcessPoolExecutor(max_workers=options.jobs) as pool:
            yield pool
    else:
        yield None


@contextmanager
def dask_pool(address: str) -> Iterator[Executor]:
    """An executor on the Dask cluster at ``address``, reached by ``durak tournament --cluster``'s own
    :func:`~referee.tournament.executors.dask.connect` (Dask's TLS settings; the same one-line errors, exit code 8)
    once every worker runs this durak-referee version; what is left in flight is cancelled and the client closed on
    the way out.

    :raises ClusterUnavailable: Dask is not installed, the scheduler cannot be reached or has no worker, or a
        worker runs another version (or cannot run the check).
    :raises WorkerFailed: Dask lost a game's task (its workers died, the scheduler went away)."""
    client = connect(address)
    try:
        try:
            versions: dict[str, str] = client.run(referee_version)
        except Exception as exc:  # Dask's own, or a worker without durak-referee: its import fails there
            raise ClusterUnavailable(f"the check on the Dask workers at {address} failed: {type(exc).__name__}: "
                                     f"{exc}") from None
        for worker, version in sorted(versions.items()):
            if version != __version__:
                raise ClusterUnavailable(f"Dask worker {worker} runs durak-referee {version}, this machine "
                                         f"{__version__}: install the same version on every worker")
        pool = client.get_executor(pure=False)
        try:
            yield pool
        except (CancelledError, OSError) as exc:  # a task cancelled by Dask, the scheduler's connection lost
            raise WorkerFailed(f"a cluster task failed: {type(exc).__name__}: {exc}") from None
        except Exception as exc:
            if type(exc).__module__.partition(".")[0] != "distributed":  # the analysis' own: as without Dask
                raise
            raise WorkerFailed(f"a cluster task failed: {type(exc).__name__}: {exc}") from None
        finally:
            pool.shutdown(wait=False)
    finally:
        client.close()


def _progress(done: int, total: int) -> None:
    typer.echo(f"\ranalyzed {done}/{total} games", err=True, nl=done == total)


def batch_lines(result: BatchAnalysis, source: str, played: int, replays: dict[int, GameJob]) -> list[str]:
    """The sample's accuracy per variant, then its worst decisions, each with the commands that show it."""
    lines = [f"{visible(result.bot)}: {result.games} of its {played} games analyzed, {result.playouts} worlds per "
             f"decision, seed {result.seed}; loss in the chance of not being the fool"]
    rows = [[v.variant, v.games, v.decisions, f"{v.mean_loss:.3f} +- {v.interval:.3f}",
             " ".join(f"{count}" for count in v.marks.values())] for v in result.variants]
    lines.append(tabulate(rows, headers=["variant", "games", "decisions", "mean loss (95%)",
                                         "/".join(mark for mark, _ in THRESHOLDS)], disable_numparse=True))
    if result.worst:
        lines.append("worst decisions:")
    quoted, name = shlex.quote(source), shlex.quote(result.bot)
    for worst in result.worst:
        job = replays[worst.game]
        step = _viewer_step(job, worst.step)
        loss = "exact" if worst.method == "exact" else f"+- {worst.error:.2f}"
        lines.append(f"  game {worst.game} step {step}: {worst.taken} (best {worst.best}), loss {worst.loss:.2f} "
                     f"{loss}{' ' + worst.mark if worst.mark else ''}: durak replay {quoted} {worst.game} --seat "
                     f"{name}; durak analyze {quoted} {worst.game} --seat {name} --html FILE, FILE#step={step}")
    return lines


def _viewer_step(job: GameJob, step: int) -> int:
    """The replay viewer's step of the decision at ``step`` (the game's decision index) of ``job``'s seat."""
    data = game_data(job.replay, seat=job.seat)
    decided = [index for index, s in enumerate(data["steps"]) if "w" in s]
    return decided[step - 1]
