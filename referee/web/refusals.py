"""How the web server says no: one exception, :class:`Refused`, carrying its HTTP status, its one-line detail and
its headers (``Retry-After``), raised wherever a request is refused and turned into an answer in one place (the
app's exception handlers, :mod:`referee.web.app`). A form that shows its refusal on its own page catches
:data:`REFUSALS` and reads the answer with :func:`refusal`.

The store's own refusals (:mod:`referee.results`) are domain errors, not HTTP ones: :data:`DOMAIN` says which
status each one answers, and :func:`refusal` is the one place that reads it.
"""

from __future__ import annotations

from collections.abc import Mapping

from referee.results.table_store import TableRefused

#: The router's own text for an unknown path: every 404 answers it, so that a hidden object's is a missing one's.
NOT_FOUND = "Not Found"


class Refused(Exception):
    """A request the server refuses: ``status`` (4xx), ``detail`` (one line) and any ``headers`` to send."""

    def __init__(self, status: int, detail: str = "refused", headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, dict(headers or {})


#: The store's refusals of a web request, by class: the status and headers each one answers.
DOMAIN: dict[type[Exception], tuple[int, dict[str, str]]] = {
    TableRefused: (429, {"Retry-After": "30"}),  # a card table's caps: a table ends within minutes
}
#: Everything :func:`refusal` turns into an answer (what a form catches to show it on its page).
REFUSALS: tuple[type[Exception], ...] = (Refused, *DOMAIN)


def refusal(exc: Exception) -> Refused:
    """``exc`` (one of :data:`REFUSALS`) as a :class:`Refused`."""
    if isinstance(exc, Refused):
        return exc
    for kind, (status, headers) in DOMAIN.items():
        if isinstance(exc, kind):
            return Refused(status, str(exc), headers)
    raise TypeError(f"{type(exc).__name__} is not a refusal")  # a bug: only REFUSALS are caught
