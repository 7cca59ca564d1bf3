"""The one way tests run the ``durak`` CLI in-process: an uncaught exception (which a user would see as a
traceback) fails the test, whatever the exit code the test expects. The click command is built from the
Typer app once: building it takes ~0.1 s, three quarters of a quick command's run."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import click
import typer
from click.testing import CliRunner

from referee.cli import app


@functools.cache
def command() -> click.Command:
    """``durak`` as click runs it (what typer.testing.CliRunner builds anew for every invocation)."""
    return typer.main.get_command(app)


@dataclass(frozen=True)
class Ran:
    """What a command did: its exit code, its stdout and stderr, and both as they interleaved."""

    code: int
    out: str
    err: str
    output: str


def invoke(*args: str, color: bool = False) -> Ran:
    """``durak ARGS``. ``color=True`` keeps ANSI sequences (click strips them when the output is no terminal)."""
    result = CliRunner().invoke(command(), list(args), color=color)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"durak {' '.join(args)} raised {result.exception!r}:\n{result.output}") \
            from result.exception
    return Ran(result.exit_code, result.stdout, result.stderr, result.output)


def run(*args: str, code: int = 0, color: bool = False) -> str:
    """``durak ARGS``, which must exit with ``code``; its output (stdout and stderr)."""
    ran = invoke(*args, color=color)
    assert ran.code == code, ran.output
    return ran.output
