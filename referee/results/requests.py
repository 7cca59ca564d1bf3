"""What each kind of lifecycle request carries: one Struct per kind, the only form a request's payload is written in
and the only one it is read back in.

A request row is untrusted input. The web server's user may write the database, so any row of ``league_requests``
may have been written by someone other than the command or route that usually writes its kind. A payload is
therefore decoded strictly where the row is read (:func:`decode_payload`): an unknown kind, an unknown or missing
field, a wrong type, a string too long or a number out of range makes the row a *problem*, which the daemon refuses
with that one line and never takes again. The Structs bound what the wire can carry; what only the league knows
(a bot's name rule, the environment's rules, that an upload exists and is this author's) is checked where the
request is carried out (:mod:`referee.league.requests`).

No kind names a path on the host: a folder enters the bot store by the organizer's own command, which copies it
there as the organizer (``staged``: the copy's name in the store), so the daemon only ever reads the store.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec
from msgspec import Meta

RequestKind = Literal["add", "update", "retire", "reinstate", "quarantine", "upload", "finals"]
#: ``working``: taken by the daemon (or a lifecycle command) and not finished; one found so at the next start was
#: being carried out when its process died, and is failed, never taken again. ``failed``: the referee's own error.
RequestStatus = Literal["pending", "working", "done", "refused", "failed"]

#: The name of a folder that ``durak league add/update`` copied into the store's staging area: 128 random bits.
StagedName = Annotated[str, Meta(pattern=r"^[0-9a-f]{32}$")]
#: A program and its arguments (the bot's command): at least a program, bounded in count and length.
Argv = Annotated[list[Annotated[str, Meta(min_length=1, max_length=4096)]], Meta(min_length=1, max_length=256)]
#: A bot's environment: bounded names and values (the league checks them against its environment rules).
Env = Annotated[dict[Annotated[str, Meta(min_length=1, max_length=256)], Annotated[str, Meta(max_length=4096)]],
                Meta(max_length=64)]
#: An author's name, as ``durak league add --author`` or an upload gives it.
AuthorName = Annotated[str, Meta(min_length=1, max_length=64)]
#: Who asked, for the record (``"web"``: the admin's page); informational only.
AskedBy = Annotated[str, Meta(max_length=16)]
#: A row id (SQLite's integers are signed 64-bit).
RowId = Annotated[int, Meta(ge=1, le=2**63 - 1)]
#: The fewest and the most finalists a finals is played by: ``durak league finals --top``, the admin's form and API.
FEWEST_FINALISTS, MOST_FINALISTS = 2, 64
#: The finals' size (the board's top K) and game budget, as the admin's form and API take them too.
FinalsTop = Annotated[int, Meta(ge=FEWEST_FINALISTS, le=MOST_FINALISTS)]
FinalsBudget = Annotated[int, Meta(ge=1, le=10**9)]


class Payload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The base of every request's payload: ``kind`` is the request kind it belongs to."""

    kind: ClassVar[RequestKind]


class AddBot(Payload, frozen=True, forbid_unknown_fields=True):
    """``durak league add``: a new bot from a folder the command staged in the store."""

    kind: ClassVar[RequestKind] = "add"
    staged: StagedName
    command: Argv
    env: Env = msgspec.field(default_factory=dict)
    author: AuthorName | None = None  # None: the bot's name


class UpdateBot(Payload, frozen=True, forbid_unknown_fields=True):
    """``durak league update``: a new version from a staged folder; the command and environment default to the
    latest version's."""

    kind: ClassVar[RequestKind] = "update"
    staged: StagedName
    command: Argv | None = None
    env: Env | None = None


class RetireBot(Payload, frozen=True, forbid_unknown_fields=True):
    kind: ClassVar[RequestKind] = "retire"
    by: AskedBy = ""


class ReinstateBot(Payload, frozen=True, forbid_unknown_fields=True):
    kind: ClassVar[RequestKind] = "reinstate"
    by: AskedBy = ""


class QuarantineBot(Payload, frozen=True, forbid_unknown_fields=True):
    kind: ClassVar[RequestKind] = "quarantine"
    reason: Annotated[str, Meta(min_length=1, max_length=500)] = "by the organizer"
    by: AskedBy = ""


class CarryOutUpload(Payload, frozen=True, forbid_unknown_fields=True):
    """An archive the web server stored (``arena_uploads``), with its author as the server saw them signed in."""

    kind: ClassVar[RequestKind] = "upload"
    upload: RowId
    author: AuthorName


class AskFinals(Payload, frozen=True, forbid_unknown_fields=True):
    """The admin's finals: the board's top K, and a game budget (None: the config's)."""

    kind: ClassVar[RequestKind] = "finals"
    top: FinalsTop
    max_games: FinalsBudget | None = None
    by: AskedBy = ""


#: Each kind's payload type, by kind: a new kind is one Struct here and one handler in the lifecycle.
PAYLOADS: dict[str, type[Payload]] = {cls.kind: cls for cls in (AddBot, UpdateBot, RetireBot, ReinstateBot,
                                                                 QuarantineBot, CarryOutUpload, AskFinals)}
#: The most a payload's JSON may hold (an add's command and environment at their caps fit many times over).
PAYLOAD_BYTES = 64 * 1024


class PayloadProblem(ValueError):
    """A request row that cannot be carried out as written: one line saying why."""


def encode_payload(payload: Payload) -> str:
    """The payload's JSON, as the row keeps it."""
    return msgspec.json.encode(payload).decode()


def decode_payload(kind: object, text: object) -> Payload:
    """The payload of a row of ``kind``, decoded strictly.

    :raises PayloadProblem: an unknown kind, no text, over :data:`PAYLOAD_BYTES`, bad JSON, or a field that is
        unknown, missing, of the wrong type or out of its bounds.
    """
    cls = PAYLOADS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise PayloadProblem(f"unknown request kind {str(kind)[:40]!r}")
    if not isinstance(text, str | bytes):
        raise PayloadProblem(f"the {kind} request's payload is no text")
    if len(text) > PAYLOAD_BYTES:
        raise PayloadProblem(f"the {kind} request's payload is over {PAYLOAD_BYTES} bytes")
    try:
        return msgspec.json.decode(text, type=cls)
    except msgspec.DecodeError as exc:  # ValidationError included
        raise PayloadProblem(f"the {kind} request's payload is refused: {str(exc)[:300]}") from None
    except RecursionError:
        raise PayloadProblem(f"the {kind} request's payload nests too deep") from None
