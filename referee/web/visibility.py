"""Who sees what: ONE function, :func:`sight`, of (viewer, subject), which every page and API route asks.

- Anyone: the board, bot pages, a league game (result and every hand) once its deal group is complete or void,
  a verdict's kind (never its reason: a crash reason quotes the bot's stderr), an author's bot names.
- An author, besides: in their own bots' games, that seat's view with its stderr by move and its own verdict
  reasons; their own uploads with build and gate logs. Never another author's stderr, reasons or uploads.
- An author's unrated side games (their challenges): theirs alone, with each game from their bot's seats and its
  stderr; nobody else sees that they exist (not the opponents' authors either).
- The admin: everything, open groups' games included, and the actions.
- A card table (a person playing bots): its author alone, the admin included in "nobody else".
- A post-game analysis of a seat (its marks and values: what the seat knew and how it was judged): the author who
  asked alone (and the admin) until its game is public, a league game whose group is complete; then anyone. A card
  table's: its author alone, as the table.

A subject the viewer may not see answers exactly as one that does not exist (404), but for the login wall.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from referee.results.league_store import GroupStatus


@dataclass(frozen=True)
class Viewer:
    """Who asks: nobody (``author`` None), an author, or the admin (an author row marked admin)."""

    author: str | None = None
    admin: bool = False

    @property
    def signed_in(self) -> bool:
        return self.author is not None


ANONYMOUS = Viewer()


class Sight(enum.Enum):
    HIDDEN = "hidden"  # answered as if it did not exist
    PUBLIC = "public"  # what anyone sees
    OWNER = "owner"  # the public part and the viewer's own (their seats, stderr, reasons, uploads)
    ALL = "all"  # the admin's: everything


@dataclass(frozen=True)
class PublicSubject:
    """The board, a bot's page, an author's bot names."""


@dataclass(frozen=True)
class GameSubject:
    """A league game: its group's status and the author of each seat's bot."""

    status: GroupStatus
    seat_authors: tuple[str, ...]


@dataclass(frozen=True)
class UploadSubject:
    author: str


@dataclass(frozen=True)
class SideSubject:
    """An unrated side request (a challenge) and its games: ``author`` asked for it."""

    author: str


@dataclass(frozen=True)
class AuthorSubject:
    """An author's page: ``name``'s uploads and logs are their own."""

    name: str


@dataclass(frozen=True)
class TableSubject:
    """A card table (a person's seat against bots): its live seat view, its moves, its replay."""

    author: str


@dataclass(frozen=True)
class AnalysisSubject:
    """A post-game analysis of one seat: ``author`` asked for it; ``public`` once its game is (a league game of a
    complete group); ``table``: a card table's, its author's alone as the table is."""

    author: str
    public: bool
    table: bool = False


@dataclass(frozen=True)
class AdminSubject:
    """The admin page and actions."""


Subject = (PublicSubject | GameSubject | UploadSubject | SideSubject | AuthorSubject | TableSubject
           | AnalysisSubject | AdminSubject)


def sight(viewer: Viewer, subject: Subject) -> Sight:
    """How much of ``subject`` ``viewer`` may see (the rule table of docs/WEB.md, in code)."""
    if isinstance(subject, TableSubject) or (isinstance(subject, AnalysisSubject) and subject.table):
        # a person's hand in play, and their analysis of it: theirs alone, not even the admin's
        return Sight.OWNER if viewer.author == subject.author else Sight.HIDDEN
    if viewer.admin:
        return Sight.ALL
    match subject:
        case PublicSubject():
            return Sight.PUBLIC
        case GameSubject(status=status, seat_authors=authors):
            if status == "open":
                return Sight.HIDDEN
            return Sight.OWNER if viewer.author is not None and viewer.author in authors else Sight.PUBLIC
        case UploadSubject(author=author) | SideSubject(author=author):
            return Sight.OWNER if viewer.author == author else Sight.HIDDEN
        case AnalysisSubject(author=author, public=public):
            if viewer.author == author:
                return Sight.OWNER
            return Sight.PUBLIC if public else Sight.HIDDEN
        case AuthorSubject(name=name):
            return Sight.OWNER if viewer.author == name else Sight.PUBLIC
        case AdminSubject():
            return Sight.HIDDEN
    raise AssertionError(f"no rule for {subject!r}")


def own_seats(viewer: Viewer, seat_authors: Sequence[str]) -> list[int]:
    """The seats of a game whose bots are the viewer's."""
    return [seat for seat, author in enumerate(seat_authors) if viewer.author is not None and author == viewer.author]


def reason_shown(seen: Sight, seat: int, mine: Sequence[int]) -> bool:
    """Whether a verdict's reason on ``seat`` is shown, given how the game is seen and the viewer's seats."""
    return seen is Sight.ALL or (seen is Sight.OWNER and seat in mine)
