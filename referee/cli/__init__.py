"""The ``durak`` command line: thin commands over the library, errors turned into exit codes.

Importing a command module registers its commands on :data:`app`: ``durak --help`` lists them in this order.
"""

# isort: off
from referee.cli import games  # noqa: F401  rules, selfplay, play, check-bot
from referee.cli import tournament  # noqa: F401  tournament, sprt
from referee.cli import results  # noqa: F401  leaderboard, export, tournaments, games, seed, replay, report
from referee.cli import analyze  # noqa: F401  analyze
from referee.cli import league  # noqa: F401  league run, add, update, retire, reinstate, status, finals
from referee.cli import league_authors  # noqa: F401  league author add, revoke, list
from referee.cli import schema  # noqa: F401  schema
from referee.cli import serve  # noqa: F401  serve
from referee.cli import submit  # noqa: F401  submit
# isort: on
from referee.cli.app import app, main
from referee.cli.schema import schema_text

__all__ = ["app", "main", "schema_text"]
