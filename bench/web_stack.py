"""The web bench's servers, each in a process of its own (bench/bench_web.py starts them):

    python bench/web_stack.py arena DB --port P [--workers N]
    python bench/web_stack.py bare PAGES --port P [--workers N]

``arena``: ``durak serve DB --host 127.0.0.1 --port P --trusted-proxy 127.0.0.1 --workers N``, run as the CLI runs
it. ``bare``: the bare stack, a minimal Litestar app (:func:`bare_app`) that answers each route of
bench/web_load.py's mix with the bytes and media type the arena gave for one URL of that route (``PAGES``: a JSON
file of :func:`save_pages`), whatever the URL's bot, game or page, under uvicorn exactly as ``durak serve`` runs
it: the same ``uvicorn.Config`` (``uvicorn_options()``: the header-bound protocol, keep-alive and concurrency
bounds; no proxy headers, no server header, log level info, the same graceful shutdown), the same socket
(:func:`referee.web.privileges.bind`), the same workers (``uvicorn.supervisors.Multiprocess`` past one), each
worker's garbage collector set as a ``durak serve`` worker's (:func:`referee.web.serving.settle_collector`).

With ``DURAK_BENCH_UVICORN=plain`` in the environment, either server runs on uvicorn's plain stack instead of the
best installed: ``loop="asyncio"`` (not uvloop) and h11 (``HeaderBoundH11Protocol``, durak serve's h11 protocol,
not httptools), by every ``uvicorn.Config`` this process makes (its workers inherit the config).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # after the arena's checkout (PYTHONPATH): bench.* only

from litestar import Litestar, Request, Response, get  # noqa: E402

from bench.web_load import HOST, route_of  # noqa: E402

#: The environment switch: ``plain`` runs uvicorn with the asyncio loop and h11.
UVICORN_ENV = "DURAK_BENCH_UVICORN"
#: The bare stack's pages file, for its worker processes (uvicorn's factory reads it).
PAGES_ENV = "DURAK_BENCH_PAGES"
#: The bare stack's paths: the arena's routes of the mix (a route's query picks its page).
BARE_PATHS = ["/", "/api/board", "/bots/{name:str}", "/api/bots/{name:str}", "/games/{number:int}",
              "/api/games/{number:int}", "/games", "/api/games"]


def save_pages(pages: dict[str, tuple[str, str, bytes]], path: Path) -> None:
    """``pages``: route -> (the URL asked, its media type, its bytes), as a JSON file."""
    path.write_text(json.dumps({route: {"url": url, "media_type": kind, "body": base64.b64encode(body).decode()}
                                for route, (url, kind, body) in pages.items()}))


def load_pages(path: Path) -> dict[str, tuple[str, bytes]]:
    """route -> (media type, bytes) of a file of :func:`save_pages`."""
    return {route: (page["media_type"], base64.b64decode(page["body"]))
            for route, page in json.loads(path.read_text()).items()}


def bare_app(pages: dict[str, tuple[str, bytes]]) -> Litestar:
    """The bare stack: one async handler on the arena's paths; a URL's route of the mix (by its path and query)
    picks the bytes and media type, 404 if none (Litestar adds the charset of a text type itself)."""
    answers = {route: (kind.removesuffix("; charset=utf-8") if kind.startswith("text/") else kind, body)
               for route, (kind, body) in pages.items()}

    @get(BARE_PATHS, include_in_schema=False)
    async def page(request: Request[Any, Any, Any]) -> Response[bytes]:
        query = request.scope["query_string"].decode()
        route = route_of(request.scope["path"] + (f"?{query}" if query else ""))
        if route is None or route not in answers:
            return Response(b"not found", status_code=404, media_type="text/plain")
        kind, body = answers[route]
        return Response(body, media_type=kind)

    return Litestar(route_handlers=[page], openapi_config=None, debug=False)


def bare_from_environment() -> Litestar:
    """The bare stack of a worker process (uvicorn's factory), its garbage collector set as a ``durak serve``
    worker's."""
    from referee.web.serving import settle_collector

    app = bare_app(load_pages(Path(os.environ[PAGES_ENV])))
    settle_collector()
    return app


def plain_uvicorn() -> None:
    """Every ``uvicorn.Config`` made from now on: the asyncio loop and h11 (durak serve's h11 protocol)."""
    import uvicorn

    from referee.web.serving import HeaderBoundH11Protocol

    made = uvicorn.Config.__init__

    def plain(self: uvicorn.Config, *args: Any, **options: Any) -> None:
        made(self, *args, **{**options, "loop": "asyncio", "http": HeaderBoundH11Protocol})

    uvicorn.Config.__init__ = plain  # type: ignore[method-assign]


def serve_arena(db: Path, port: int, workers: int) -> None:
    """``durak serve`` as its CLI runs it."""
    from referee.cli import main as durak

    sys.argv = ["durak", "serve", str(db), "--host", HOST, "--port", str(port), "--trusted-proxy", HOST,
                "--workers", str(workers)]
    durak()


def serve_bare(pages: Path, port: int, workers: int) -> None:
    """The bare stack as ``durak serve`` runs the arena (referee/cli/serve.py's ``_serve``)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from referee.cli.serve import SHUTDOWN_GRACE_SECONDS
    from referee.web.privileges import bind
    from referee.web.serving import uvicorn_options

    sock = bind(HOST, port)
    os.environ[PAGES_ENV] = str(pages.resolve())
    config = uvicorn.Config("bench.web_stack:bare_from_environment", factory=True, workers=workers,
                            proxy_headers=False, server_header=False, log_level="info",
                            timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS, **uvicorn_options())
    if workers > 1:
        Multiprocess(config, sockets=[sock]).run()
    else:
        uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("stack", choices=["arena", "bare"])
    parser.add_argument("source", type=Path, help="arena: the league database; bare: the pages file")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    if os.environ.get(UVICORN_ENV) == "plain":
        plain_uvicorn()
    if args.stack == "arena":
        serve_arena(args.source, args.port, args.workers)
    else:
        serve_bare(args.source, args.port, args.workers)


if __name__ == "__main__":
    main()
