"""A page's HTML: a template of ``referee/web/templates`` rendered for the viewer, with their CSRF token for its
forms (the pages of :mod:`referee.web.pages` and :mod:`referee.web.tables` both render so)."""

from __future__ import annotations

from typing import Any

from litestar import Response

from referee.web.context import Context, WebState
from referee.web.shown import HTML


def render(web: WebState, template: str, ctx: Context | None, status: int = 200, **values: Any) -> Response[str]:
    """A page from ``template`` with the viewer and their CSRF token for its forms."""
    viewer = ctx.viewer if ctx is not None else None
    text = web.templates.get_template(template).render(viewer=viewer, csrf=ctx.csrf if ctx else "", **values)
    return Response(text, media_type=HTML, status_code=status)


def page_text(ctx: Context, template: str, **values: Any) -> str:
    """A page's text from ``template`` for the context's viewer (their CSRF token in its forms)."""
    return ctx.web.templates.get_template(template).render(viewer=ctx.viewer, csrf=ctx.csrf, **values)
