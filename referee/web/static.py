"""/static: a fixed list of files (the web's own scripts and style, the report's viewer and style), served by name
from the installed package, so no path from a request ever reaches the file system."""

from __future__ import annotations

from importlib import resources

from litestar import Response, get
from litestar.exceptions import NotFoundException
from litestar.params import FromPath

#: name under /static -> (package, file, media type)
FILES: dict[str, tuple[str, str, str]] = {
    "style.css": ("referee.report", "assets/style.css", "text/css"),
    "web.css": ("referee.web", "static/web.css", "text/css"),
    "cards.js": ("referee.report", "assets/cards.js", "text/javascript"),
    "viewer.js": ("referee.report", "assets/viewer.js", "text/javascript"),
    "viewer_page.js": ("referee.report", "assets/viewer_page.js", "text/javascript"),
    "board.js": ("referee.web", "static/board.js", "text/javascript"),
    "table.js": ("referee.web", "static/table.js", "text/javascript"),
    "table_page.js": ("referee.web", "static/table_page.js", "text/javascript"),
}


def _read(package: str, name: FromPath[str]) -> bytes:
    return resources.files(package).joinpath(*name.split("/")).read_bytes()


@get("/static/{name:str}", include_in_schema=False, cache_control=None)
async def static_file(name: FromPath[str]) -> Response[bytes]:
    if name not in FILES:
        raise NotFoundException("Not Found")
    package, path, media_type = FILES[name]
    return Response(_read(package, path), media_type=f"{media_type}; charset=utf-8",
                    headers={"Cache-Control": "public, max-age=300"})


@get("/favicon.ico", include_in_schema=False, status_code=204)
async def favicon() -> None:
    """No icon (browsers ask for one on every site; a 404 would be noise in their consoles)."""
