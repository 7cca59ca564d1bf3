"""Commands that read stored results: ``leaderboard``, ``export``, ``tournaments``, ``games``, ``seed``,
``replay`` and ``report``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal

import msgspec
import typer
from tabulate import tabulate

from protocol.records import ResultRecord
from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.options import HtmlOption, PrivateOption, TournamentOption
from referee.cli.paths import check_database, check_writable
from referee.games.play import ResultsWriteError
from referee.league.private import LeaguePrivate
from referee.rating.bradley_terry import rate
from referee.rating.leaderboard import LEGEND, render
from referee.report.game_data import NO_TRACES, game_data, stored_traces
from referee.report.page import viewer_page, write_private
from referee.report.tournament_page import PageOptions, ReportWriter
from referee.results.league_store import LeagueStore
from referee.results.replay import ReplayError, parse_replay, replays_of_log, seat_of, tell
from referee.results.reproduce import export_record, play_again, tournament_bot_seeds
from referee.results.sources import ResultsReadError, load_outcomes, load_stats
from referee.results.store import StoredReplay, StoreError, is_database
from referee.text import json_line, visible
from referee.tournament.secret import write_seed_file


@app.command(help=f"""Rate the bots of a database or results file: Bradley-Terry Elo with error bars.

--stats adds per-bot statistics (fool rate by seat, move time median/p99/max,
verdict counts). In CSV and JSON every share is a percentage 0-100 (keys
ending _pct), every time milliseconds (_ms), booleans true/false; a CSV holds
one table (the rows, or --h2h pairs, or --stats). The columns:

