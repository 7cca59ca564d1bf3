"""``durak league author``: the arena's authors (``add`` prints a token once, ``revoke`` ends it and its sessions,
``list``). The organizer is an author with ``--admin``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from tabulate import tabulate

from referee.cli.errors import UsageError, reported_errors
from referee.cli.league import DbArg, league_app, league_store
from referee.league.authors import new_author
from referee.results.arena_store import ArenaStore
from referee.text import visible

author_app = typer.Typer(name="author", help="The web arena's authors and their tokens (durak serve).",
                         no_args_is_help=True)
league_app.add_typer(author_app)

AuthorArg = Annotated[str, typer.Argument(help="The author's name (1-64 letters, digits and _ . + -).")]


@author_app.command("add")
def add_command(db: DbArg, name: AuthorArg,
                admin: Annotated[bool, typer.Option("--admin", help="The organizer: sees everything, may retire, "
                                                    "quarantine and reinstate bots.")] = False) -> None:
    """Add an author and print their token, once: it is kept only as a hash, so it cannot be shown again."""
    with reported_errors(), league_store(db) as store:
        _league(store, db)
        try:
            author, token = new_author(store, name, admin=admin)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        typer.echo(f"author {visible(author.name)}{' (admin)' if author.admin else ''}: their token follows, shown "
                   "this once; give it to them privately", err=True)
        typer.echo(token)


@author_app.command("revoke")
def revoke_command(db: DbArg, name: AuthorArg) -> None:
    """Revoke an author's token and end every session it opened (their bots play on; retire them apart)."""
    with reported_errors(), league_store(db) as store:
        _league(store, db)
        if store.author(name) is None:
            raise UsageError(f"no author {name!r} (durak league author list {db})")
        store.revoke_author(name)
        typer.echo(f"revoked {visible(name)}: the token and its sessions no longer work")


@author_app.command("list")
def list_command(db: DbArg) -> None:
    """Every author: admin or not, when added, revoked."""
    with reported_errors(), league_store(db, write=False) as store:
        rows = [[visible(a.name), "admin" if a.admin else "", a.created, a.revoked or ""] for a in store.authors()]
        typer.echo(tabulate(rows, headers=["author", "role", "added", "revoked"]) if rows else "no authors yet")


def _league(store: ArenaStore, db: Path) -> None:
    if store.league() is None:
        raise UsageError(f"{db} holds no league: durak league run CONFIG --db {db} makes one")
