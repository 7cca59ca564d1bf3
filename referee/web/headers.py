"""The headers every answer carries (a strict CSP: scripts and styles only from /static, nothing framed or posted
elsewhere), for the app's last hook and for the kept pages the front answers (:mod:`referee.web.front`)."""

from __future__ import annotations

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
#: The same, as the raw pairs an ASGI answer sends.
SECURITY_PAIRS = tuple((name.encode(), value.encode()) for name, value in SECURITY_HEADERS.items())
