"""Every address a page links to, in one home: each route's name and path template (as its handler declares them:
Litestar's ``name=``, for ``app.route_reverse``) and the builder that fills it, each value percent-encoded as one
path segment. Templates call these builders (the Jinja global ``urls``), answers put their results in the JSON, and
scripts take the addresses their page or its JSON gives them: nothing else spells a path.
``tests/test_web_board.py`` holds each one to the route the app serves under that name and path."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import quote, urlencode

_PARAMETER = re.compile(r"\{(\w+):\w+\}")


@functools.cache
def _parts(path: str) -> tuple[str, ...]:
    """A path template as its literal text and its parameters' names, alternating (text first)."""
    return tuple(_PARAMETER.split(path))


@dataclass(frozen=True)
class Route:
    """A route's name (Litestar's ``name=``, for ``app.route_reverse``) and its path template."""

    name: str
    path: str

    def __call__(self, **values: str | int) -> str:
        """The path with ``values`` in its parameters (each quoted whole: a ``/`` in a name stays in its segment).

        :raises KeyError: a parameter without a value."""
        parts = _parts(self.path)  # a page of 500 links fills the same few templates: split each once
        return "".join(part if i % 2 == 0 else quote(str(values[part]), safe="") for i, part in enumerate(parts))

    @property
    def parameters(self) -> list[str]:
        return _PARAMETER.findall(self.path)


BOARD = Route("page:board", "/")
BOARD_API = Route("api:board", "/api/board")
BOARD_LIVE_API = Route("api:board-live", "/api/board/live")
BOT = Route("page:bot", "/bots/{name:str}")
GAMES = Route("page:games", "/games")
GAME = Route("page:game", "/games/{number:int}")
AUTHOR = Route("page:author", "/authors/{name:str}")
CHALLENGES = Route("page:challenges", "/challenges")
CHALLENGE = Route("page:challenge", "/challenges/{challenge_id:int}")
CHALLENGE_GAME = Route("page:challenge-game", "/challenges/{challenge_id:int}/games/{number:int}")
ADMIN = Route("page:admin", "/admin")
ADMIN_FINALS = Route("page:admin-finals", "/admin/finals")
ADMIN_ACTION = Route("page:admin-action", "/admin/{action:str}")
UPLOAD = Route("page:upload", "/upload")
LOGIN = Route("page:login", "/login")
LOGOUT = Route("page:logout", "/logout")
TABLES = Route("page:tables", "/tables")
TABLE_REPLAY = Route("page:table-replay", "/tables/{table_id:int}/replay")
TABLE_ANALYSIS = Route("page:table-analysis", "/tables/{table_id:int}/analysis")
GAME_ANALYSES = Route("page:game-analyses", "/games/{number:int}/analyses")
GAME_API = Route("api:game", "/api/games/{number:int}")
TABLE_REPLAY_API = Route("api:table-replay", "/api/tables/{table_id:int}/replay")
UPLOAD_API = Route("api:upload", "/api/uploads/{upload_id:int}")
CHALLENGE_API = Route("api:challenge", "/api/challenges/{challenge_id:int}")
STATIC = Route("static", "/static/{name:str}")

#: The routes above, for the test that holds them to the app's.
ROUTES = (BOARD, BOARD_API, BOARD_LIVE_API, BOT, GAMES, GAME, AUTHOR, CHALLENGES, CHALLENGE, CHALLENGE_GAME, ADMIN,
          ADMIN_FINALS, ADMIN_ACTION, UPLOAD, LOGIN, LOGOUT, TABLES, TABLE_REPLAY, TABLE_ANALYSIS, GAME_ANALYSES,
          GAME_API, TABLE_REPLAY_API, UPLOAD_API, CHALLENGE_API, STATIC)


def board() -> str:
    return BOARD()


def bot(name: str) -> str:
    return BOT(name=name)


def author(name: str) -> str:
    return AUTHOR(name=name)


def game(number: int) -> str:
    return GAME(number=number)


def games(**query: str | int | None) -> str:
    """The games list, filtered by ``query`` (a value None: left out; the filter form sends empty ones)."""
    asked = {key: value for key, value in query.items() if value is not None}
    return GAMES() + (f"?{urlencode(asked)}" if asked else "")


def challenge(challenge_id: int) -> str:
    return CHALLENGE(challenge_id=challenge_id)


def challenge_game(challenge_id: int, number: int) -> str:
    return CHALLENGE_GAME(challenge_id=challenge_id, number=number)


def admin_action(action: str) -> str:
    return ADMIN_ACTION(action=action)


def static(name: str) -> str:
    return STATIC(name=name)
