"""The ``durak`` command line: thin commands over the library, errors turned into exit codes."""

from referee.cli.app import app, main

__all__ = ["app", "main"]
