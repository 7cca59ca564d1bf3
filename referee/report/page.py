"""HTML pages that work offline: the template, the inlined assets and the data, embedded once and safely.

Data goes into ``<script type="application/json">`` elements, whose text the page parses with
``JSON.parse``: :func:`script_json` escapes ``<``, ``>`` and ``&`` (so no ``</script>`` or comment can end
the element) and U+2028/U+2029. Nothing a bot wrote ever becomes markup: the scripts set it as text.
Files are written atomically (a temporary file beside the target, then a rename), mode 600.
"""

from __future__ import annotations

import html
import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from referee import __version__
from referee.results.narrate import PHRASES

#: What JSON text must not hold inside a ``<script>`` element (a tag's start or end, an entity), or a JavaScript
#: string before ES2019 (the line and paragraph separators), each as its JSON escape: the same value.
_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


class PageWriteError(OSError):
    """A page (or its data folder) that cannot be written."""


def script_json(value: Any) -> str:
    """``value`` as JSON text that is safe inside a ``<script type="application/json">`` element."""
    text = msgspec.json.encode(value).decode()
    for character, escape in _ESCAPES.items():  # a replace per character, in C: a replay's 66 KB in 12 us, not 92
        if character in text:
            text = text.replace(character, escape)
    return text


def asset(name: str) -> str:
    """A file of ``referee/report/assets`` or ``referee/report/vendor`` (``vendor/...``), as text."""
    return resources.files("referee.report").joinpath(*name.split("/")).read_text(encoding="utf-8")


def page(title: str, body: str, data: dict[str, str], scripts: list[str]) -> str:
    """A whole HTML document.

    Args:
        body: trusted markup (the template's own, never data).
        data: element id -> JSON text (from :func:`script_json`).
        scripts: asset names inlined in order.
    """
    head = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="durak-referee {html.escape(__version__)}">',
    ]
    head += [f"<title>{html.escape(title)}</title>", f"<style>{asset('assets/style.css')}</style>", "</head>"]
    parts = [*head, "<body>", body]
    parts += [f'<script type="application/json" id="{html.escape(key)}">{text}</script>' for key, text in data.items()]
    parts += [f"<script>{_inline_script(asset(name))}</script>" for name in scripts]
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _inline_script(code: str) -> str:
    """A script's text inside ``<script>``: only ``</script`` could end it early (none of ours holds one)."""
    if "</script" in code.lower():
        raise ValueError("an inlined script holds '</script'")
    return code


def write_private(path: str | Path, text: str | bytes) -> None:
    """Write ``path`` atomically (readers see the old file or the new one, never half), mode 600."""
    target = Path(path)
    data = text.encode() if isinstance(text, str) else text
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.chmod(tmp, 0o600)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise PageWriteError(f"cannot write {str(target)!r}: {exc.strerror}") from None


#: The narration's words (:data:`referee.results.narrate.PHRASES`), which the replay viewer reads from the element
#: ``narration`` of its page to tell the events as ``durak replay`` tells them, their cards drawn.
NARRATION_JSON = script_json(PHRASES)
NARRATION = f'<script type="application/json" id="narration">{NARRATION_JSON}</script>'

#: The replay viewer's markup, for inside a page's ``<main>`` (the web's game.html has its own layout around it).
VIEWER_BODY = f"""<h1 id="page-title">Durak replay</h1>
<div id="game-picker" class="filters" hidden><label>game <select id="game-select"></select></label></div>
<section><div id="viewer"></div></section>
<p class="legend">Step with the buttons or the arrow keys, Home and End jump, space plays.
The address's <code>#step=N</code> (and <code>game=N</code>) links to a step.</p>
{NARRATION}"""


def viewer_page(games: list[dict[str, Any]], title: str | None = None) -> str:
    """A page with the replay viewer over ``games`` (from :func:`referee.report.game_data.game_data`), titled
    with the first one's title unless told otherwise."""
    shown = title if title is not None else games[0]["title"] if games else "Durak replay"
    return page(shown, f"<main>\n{VIEWER_BODY}\n</main>", {"games-data": script_json(games)},
                ["assets/cards.js", "assets/viewer.js", "assets/viewer_page.js"])
