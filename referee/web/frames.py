"""A page drawn again and again with only a few values changing, drawn from a *frame*: its template rendered once
with a mark in each hole, and split at the marks, so that a page is a join of the frame's text and its values (as
the template would have written them), not a template's render.

A crowd's replays are nearly all different games, each page built once: its template's render (a layout of a few
dozen expressions around 96 KB of data) took 98 us of a replay's 460 under the bench's crowd, and the frame's join
takes a few. A frame checks itself when made, with values that every filter of the environment would change (a
quote, an ampersand, a control, a bidirectional mark): if the template does anything to a hole's value but the
environment's ``finalize`` and escape (a filter, a test, a second use under another filter), the join would differ
from the render, and the frame is not used: every page is rendered, as before.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

from jinja2 import Environment
from markupsafe import Markup, escape

from referee.web.visibility import ANONYMOUS

#: The probe a frame checks itself with: a text every step of the environment's output changes.
_PROBE = "<b title=\"x\">&'\x1b\u202e</b>"


class Frame:
    """The template ``name`` of ``env`` rendered with ``values``, its holes left open: ``text`` holes (entrant text,
    written as every ``{{ ... }}`` of the environment writes it) and ``markup`` holes (markup the code built, written
    as it is). ``shape(holes)`` makes the template's values from the holes' (the same values as ``values`` would be
    otherwise: it may put them inside an object, as ``game.title``)."""

    def __init__(self, env: Environment, name: str, *, text: tuple[str, ...], markup: tuple[str, ...],
                 shape: Callable[[Mapping[str, Any]], dict[str, Any]]) -> None:
        self._template = env.get_template(name)
        self._shape = shape
        self._text, self._markup = text, markup
        finalize: Callable[[Any], Any] = env.finalize or (lambda value: value)
        self._finalize = finalize
        token = secrets.token_hex(8)  # a mark no template's text holds
        marks = {f"{token}{hole}{token}": hole for hole in (*text, *markup)}
        drawn = self._template.render(**shape({hole: mark if hole in text else Markup(mark)
                                               for mark, hole in marks.items()}))
        pieces = re.split(f"({'|'.join(map(re.escape, marks))})", drawn)
        # Even places: the frame's text; odd: a hole's name.
        self._pieces: list[str] | None = [marks.get(piece, piece) if i % 2 else piece for i, piece in enumerate(pieces)]
        probe = {hole: _PROBE if hole in text else Markup(f"<i>{hole}</i>") for hole in (*text, *markup)}
        if self.fill(probe) != self._template.render(**shape(probe)):
            self._pieces = None  # the template does more to a hole than write it: render every page

    @property
    def used(self) -> bool:
        """Whether pages are joined from the frame (False: the template failed the frame's check: rendered)."""
        return self._pieces is not None

    def fill(self, holes: Mapping[str, Any]) -> str:
        """The page with ``holes`` (a value for each hole, markup holes' as :class:`~markupsafe.Markup`): the
        template's render, byte for byte."""
        if self._pieces is None:
            return self._template.render(**self._shape(holes))
        written = {hole: str(escape(self._finalize(holes[hole]))) for hole in self._text}
        written.update((hole, str(holes[hole])) for hole in self._markup)
        return "".join(written[piece] if i % 2 else piece for i, piece in enumerate(self._pieces))


def replay_frame(env: Environment, body: str) -> Frame:
    """The frame of a replay's page as anyone who is not signed in gets it (``game.html``: no viewer, no CSRF token,
    one view, no analyses to show or ask for), its holes the game's title and status and its data (the views as
    script JSON); ``body``: the viewer's markup."""
    def shape(holes: Mapping[str, Any]) -> dict[str, Any]:
        game = SimpleNamespace(title=holes["title"], status=holes["status"], views=[None], analyses=[],
                               can_analyze=[])
        return {"viewer": ANONYMOUS, "csrf": "", "game": game, "body": body, "data": holes["data"]}
    return Frame(env, "game.html", text=("title", "status"), markup=("data",), shape=shape)
