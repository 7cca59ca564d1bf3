"""Authors' tokens: drawn once (256 random bits), shown once, kept only as a SHA-256, checked in constant time.

A token reads ``durak_<id>_<secret>``: the author's row number says which hash to compare with (no lookup by the
secret itself), and the prefix lets secret scanners recognise a leaked one.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from referee.league.names import BOT_NAME
from referee.results.arena_store import ArenaReads, ArenaStore, AuthorRow

_TOKEN = re.compile(r"durak_([0-9]{1,12})_([A-Za-z0-9_-]{43})")
#: An author's name: the bot names' rule (a name is a path segment of the web's addresses, where ``.`` and ``..``
#: name no page), exported as one pattern for the CLI, the web's forms and this check.
AUTHOR_NAME = BOT_NAME


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_author(store: ArenaStore, name: str, *, admin: bool = False) -> tuple[AuthorRow, str]:
    """Add an author and return it with its token, which is never stored nor shown again.

    :raises ValueError: a name the arena does not allow. :raises StoreError: the name is taken.
    """
    if not AUTHOR_NAME.fullmatch(name):
        raise ValueError(f"bad author name {name!r}: 1-64 letters, digits and _ . + -, not starting with a dot")
    # The row's id is in the token, so the row is made first with a hash nothing matches, then given the real one.
    author = store.add_author(name, "!", admin=admin)
    token = f"durak_{author.id}_{secrets.token_urlsafe(32)}"
    store.set_token(author.name, token_sha256(token))
    return author, token


def author_of_token(store: ArenaReads, token: str) -> AuthorRow | None:
    """The author a token belongs to, or None (malformed, unknown, wrong, or revoked): one answer for every
    failure, and the hashes compared in constant time."""
    match = _TOKEN.fullmatch(token.strip())
    if match is None:
        return None
    author = store.author_by_id(int(match.group(1)))
    if author is None or author.revoked is not None:
        return None
    return author if hmac.compare_digest(author.token_sha256, token_sha256(match.group(0))) else None
