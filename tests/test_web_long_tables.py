"""The long tables drawn in Python (:mod:`referee.web.long_tables`) are what the templates' loops drew, byte for
byte, for any entrant text: markup, quotes, controls, bidirectional characters, a slash."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from jinja2 import Environment, select_autoescape

from referee.rating.bradley_terry import Z95
from referee.text import visible_value
from referee.web import models, urls
from referee.web.long_tables import board_rows, game_rows, head_to_head_rows, latest_points

#: The head to head's loop as bot.html wrote it before (the environment as the app makes it: finalize, autoescape).
LOOP = ('{% for h in rows %}<tr><td><a href="{{ urls.bot(h.opponent) }}">{{ h.opponent }}</a></td><td>{{ h.games }}'
        '</td><td>{{ h.fool }}</td><td>{{ h.opponent_fool }}</td></tr>{% endfor %}')
ENVIRONMENT = Environment(autoescape=select_autoescape(default=True, default_for_string=True),
                          finalize=visible_value)

#: Any text SQLite can hold (UTF-8: no lone surrogate), with markup, quotes, controls and bidirectional characters.
names = st.text(alphabet=st.sampled_from(list("ab<>&\"'/ \x1b\u202e\u00e9@1")) |
                st.characters(blacklist_categories=("Cs",)), max_size=12)
rows = st.lists(st.builds(models.HeadToHead, names, st.integers(0, 10**6), st.integers(0, 10**6),
                          st.integers(0, 10**6)), max_size=6)


@given(rows)
def test_head_to_head_rows_are_the_templates_loop_byte_for_byte(drawn: list[models.HeadToHead]) -> None:
    expected = ENVIRONMENT.from_string(LOOP).render(rows=drawn, urls=urls)
    assert ENVIRONMENT.from_string("{{ table(rows) }}").render(rows=drawn, table=head_to_head_rows) == expected


def test_entrant_markup_is_escaped_and_controls_made_visible() -> None:
    drawn = head_to_head_rows([models.HeadToHead('<script>"x"&\x1b', 1, 2, 3)])
    assert "<script>" not in drawn and "&lt;script&gt;&#34;x&#34;&amp;\\x1b" in drawn


#: The games table's loop as games_table.html wrote it before.
GAMES_LOOP = ('{% for game in games %}\n'
              '<tr><td><a href="{{ game.url }}">{{ game.number }}</a></td><td>{{ game.players | join(" ") }}</td>\n'
              '<td>{{ game.fools | join(" ") or "-" }}</td><td>{{ game.end }}</td>\n'
              '<td>{% for v in game.verdicts %}<span class="verdict">{{ v.bot }} {{ v.kind }}{% if v.reason is not '
              'none %}: {{ v.reason }}{% endif %}</span> {% else %}-{% endfor %}</td>\n'
              '<td>{{ game.status }}</td></tr>\n'
              '{% endfor %}\n')
verdicts = st.lists(st.builds(models.VerdictOut, st.integers(0, 5), names, names, st.none() | names), max_size=3)
game_lines = st.lists(st.builds(models.GameLine, st.integers(1, 10**9), names, names, st.lists(names, max_size=4),
                                st.lists(names, max_size=2), names, verdicts, names), max_size=5)


@given(game_lines)
def test_game_rows_are_the_templates_loop_byte_for_byte(drawn: list[models.GameLine]) -> None:
    expected = ENVIRONMENT.from_string(GAMES_LOOP).render(games=drawn)
    assert ENVIRONMENT.from_string("{{ table(games) }}").render(games=drawn, table=game_rows) == expected


versions = st.sampled_from(["a@1", "a@2", "b@1"])


@given(st.lists(versions, max_size=40), st.integers(0, 12))
def test_the_history_table_keeps_each_versions_latest_points_in_order(drawn: list[str], limit: int) -> None:
    points = [models.RatingPointOut(version=v, fitted=f"2026-01-01T00:00:{i:02d}", elo=float(i), sd=1.0, games=i)
              for i, v in enumerate(drawn)]
    kept = latest_points(points, limit)
    assert kept == [p for p in points if p in kept]  # a subsequence, in order
    for version in set(drawn):
        mine = [p for p in points if p.version == version]
        assert [p for p in kept if p.version == version] == mine[len(mine) - min(limit, len(mine)):]


#: The board's loop as board.html wrote it before (its rows; the empty board's line is the template's still).
BOARD_LOOP = ('{% for line in lines %}\n'
              '<tr data-version="{{ line.version }}"><td>{{ line.rank }}</td><td><a href="{{ urls.bot(line.bot) }}">'
              '{{ line.version }}</a></td>\n'
              '<td><a href="{{ urls.author(line.author) }}">{{ line.author }}</a></td>\n'
              '<td>{{ "%.1f" | format(line.elo) }}</td><td>{{ "-" if line.sd is none else "%.1f" | format(z95 * '
              'line.sd) }}</td>\n'
              '<td>{{ line.games }}</td><td class="change">{{ "new" if line.change is none else "%+.1f" | '
              'format(line.change) }}</td><td>{{ line.state }}</td><td class="last-game">-</td><td class="playing">'
              '</td><td class="hour-games">-</td></tr>\n'
              '{% endfor %}')
ratings = st.floats(-10_000, 10_000, allow_nan=False) | st.sampled_from([0.05, 0.15, 0.25, -0.05, 1499.95, 2.5])
board_lines = st.lists(st.builds(models.BoardLine, st.integers(1, 10**4), names, names, names, ratings,
                                 st.none() | st.floats(0, 500, allow_nan=False), st.integers(0, 10**7), names,
                                 st.none() | ratings), max_size=5)


@given(board_lines)
def test_board_rows_are_the_templates_loop_byte_for_byte(drawn: list[models.BoardLine]) -> None:
    expected = ENVIRONMENT.from_string(BOARD_LOOP).render(lines=drawn, urls=urls, z95=Z95)
    assert ENVIRONMENT.from_string("{{ table(lines, z95) }}").render(lines=drawn, table=board_rows, z95=Z95) == expected
