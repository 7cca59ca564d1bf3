"""The ``durak`` typer app, its global options (``--debug``, ``--version``) and the console entry point.

The commands register themselves on :data:`app` from their modules (``referee/cli/__init__.py`` imports them).
"""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

from protocol.messages import PROTOCOL_VERSION
from referee import __version__
from referee.cli.errors import show_tracebacks, tracebacks_shown
from referee.cli.exitcodes import ExitCode
from referee.engine import engine_build
from referee.text import visible

app = typer.Typer(
    name="durak",
    help="Referee for Durak card-game bots: rules, games between bot programs, tournaments and ratings.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


def version_text() -> str:
    """``durak-referee 0.1.0, protocol 2, engine compiled, Python 3.11.2``: what a bug report needs."""
    return (f"durak-referee {__version__}, protocol {PROTOCOL_VERSION}, engine {engine_build()}, "
            f"Python {'.'.join(map(str, sys.version_info[:3]))}")


@app.callback()
def _options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors (before or after the command)."
                                        )] = False,
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print the referee's version and protocol, and exit.")] = False,
) -> None:
    if debug:
        show_tracebacks()



class _VisibleFormatter(logging.Formatter):
    """Warnings may quote a bot's words or paths: shown with control characters escaped."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record))


def main() -> None:
    """Console entry point (``durak`` and ``python -m referee``)."""
    handler = logging.StreamHandler()
    handler.setFormatter(_VisibleFormatter("durak: warning: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    if not sys.platform.startswith("linux"):
        typer.echo("durak: note: the referee targets Linux (rlimits, signals, bubblewrap); "
                   "bot games may not work here.", err=True)
    args = sys.argv[1:]
    cut = args.index("--") if "--" in args else len(args)
    if "--debug" in args[:cut]:  # accepted after the command too: `durak play ... --debug`
        show_tracebacks()
        args = [arg for index, arg in enumerate(args) if arg != "--debug" or index > cut]
    try:
        app(args=args, prog_name="durak")
    except Exception as exc:
        if tracebacks_shown():
            raise
        typer.echo(visible(f"durak: internal error: {type(exc).__name__}: {exc} (rerun with --debug)"), err=True)
        sys.exit(int(ExitCode.INTERNAL))
