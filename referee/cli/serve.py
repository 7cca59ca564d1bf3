"""``durak serve DB``: the web front of a league's database (pages and a JSON API), started as root and serving as
an unprivileged user (referee/web/privileges.py), with uvicorn on a socket bound before root is dropped."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Annotated

import msgspec
import typer

from referee.cli.app import app
from referee.cli.errors import UsageError, reported_errors
from referee.cli.paths import check_league_database

WEB_EXTRA = ("litestar", "uvicorn", "jinja2")
#: How long a stopping server waits for answers in flight: a card table's event stream lasts minutes, and uvicorn
#: would wait for it; past this it is cut (the browser reconnects to the next server).
SHUTDOWN_GRACE_SECONDS = 3


@app.command()
def serve(  # noqa: PLR0913 (a typer command: a parameter per option)
    db: Annotated[str, typer.Argument(help="A league's database (durak league run keeps it).")],
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port to listen on.")] = 8000,
    user: Annotated[str, typer.Option("--user", help="Started as root: the user to serve as (its primary group "
                                                     "gets the database).")] = "nobody",
    public: Annotated[bool, typer.Option("--public", help="Allow a --host other than loopback (put TLS in front: "
                                                          "docs/WEB.md).")] = False,
    workers: Annotated[int, typer.Option("--workers", min=1, max=64, help="uvicorn worker processes (rate "
                                                                         "limits are per worker).")] = 1,
    trusted_proxy: Annotated[list[str] | None, typer.Option(
        "--trusted-proxy", help="A reverse proxy's address whose X-Forwarded-For/-Proto are believed (repeat).")
    ] = None,
) -> None:
    """Serve the league's board, bots, games, replays, authors' pages and uploads on the web, and a JSON API."""
    with reported_errors():
        missing = [name for name in WEB_EXTRA if importlib.util.find_spec(name) is None]
        if missing:
            raise UsageError(f"durak serve needs the web extra ({', '.join(missing)} missing): "
                             "pip install 'durak-referee[web]'")
        _serve(Path(db), host, port, user, public, workers, frozenset(trusted_proxy or ()))


def _serve(db: Path, host: str, port: int, user: str, public: bool, workers: int,  # noqa: PLR0913
           trusted: frozenset[str]) -> None:
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from referee.league.config import load_league
    from referee.results.web_queries import WebStore
    from referee.web.app import DB_ENV, SETTINGS_ENV
    from referee.web.privileges import PrivilegeError, WebUser, bind, drop_root, is_loopback, share_database
    from referee.web.serving import uvicorn_options
    from referee.web.settings import WebSettings

    if not is_loopback(host) and not public:
        raise UsageError(f"--host {host} is reachable from other machines: add --public (and TLS in front)")
    check_league_database(db, write=False)
    with WebStore(db) as store:  # one-line refusals (no league, another schema) before anything else
        league = store.the_league()
        store.web_key()  # drawn now, by the owner, if it never was
    league_config = load_league(league.config_path, text=league.config, with_bots=False).config
    sock = bind(host, port)
    if os.geteuid() == 0:
        web_user = WebUser.named(user)
        share_database(db, web_user)
        drop_root(web_user)
        if not os.access(db, os.R_OK | os.W_OK):
            raise PrivilegeError(f"user {user} cannot read and write {str(db)!r}: every folder above it must be "
                                 "searchable by that user (docs/WEB.md)")
    os.environ[DB_ENV] = str(db.resolve())
    settings = WebSettings(trusted_proxies=trusted).for_league(league_config)
    os.environ[SETTINGS_ENV] = msgspec.json.encode(settings).decode()
    # The proxy headers are read by the app, for trusted proxies only; uvicorn's own reading is off.
    # Idle and slow connections bounded (referee/web/serving.py, docs/WEB.md).
    config = uvicorn.Config("referee.web.app:app_from_environment", factory=True, workers=workers,
                            proxy_headers=False, server_header=False, log_level="info",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS, **uvicorn_options())
    typer.echo(f"durak serve: http://{host}:{port}/ ({workers} worker(s), uid {os.getuid()})", err=True)
    if workers > 1:
        Multiprocess(config, sockets=[sock]).run()
    else:
        uvicorn.Server(config).run(sockets=[sock])