\b
{LEGEND}
""")
def leaderboard(  # noqa: PLR0913 (a typer command: a parameter per option)
    source: Annotated[str, typer.Argument(help="A results database, or a JSON-lines file of result records.")],
    mode: Annotated[Literal["fool", "order"], typer.Option(
        "--mode", help="fool: everyone beats the fool; order: finishing order.")] = "fool",
    output_format: Annotated[Literal["table", "csv", "json"], typer.Option("--format", help="table, csv or json.")
                             ] = "table",
    anchor: Annotated[str | None, typer.Option(
        "--anchor", help="BOT=ELO fixes one bot, a number the pool mean; default pool mean 1500.")] = None,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Error bars from N deal resamples.")] = 0,
    h2h: Annotated[bool, typer.Option("--h2h", help="Also the head-to-head table (JSON: an h2h list; CSV: only "
                                                    "it).")] = False,
    stats: Annotated[bool, typer.Option("--stats", help="Also per-bot statistics (JSON: a stats list; CSV: only "
                                                        "them).")] = False,
    tournament_id: TournamentOption = None,
) -> None:
    with reported_errors():
        if output_format == "csv" and h2h and stats:
            raise UsageError("--format csv writes one table: ask for --h2h or --stats, not both")
        check_database(source, what="database or results file")
        outcomes = load_outcomes(source, tournament_id)
        bot_rows = load_stats(source, tournament_id) if stats else None
        rating = rate(outcomes, mode, anchor=anchor, bootstrap=bootstrap)
        typer.echo(render(outcomes, output_format, rating=rating, h2h=h2h, stats=bot_rows))


@contextmanager
def reading(db: str) -> Iterator[LeagueStore]:
    """A results database (a tournament's or a league's) opened read-only; what cannot be read is a
    ResultsReadError, one that is not there a PathRefused."""
    check_database(db)
    if not is_database(db):
        raise ResultsReadError(f"{db!r} is not a results database")
    try:
        with LeagueStore(db, create=False) as store:
            yield store
    except StoreError as exc:
        raise ResultsReadError(str(exc)) from None


@app.command()
def export(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option("--output", "-o", help="Write to this file, not stdout.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's export: add each seat's stderr, by move, to its record (`stderr`). "
                         "Each bot's stderr is its author's: do not publish it.")] = False,
    tournament_id: TournamentOption = None,
) -> None:
    """Write the result records of a database's tournament as JSON lines (one game per line), each with its
    deal: the deck order (deck, as durak play --deal takes it), dealer, leader and bot_seeds. Every card of
    every game is in it: publish it only once the tournament is over."""
    with reported_errors(), reading(db) as store:
        if output is not None:
            check_writable(output, "the export")
        chosen = store.tournament(tournament_id).id
        lines = "".join(json_line(export_record(deal)) + "\n" for deal in store.deals(chosen, stderr=stderr)).encode()
        if output is None:
            sys.stdout.buffer.write(lines)
            sys.stdout.buffer.flush()
        else:
            try:
                Path(output).write_bytes(lines)
            except OSError as exc:
                raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def tournaments(db: Annotated[str, typer.Argument(help="A results database.")]) -> None:
    """List the tournaments of a database (--fresh starts a new one and keeps the old); * marks the active one,
    which every command reads unless given --tournament ID."""
    with reported_errors(), reading(db) as store:
        rows = [[f"{t.id}{' *' if t.active else ''}", visible(t.name), t.created, t.games, visible(t.config_path)]
                for t in store.tournaments()]
    typer.echo(tabulate(rows, headers=["id", "name", "created", "games", "config"], disable_numparse=True,
                        colalign=("right", "left", "left", "right", "left")))


@app.command()
def games(
    db: Annotated[str, typer.Argument(help="A results database.")],
    bot: Annotated[str | None, typer.Option("--bot", help="Only games this bot played.")] = None,
    verdict: Annotated[str | None, typer.Option(
        "--verdict", help="Only games with a verdict of this kind (timeout, crash, memory, illegal, protocol, "
                          "disqualified), or 'any'.")] = None,
    fool: Annotated[str | None, typer.Option("--fool", help="Only games this bot was a fool in.")] = None,
    output_format: Annotated[Literal["table", "json"], typer.Option("--format", help="table or json (lines).")
                             ] = "table",
    tournament_id: TournamentOption = None,
) -> None:
    """List a tournament's stored games: number (for durak replay DB NUMBER), game id, players by seat, fools,
    verdicts."""
    with reported_errors(), reading(db) as store:
        chosen = store.tournament(tournament_id)
        shown = [row for row in store.games(chosen.id) if _wanted(row.record, bot, verdict, fool)]
    if output_format == "json":
        for row in shown:
            typer.echo(json_line(msgspec.json.encode({"number": row.number, "tournament": chosen.id,
                                                      **msgspec.to_builtins(row.record)})))
        return
    cells = [[row.number, visible(row.record.game), " ".join(map(visible, row.record.players)),
              " ".join(map(visible, row.record.fools)) or "-", row.record.end,
              "; ".join(f"{visible(v.bot)} {v.kind}" for v in row.record.verdicts) or "-"] for row in shown]
    typer.echo(tabulate(cells, headers=["#", "game", "players", "fools", "end", "verdicts"], disable_numparse=True,
                        colalign=("right", "left", "left", "left", "left", "left")))
    typer.echo(f"{len(shown)} game(s) of tournament {chosen.id} '{visible(chosen.name)}'; "
               "durak replay DB # tells one")


def _wanted(record: ResultRecord, bot: str | None, verdict: str | None, fool: str | None) -> bool:
    if bot is not None and bot not in record.players:
        return False
    if fool is not None and fool not in record.fools:
        return False
    if verdict is not None:
        return any(verdict in ("any", v.kind) for v in record.verdicts)
    return True


@app.command()
def seed(
    db: Annotated[str, typer.Argument(help="A results database.")],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="Write it to this file (mode 600), for --seed-file, instead of printing it.")] = None,
    tournament_id: TournamentOption = None,
) -> None:
    """Print the seed of a database's tournament: every deck follows from it, so publish it only once the
    tournament is over (until then any bot that learns it knows every hand)."""
    with reported_errors():
        if output is not None:
            check_writable(output, "the seed file")
        with reading(db) as store:
            chosen = store.tournament(tournament_id)
            if chosen.kind == "league" and not store.finals(chosen):
                raise ResultsReadError(f"{db!r} holds league {chosen.name!r}, which can still run: its seed gives "
                                       "the decks of groups it has not played yet (durak league finals ends it)")
        if chosen.kind in ("league", "finals"):  # kept in the league's private folder, out of the web's reach
            chosen = LeaguePrivate(Path(db)).with_seed(chosen)
        if output is None:
            typer.echo(str(chosen.seed))
            return
        try:
            write_seed_file(output, chosen.seed)
        except OSError as exc:
            raise ResultsWriteError(f"cannot write {output!r}: {exc.strerror}") from None


@app.command()
def replay(
    source: Annotated[str, typer.Argument(help="A results database, or a `durak play --log` file.")],
    game: Annotated[str | None, typer.Argument(
        help="The game: its id (as in durak export) or its number (as durak games lists them; in a log file, "
             "its place in the file). May be left out for a log file of one game.")] = None,
    seat: Annotated[str | None, typer.Option(
        "--seat", help="Tell only what this bot saw, with what it wrote to stderr beside its moves.")] = None,
    stderr: Annotated[bool, typer.Option(
        "--stderr", help="The organizer's view: every seat's stderr beside its moves.")] = False,
    tournament_id: TournamentOption = None,
    html: HtmlOption = None,
) -> None:
    """Tell a stored or logged game as a person would read it, every hand shown; --seat BOT shows that bot's view
    and its own stderr (no other bot's), --stderr every bot's (a database keeps it; a log file does not).

    All-seeing, the second line is the game's deal as the durak play options that play it again, with the
    same bots in the same seats (--deal, --dealer, --leader where the deal alone would not name who moves
    first, --set for rules that differ from the variant's defaults, --bot-seeds); a seat's view never has it.
    A number stays its game's: a superseded game's number tells that game, from the history.

    With --html FILE, write the replay viewer instead: with --seat it holds only what that bot saw and its own
    stderr, never another hand; all-seeing, bots' stderr only with --stderr.
    """
    with reported_errors():
        if html is not None:
            check_writable(html, "the page")
        data, stored = load_game(source, game, tournament_id)
        header, _, _ = parse_replay(data)
        seat_index = None if seat is None else seat_of(header.names, seat)
        if html is not None:
            traces = stored_traces(stored) if stored is not None else NO_TRACES
            number = stored.number if stored is not None else None
            shown = [game_data(data, traces, seat=seat_index, private=stderr, game_id=number)]
            write_private(html, viewer_page(shown))
            typer.echo(f"wrote {html}")
            return
        told = tell(data, seat_index, stored.stderr if stored is not None and (seat is not None or stderr) else None)
        if stored is not None and stored.superseded:
            told.insert(1, f"superseded (history, not rated): {visible(stored.superseded)}")
        if seat_index is None:  # the deal is every card: never in a seat's view
            told.insert(1, _deal_line(data, stored))
        for line in told:
            typer.echo(line)


def load_game(source: str, game: str | None, tournament_id: int | None) -> tuple[bytes, StoredReplay | None]:
    """One game of a database or a ``durak play --log`` file, as ``durak replay`` names it: its replay, and what a
    database keeps beside it (None for a log file). ``durak analyze`` reads its games this way too."""
    check_database(source, what="database or log file")
    if is_database(source):
        if game is None:
            raise UsageError("name the game: its id or number (durak games DB lists them)")
        with reading(source) as store:
            stored = store.replay(game, store.tournament(tournament_id).id)
        return stored.replay, stored
    if tournament_id is not None:
        raise UsageError("--tournament chooses a tournament of a database; a log file has none")
    return _logged_game(source, game), None


def _deal_line(data: bytes, stored: StoredReplay | None) -> str:
    """The ``durak play`` options that deal the game again, with its bots' seeds (a stored game's from its slot,
    where its replay predates keeping them)."""
    header, events, _ = parse_replay(data)
    fallback = tournament_bot_seeds(stored.seeds, len(header.names)) if stored is not None and stored.seeds else []
    return play_again(header, events, fallback).line(header.names)


def _logged_game(path: str, game: str | None) -> bytes:
    """One game of a ``durak play --log`` file, by id or 1-based number; the only one if ``game`` is None."""
    try:
        replays = replays_of_log(Path(path).read_bytes())
    except OSError as exc:
        raise ResultsReadError(f"cannot read {path!r}: {exc.strerror}") from None
    if not replays:
        raise ReplayError(f"{path!r} holds no game")
    if game is None:
        if len(replays) > 1:
            raise UsageError(f"{path!r} holds {len(replays)} games: name one by number (1-{len(replays)}) or id")
        return replays[0]
    for data in replays:
        if parse_replay(data)[0].game == game:
            return data
    if game.isdigit() and 1 <= int(game) <= len(replays):
        return replays[int(game) - 1]
    raise ReplayError(f"no game {game!r} in {path!r} (it holds {len(replays)})")


@app.command()
def report(
    db: Annotated[str, typer.Argument(help="A results database.")],
    tournament_id: TournamentOption = None,
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="The HTML file (default: beside DB, its name + .html). Past 500 games the "
                               "games' replays go in FILE.files/ beside it.")] = None,
    mode: Annotated[Literal["fool", "order"], typer.Option(
        "--mode", help="Rating mode: fool or order (as durak leaderboard --mode).")] = "fool",
    private: PrivateOption = False,
) -> None:
    """Write a tournament's report: one HTML page that works offline (file://), mode 600.

    The header (rules, time controls, referee version, bot file hashes; never the seed), the leaderboard
    as a chart and a table with head to head and per-bot statistics (the rows of durak leaderboard --format
    json --h2h --stats), the move-time distribution, how the ratings settled, and the games as durak games
    numbers them (#game=N in the page is durak replay DB N), each opening in the replay viewer with every
    move's time. A deal's games appear once all its seat rotations are stored.
    """
    with reported_errors():
        with reading(db) as store:
            chosen = store.tournament(tournament_id).id
        target = Path(output) if output is not None else Path(db).with_name(Path(db).stem + ".html")
        check_writable(target, "the report")
        shown = PageOptions(tournament=chosen, mode=mode, private=private)
        writer = ReportWriter(db, target, shown, jobs=os.cpu_count() or 1)
        files = writer.write()
        beside = "" if files.inline else f", and {files.game_bytes:,} bytes of games in {writer.folder}/"
        typer.echo(f"wrote {target}: {files.games} games, {files.page_bytes:,} bytes{beside}")

