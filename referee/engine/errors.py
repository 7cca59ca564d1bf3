"""Errors raised by the rules engine."""

from __future__ import annotations

from protocol.actions import InvalidActionError

__all__ = ["GameOverError", "IllegalActionError", "InvalidActionError", "InvalidDealError"]


class IllegalActionError(ValueError):
    """A well-formed action that is not legal in this position; the message names the rule."""


class GameOverError(IllegalActionError):
    """An action was applied to a game that has ended."""


class InvalidDealError(ValueError):
    """An explicit deck order that is not a full deck, or a dealer seat out of range."""
