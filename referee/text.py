"""Bot-supplied text made safe to show: the one escaping helper for terminals, tables and narration.

Bot names, versions, stderr and forfeit reasons are data. Shown to a person they must not act on the
terminal (an ANSI sequence that rewrites the result line, a carriage return, a bell) nor reorder the line
(bidirectional overrides), so :func:`visible` replaces such characters with escapes a reader can see.
Stored records and JSON exports keep the raw text (JSON escapes C0 controls itself); :func:`json_line`
also escapes the C1 controls that JSON leaves raw, for JSON printed to a terminal.
"""

from __future__ import annotations

import re

#: Characters shown as escapes: C0 controls (newline and tab included: a field is one line), DEL, C1
#: controls, surrogates (undecodable bytes kept by ``surrogateescape``), line and paragraph separators,
#: and the bidirectional marks, embeddings, overrides and isolates (Trojan Source, CVE-2021-42574).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
#: What JSON leaves raw of the above: C1 controls, separators and bidirectional controls.
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def visible(text: str) -> str:
    """``text`` with every control, separator and bidirectional character written as a visible escape
    (``\\x1b``, ``\\r``... as ``\\x0d``, ``\\u202e``); printable Unicode, spaces included, is kept.

    For display only: a literal backslash is kept as it is, so the result is not meant to be decoded.
    """
    return _UNSAFE.sub(_escape, text)


def json_line(data: bytes | str) -> str:
    """A JSON document for a terminal: the same JSON value, with C1 controls, separators and bidirectional
    characters (which JSON allows raw inside strings) written as ``\\uXXXX`` escapes."""
    text = data.decode() if isinstance(data, bytes) else data
    return _UNSAFE_IN_JSON.sub(_json_escape, text)
