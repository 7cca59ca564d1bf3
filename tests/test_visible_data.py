"""``visible_data`` answers data with nothing to escape as it is, found from its JSON text in one call: a property
test holds it to the walk over every string it replaces, on data of every character, controls and bidirectional
marks included."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.text import _visible_each, visible_data

#: Text drawn mostly from the characters that matter here: C0 and C1 controls, the newline, a backslash before the
#: letters of JSON's escapes, separators, bidirectional marks, lone surrogates; then anything.
TEXT = st.text(st.sampled_from("ab\\bfnrtu0\n\r\t\x1b\x00\x7f\x85\u2028\u202e\u2066\ud800é") | st.characters())
DATA = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=20)


def _json(value: Any) -> bytes:
    return msgspec.json.encode(value)


@settings(max_examples=300, deadline=None)
@given(DATA)
def test_the_quick_answer_is_the_walks(value: Any) -> None:
    quick, walked = visible_data(value), _visible_each(value)
    assert _json(quick) == _json(walked)


def test_data_with_nothing_to_escape_is_returned_itself_and_other_data_is_not() -> None:
    plain = {"players": ["alpha", "beta"], "log": ["lays 6C\nbeats"], "back\\slash": 1}
    assert visible_data(plain) is plain
    for hostile in ({"name": "x\x1b[2J"}, ["\u202eevil"], {"k\x85": 1}, ["a\rb"]):
        assert visible_data(hostile) is not hostile and _json(visible_data(hostile)) == _json(_visible_each(hostile))
