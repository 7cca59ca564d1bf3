"""A page drawn from a frame (referee/web/frames.py) is its template's render byte for byte: the arena's replay page
for any title and status, and a template that does more to a hole than write it is rendered, not joined. The
replay pages of real games are held to the render by tests/test_replay_views.py."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import DictLoader
from markupsafe import Markup

from referee.report.page import VIEWER_BODY, script_json
from referee.web import models
from referee.web.app import template_environment
from referee.web.frames import Frame, replay_frame
from referee.web.visibility import ANONYMOUS

ARENA = template_environment()  # the arena's own environment
FRAME = replay_frame(ARENA, VIEWER_BODY)


def view(title: str) -> bytes:
    """A view of the shape game_data writes (its title third), with some data after it."""
    return msgspec.json.encode({"version": 3, "seed": 1, "title": title, "steps": [{"say": "</script><!--"}]})


@settings(max_examples=60, deadline=None)
@given(title=st.text(max_size=40), status=st.sampled_from(["complete", "open", "void", "<&\"'>"]))
def test_a_replay_page_joined_from_its_frame_is_the_templates_render(title: str, status: str) -> None:
    game = models.KeptGameOut(number=7, status=status, views=[msgspec.Raw(view(title))])
    data = script_json(game.views)
    rendered = ARENA.get_template("game.html").render(viewer=ANONYMOUS, csrf="", game=game, body=VIEWER_BODY,
                                                       data=data, analyze="/games/7/analyses")
    assert FRAME.used
    assert FRAME.fill({"title": game.title, "status": status, "data": Markup(data)}) == rendered


def test_a_template_that_filters_a_hole_is_rendered_not_joined() -> None:
    env = template_environment(DictLoader({
        "page.html": "<h1>{{ title | upper }}</h1><p>{{ title }}</p>{{ data | safe }}",
        "plain.html": "<h1>{{ title }}</h1><p>{{ title }}</p>{{ data | safe }}"}))

    def frame(name: str) -> Frame:
        return Frame(env, name, text=("title",), markup=("data",), shape=dict)

    holes = {"title": "a <b> & \x1b c", "data": Markup("<i>[1]</i>")}
    filtered, plain = frame("page.html"), frame("plain.html")
    assert not filtered.used and plain.used  # the control: the same holes, written plainly, are joined
    for made, name in ((filtered, "page.html"), (plain, "plain.html")):
        assert made.fill(holes) == env.get_template(name).render(**holes)
    assert plain.fill(holes) == "<h1>a &lt;b&gt; &amp; \\x1b c</h1><p>a &lt;b&gt; &amp; \\x1b c</p><i>[1]</i>"
