"""The library's expected errors as the command line reports them: one table from error class to exit code,
looked up along the error's MRO, and the one place that turns an error into a line on stderr."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from protocol.rules import RulesError
from referee.bots.errors import BotLaunchError, LauncherError
from referee.bots.sandbox.isolation import SandboxUnavailable
from referee.cli.exitcodes import ExitCode
from referee.cli.paths import PathRefused
from referee.engine import InvalidDealError
from referee.games.botargs import BotArgError
from referee.games.checkbot import CheckSetupError
from referee.games.play import ResultsWriteError
from referee.rating.bradley_terry import AnchorError
from referee.report.page import PageWriteError
from referee.report.tournament_data import ReportError
from referee.results.replay import ReplayError
from referee.results.sources import ResultsReadError
from referee.results.store import StoreError
from referee.text import visible
from referee.tournament.botfiles import BotFilesError
from referee.tournament.config import ConfigError
from referee.tournament.errors import Interrupted, PreflightError, RunOptionsError, TournamentError
from referee.tournament.executors.dask import ClusterUnavailable
from referee.tournament.secret import SeedFileError
from referee.tournament.sprt_run import SprtError
from referee.tournament.worker import WorkerFailed
from referee.web.privileges import PrivilegeError


class UsageError(ValueError):
    """Command-line arguments that do not make sense together or are malformed (exit code 2)."""


class SubmitError(RuntimeError):
    """``durak submit``: the web arena refused the request or could not be reached (exit code 13)."""


#: The exit code of each expected error. An error is reported by the entry of its own class or, failing that,
#: of the nearest base along its MRO (PreflightError's own entry wins over TournamentError's). An error with no
#: entry here or on its bases is a bug: "internal error" (tests/test_exit_codes.py walks every error class).
ERROR_CODES: dict[type[BaseException], ExitCode] = {
    UsageError: ExitCode.USAGE,
    PrivilegeError: ExitCode.USAGE,  # durak serve: an unknown --user, a port it cannot listen on
    BotArgError: ExitCode.USAGE,
    AnchorError: ExitCode.USAGE,
    SprtError: ExitCode.USAGE,
    RunOptionsError: ExitCode.USAGE,
    RulesError: ExitCode.CONFIG,
    InvalidDealError: ExitCode.CONFIG,
    ResultsReadError: ExitCode.CONFIG,
    ReplayError: ExitCode.CONFIG,
    ConfigError: ExitCode.CONFIG,
    BotFilesError: ExitCode.CONFIG,
    SeedFileError: ExitCode.CONFIG,
    TournamentError: ExitCode.CONFIG,
    ReportError: ExitCode.CONFIG,
    PreflightError: ExitCode.BOT_PROGRAM,
    BotLaunchError: ExitCode.BOT_PROGRAM,
    LauncherError: ExitCode.BOT_PROGRAM,
    CheckSetupError: ExitCode.BOT_PROGRAM,
    SandboxUnavailable: ExitCode.SANDBOX,
    ResultsWriteError: ExitCode.DATABASE,
    StoreError: ExitCode.DATABASE,
    PageWriteError: ExitCode.DATABASE,
    PathRefused: ExitCode.DATABASE,
    ClusterUnavailable: ExitCode.CLUSTER,
    SubmitError: ExitCode.ARENA,
    WorkerFailed: ExitCode.WORKER_FAILED,
}


def exit_code_of(error: BaseException) -> ExitCode | None:
    """The exit code of ``error``'s class or of its nearest base in :data:`ERROR_CODES`; None for a bug."""
    for cls in type(error).__mro__:
        code = ERROR_CODES.get(cls)
        if code is not None:
            return code
    return None


class _Tracebacks:
    """Whether ``--debug`` asked for tracebacks; set once per run, before or after the command's name."""

    shown = False


def show_tracebacks() -> None:
    """``--debug``: let errors propagate with their traceback instead of one line."""
    _Tracebacks.shown = True


def tracebacks_shown() -> bool:
    return _Tracebacks.shown


def fail(message: str, code: ExitCode) -> typer.Exit:
    """Print ``message`` as the command's one error line; the exit to raise with ``code``."""
    typer.echo(f"durak: error: {visible(message)}", err=True)  # it may quote a bot's words
    return typer.Exit(int(code))


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn the library's expected errors into one line and the exit code :data:`ERROR_CODES` gives them;
    a stop by signal exits 128 + its number. Anything else propagates (main reports it as internal)."""
    try:
        yield
    except Interrupted as exc:
        code = ExitCode.TERMINATED if exc.signal_number == signal.SIGTERM else ExitCode.INTERRUPTED
        raise fail(str(exc), code) from None
    except KeyboardInterrupt:
        raise fail("interrupted", ExitCode.INTERRUPTED) from None
    except Exception as exc:
        reported = exit_code_of(exc)
        if reported is None or tracebacks_shown():
            raise
        raise fail(str(exc), reported) from None
