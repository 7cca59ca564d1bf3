"""Actions and their compact strings (RULES.md "Notation").

An action is a kind and its cards: ``attack 6S 6H``, ``throw 9D``, ``beat 6S 8S`` (table card,
then the card that beats it), ``transfer 6D``, ``take``, ``pass``, and in Fool's Fool
``lead 7C`` and ``beat-top 9C``. Multi-card actions list their cards in ascending card order
(rank, then suit C<D<H<S); :func:`parse_action` insists on it, so one action has one string.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from protocol.cards import CARD_NAMES, Card, InvalidCardError, parse_card, rank_of

ATTACK: Final = "attack"
THROW: Final = "throw"
BEAT: Final = "beat"
TRANSFER: Final = "transfer"
TAKE: Final = "take"
PASS: Final = "pass"
LEAD: Final = "lead"
BEAT_TOP: Final = "beat-top"

ACTION_KINDS: Final = (ATTACK, THROW, BEAT, TRANSFER, TAKE, PASS, LEAD, BEAT_TOP)
_SAME_RANK_KINDS: Final = frozenset((ATTACK, THROW, TRANSFER))
_CARD_COUNT: Final = {BEAT: 2, TAKE: 0, PASS: 0, LEAD: 1, BEAT_TOP: 1}
_TEXT: Final[dict[Action, str]] = {}  # memo: the engine formats the same few thousand actions over and over


class InvalidActionError(ValueError):
    """An action string that is malformed, whatever the position (python-chess ``InvalidMoveError``)."""


class Action(NamedTuple):
    """One decision: ``kind`` is one of :data:`ACTION_KINDS`; ``cards`` as in the action string."""

    kind: str
    cards: tuple[Card, ...] = ()

    def __str__(self) -> str:
        return action_text(self)

    @classmethod
    def from_str(cls, text: str) -> Action:
        return parse_action(text)


def action_text(action: Action) -> str:
    """``str(action)``, the compact action string (for the engine, a direct call is faster)."""
    text = _TEXT.get(action)
    if text is None:
        text = _TEXT[action] = " ".join([action.kind, *(CARD_NAMES[c] for c in action.cards)])
    return text


def parse_action(text: str) -> Action:
    """Parse a compact action string such as ``"beat 6S 8S"``.

    :raises InvalidActionError: unknown kind, wrong number of cards, bad card, cards of
        different ranks where one rank is required, or cards out of ascending order.
    """
    if not isinstance(text, str):
        raise InvalidActionError(f"an action must be a string, not {type(text).__name__}")
    words = text.split(" ")
    kind = words[0]
    if kind not in ACTION_KINDS:
        raise InvalidActionError(f"unknown action {kind!r} in {text!r}: expected one of {', '.join(ACTION_KINDS)}")
    try:
        cards = tuple(parse_card(w) for w in words[1:])
    except InvalidCardError as exc:
        raise InvalidActionError(f"{exc} in action {text!r}") from None
    expected = _CARD_COUNT.get(kind)
    if expected is not None and len(cards) != expected:
        raise InvalidActionError(f"{kind!r} takes {expected} card(s), {text!r} has {len(cards)}")
    if kind in _SAME_RANK_KINDS:
        if not cards:
            raise InvalidActionError(f"{kind!r} needs at least one card: {text!r}")
        if len({rank_of(c) for c in cards}) != 1:
            raise InvalidActionError(f"{kind!r} cards must share one rank: {text!r}")
        if list(cards) != sorted(set(cards)):
            raise InvalidActionError(f"{kind!r} cards must be listed once each in order C<D<H<S: {text!r}")
    return Action(kind, cards)
