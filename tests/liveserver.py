"""An ASGI app under a real uvicorn in a thread on 127.0.0.1, for tests that need a real connection (a browser, a
stream read as it comes: the Litestar test client hands over a response only once it has ended), and a wrapper
that records the paths the app was asked for."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import uvicorn


@contextmanager
def served(app: Any, **options: Any) -> Iterator[str]:
    """The app served on a free port of 127.0.0.1 until the block ends (``options``: more of uvicorn's Config);
    its base URL."""
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # As durak serve stops: answers still open after 3 s (a stream whose client left unseen) are cut, so that the
    # block ends, and what they hold is given back, however slow the machine.
    options = {"timeout_graceful_shutdown": 3, **options}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


class Recorded:
    """The app, with the path of every HTTP request it was asked (``paths``)."""

    def __init__(self, app: Any) -> None:
        self.app, self.paths = app, list[str]()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.app(scope, receive, send)
