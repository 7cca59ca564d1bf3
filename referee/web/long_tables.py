"""Tables too long for a template's loop. A bot page's head to head has a row per opponent (500 at a league of 1,000
versions), and drawing them through Jinja (a URL, four escapes and a call per cell) took 4.5 of the page's 7 ms; a
games list's 50 rows took half of its build; the board's 1,000, 15 of its 25 ms. They are drawn here as one join,
each cell as the templates write it, entrant text made visible (:func:`referee.text.visible_value`, the
environment's ``finalize``) and then escaped (its ``autoescape``); tests/test_web_long_tables.py holds the two byte
for byte. A bot's rating history gains a point per version at every refit that moves it: the table lists each
version's latest few, the chart draws them all."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from markupsafe import Markup, escape

from referee.text import visible_value
from referee.web import models, urls


def _cell(value: str) -> str:
    return str(escape(visible_value(value)))


@lru_cache(maxsize=4096)
def _bot_link(name: str) -> str:
    """A bot's name as a link to its page. Made once per name: a league's bot pages, built anew at every refit, name
    the same few hundred bots in every head to head (a URL and two escapes each: a page took 6.6 ms, now 4.8)."""
    return f'<a href="{_bot_href(name)}">{_cell(name)}</a>'


@lru_cache(maxsize=4096)
def _bot_href(name: str) -> str:
    return _cell(urls.bot(name))


@lru_cache(maxsize=4096)
def _name(name: str) -> str:
    """A name (a version's, a state's) as a cell shows it: the board's 1,000 versions are the same at every build."""
    return _cell(name)


@lru_cache(maxsize=4096)
def _author_link(name: str) -> str:
    return f'<a href="{_cell(urls.author(name))}">{_cell(name)}</a>'


def head_to_head_rows(rows: Sequence[models.HeadToHead]) -> Markup:
    """The head to head's ``<tr>`` rows: the opponent (a link to its page), the games, the times this bot was the
    fool in them, and the times the opponent was."""
    return Markup("".join(  # every entrant string is escaped by _cell
        f"<tr><td>{_bot_link(row.opponent)}</td><td>{row.games}</td><td>{row.fool}</td><td>{row.opponent_fool}</td>"
        "</tr>" for row in rows))


def board_rows(lines: Sequence[models.BoardLine], z95: float) -> Markup:
    """The board's ``<tr>`` rows, a version each (1,000 at a league of 1,000 versions: through Jinja they took 15 of
    the board page's 25 ms): rank, version (a link to its bot's page), author (a link to theirs), Elo, the 95%
    interval's half width (``z95`` standard deviations; ``-`` before the fit pins it), games, the change over a day
    (``new``: no rating that old), state, and the live part's cells for the page's script to fill."""
    return Markup("".join(_board_row(line, z95) for line in lines))  # every entrant string is escaped by _name


def _board_row(line: models.BoardLine, z95: float) -> str:
    version = _name(line.version)
    interval = "-" if line.sd is None else f"{z95 * line.sd:.1f}"
    change = "new" if line.change is None else f"{line.change:+.1f}"
    return (f'\n<tr data-version="{version}"><td>{line.rank}</td><td><a href="{_bot_href(line.bot)}">{version}</a>'
            f"</td>\n<td>{_author_link(line.author)}</td>\n<td>{line.elo:.1f}</td><td>{interval}</td>\n"
            f'<td>{line.games}</td><td class="change">{change}</td><td>{_name(line.state)}</td><td class="last-game">-'
            '</td><td class="playing"></td><td class="hour-games">-</td></tr>\n')


def game_rows(games: Sequence[models.GameLine]) -> Markup:
    """A games table's rows (a games list's 50, a bot page's latest 20), each as the template's loop drew it: the
    number (a link to the replay), the players, the fools (``-``: none), the end, each verdict (its bot, kind and
    reason where shown; ``-``: none) and the group's status."""
    return Markup("".join(  # every entrant string is escaped by _cell
        f'\n<tr><td><a href="{_cell(game.url)}">{game.number}</a></td><td>{_cell(" ".join(game.players))}</td>\n'
        f'<td>{_cell(" ".join(game.fools) or "-")}</td><td>{_cell(game.end)}</td>\n'
        f"<td>{_verdicts(game.verdicts)}</td>\n<td>{_cell(game.status)}</td></tr>\n" for game in games))


def _verdicts(verdicts: Sequence[models.VerdictOut]) -> str:
    if not verdicts:
        return "-"
    return "".join(f'<span class="verdict">{_cell(v.bot)} {_cell(v.kind)}'
                   f'{"" if v.reason is None else ": " + _cell(v.reason)}</span> ' for v in verdicts)


#: The rating history's table: each version's latest points (the chart above it draws every one, the API has them).
HISTORY_ROWS = 10


def latest_points(points: Sequence[models.RatingPointOut], per_version: int = HISTORY_ROWS,
                  ) -> list[models.RatingPointOut]:
    """``points`` (oldest first) with only each version's latest ``per_version``, in the same order."""
    left = Counter(point.version for point in points)
    kept = []
    for point in points:
        if left[point.version] <= per_version:
            kept.append(point)
        left[point.version] -= 1
    return kept
