"""The one way tests run the ``durak`` CLI in-process: an uncaught exception (which a user would see as a
traceback) fails the test, whatever the exit code the test expects."""

from __future__ import annotations

from dataclasses import dataclass

from typer.testing import CliRunner

from referee.cli import app


@dataclass(frozen=True)
class Ran:
    """What a command did: its exit code, its stdout and stderr, and both as they interleaved."""

    code: int
    out: str
    err: str
    output: str


def invoke(*args: str, color: bool = False) -> Ran:
    """``durak ARGS``. ``color=True`` keeps ANSI sequences (click strips them when the output is no terminal)."""
    result = CliRunner().invoke(app, list(args), color=color)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"durak {' '.join(args)} raised {result.exception!r}:\n{result.output}") \
            from result.exception
    return Ran(result.exit_code, result.stdout, result.stderr, result.output)


def run(*args: str, code: int = 0, color: bool = False) -> str:
    """``durak ARGS``, which must exit with ``code``; its output (stdout and stderr)."""
    ran = invoke(*args, color=color)
    assert ran.code == code, ran.output
    return ran.output
