"""Bot-supplied text made safe to show: the one escaping helper for terminals, tables and narration.

Bot names, versions, stderr and forfeit reasons are data. Shown to a person they must not act on the
terminal (an ANSI sequence that rewrites the result line, a carriage return, a bell) nor reorder the line
(bidirectional overrides), so :func:`visible` replaces such characters with escapes a reader can see.
Stored records and JSON exports keep the raw text (JSON escapes C0 controls itself); :func:`json_line`
also escapes the C1 controls that JSON leaves raw, for JSON printed to a terminal.

Pages (the web arena's templates, the replay viewer's data in the arena and in the offline report) show entrant
text through the same function: ``visible(text, lines=True)`` keeps the line breaks of a log or of stderr and
escapes everything else :func:`visible` does; :func:`visible_data` applies it to every string of the viewer's data,
and :func:`visible_value` to every value a template writes (the web arena's Jinja ``finalize``).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

#: Characters shown as escapes, besides the C0 controls (newline and tab included: a field is one line): DEL, C1
#: controls, surrogates (undecodable bytes kept by ``surrogateescape``), line and paragraph separators, and the
#: bidirectional marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574). Also what JSON leaves
#: raw of the unsafe characters.
_BEYOND_C0 = "\x7f-\x9f\ud800-\udfff\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f{_BEYOND_C0}]")
#: The same, less the newline: for text shown as lines (a build log, stderr).
_UNSAFE_IN_LINES = re.compile(f"[\x00-\x09\x0b-\x1f{_BEYOND_C0}]")
_UNSAFE_IN_JSON = re.compile(f"[{_BEYOND_C0}]")
#: The C0 controls JSON text writes as escapes, the newline aside (``\\n`` is kept in lines): a backslash written
#: before b, f, r or t in the text matches too, which only costs a closer look.
_ESCAPED_C0 = re.compile(r"\\(?:[bfrt]|u00[01][0-9a-fA-F])")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every control, separator and bidirectional character written as a visible escape
    (``\\x1b``, ``\\r``... as ``\\x0d``, ``\\u202e``); printable Unicode, spaces included, is kept.
    ``lines``: keep ``\\n`` as it is (text shown as lines: a log, stderr); a ``\\r`` is still escaped.

    For display only: a literal backslash is kept as it is, so the result is not meant to be decoded.
    """
    return (_UNSAFE_IN_LINES if lines else _UNSAFE).sub(_escape, text)


def visible_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string, keys included, made
    ``visible(..., lines=True)``: the viewer's data, escaped once where it is built so that no script has to.

    Most data has nothing to escape: its JSON text, made in one call, says so (no C0 control but the newline
    escaped in it, none of the characters JSON leaves raw), and it is then returned as it is; a replay's 11,000
    strings took 10 ms to look at one by one. Anything else (a string to escape, or a value JSON cannot hold)
    is walked string by string."""
    try:
        text = msgspec.json.encode(value).decode()
    except (TypeError, ValueError, UnicodeError):  # not JSON-like, or a lone surrogate: each string is looked at
        return _visible_each(value)
    if _ESCAPED_C0.search(text) is None and _UNSAFE_IN_JSON.search(text) is None:
        return value
    return _visible_each(value)


def _visible_each(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value, lines=True)
    if isinstance(value, dict):
        return {_visible_each(key): _visible_each(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_visible_each(item) for item in value]
    return value


def visible_value(value: object) -> object:
    """A value a page template writes, as the page shows it: a plain string made ``visible(..., lines=True)``;
    anything else as it is (numbers; ``markupsafe.Markup``, a ``str`` subclass, is markup the code built, not
    entrant text). The web arena's Jinja ``finalize``, so that every ``{{ ... }}`` of every template goes through
    it."""
    return visible(value, lines=True) if type(value) is str else value


def json_line(data: bytes | str) -> str:
    """A JSON document for a terminal: the same JSON value, with C1 controls, separators and bidirectional
    characters (which JSON allows raw inside strings) written as ``\\uXXXX`` escapes."""
    text = data.decode() if isinstance(data, bytes) else data
    return _UNSAFE_IN_JSON.sub(_json_escape, text)
