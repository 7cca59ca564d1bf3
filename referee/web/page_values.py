"""What the templates are told by the Python that owns each fact (Jinja globals, set once on the app's template
environment): the addresses (:mod:`referee.web.urls`), the bot name's rule as an HTML ``pattern``, the admin's
lifecycle actions, the finals' bounds, an upload's final states, the board's chart made from its data, and the
narration's words for the card table's log. A template never restates one of them."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from msgspec import inspect

from referee.league.names import BOT_NAME
from referee.rating.bradley_terry import Z95
from referee.rating.leaderboard import legend_entries
from referee.report.page import script_json
from referee.results.arena_store import UPLOAD_DONE
from referee.results.narrate import PHRASES
from referee.results.requests import FinalsBudget, FinalsTop
from referee.web import urls
from referee.web.actions import ADMIN_ACTIONS
from referee.web.charts import leaders_chart
from referee.web.long_tables import board_rows, game_rows, head_to_head_rows


def html_pattern(rule: re.Pattern[str]) -> str:
    """``rule`` as an ``<input pattern>`` (which browsers compile with the ``v`` flag: there a ``-`` in a class
    must be escaped; Python's ``re`` reads ``\\-`` as the same character)."""
    return re.sub(r"(?<!\\)-\]", r"\\-]", rule.pattern)


def bounds(annotated: Any) -> tuple[int, int]:
    """The least and greatest value an ``Annotated[int, Meta(ge=..., le=...)]`` allows (an input's min and max)."""
    found = inspect.type_info(annotated)
    assert isinstance(found, inspect.IntType) and found.ge is not None and found.le is not None
    return found.ge, found.le


def when(stamp: str | None) -> str:
    """A row's time stamp (:mod:`referee.results.stamps`: UTC, to the microsecond) as a page shows it, to the
    second: ``2026-12-06 03:01:31 UTC``; anything that is no stamp as it is."""
    if not stamp:
        return ""
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def template_globals() -> dict[str, Any]:
    """The values every template may read. The rating's interval is ``durak leaderboard``'s: +- ``z95`` standard
    errors (95%), under its legend's words, on every page that shows one."""
    top, budget = bounds(FinalsTop), bounds(FinalsBudget)
    return {"urls": urls, "bot_name_pattern": html_pattern(BOT_NAME), "admin_actions": list(ADMIN_ACTIONS),
            "finals_top": top, "finals_budget": budget, "upload_done": list(UPLOAD_DONE),
            "leaders_chart": leaders_chart, "narration": script_json(PHRASES), "z95": Z95,
            "ci_legend": dict(legend_entries())["+-95%"], "when": when,
            "head_to_head_rows": head_to_head_rows, "game_rows": game_rows,
            "board_rows": board_rows}
