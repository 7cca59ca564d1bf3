"""The rules config: a variant and every option of RULES.md section 5c, validated once.

Options left out take the variant's default; an option that does not apply to the variant is
an error that names it. Encoded, a :class:`Rules` lists every option with its effective
value (``null`` where the option does not apply), which is what every game record reports.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

Variant = Literal["podkidnoy", "perevodnoy", "chase", "fools_fool"]
VARIANTS: tuple[Variant, ...] = ("podkidnoy", "perevodnoy", "chase", "fools_fool")
BOUT_VARIANTS = frozenset(("podkidnoy", "perevodnoy", "chase"))
MIN_PLAYERS, MAX_PLAYERS = 2, 6
HAND_SIZE: Final = 6
BOUT_CARD_LIMIT: Final = 6

VARIANT_TITLES = {
    "podkidnoy": "Simple (throw-in) Durak",
    "perevodnoy": "Transfer Durak",
    "chase": "Chase Durak",
    "fools_fool": "Fool's Fool",
}

# option -> (variants it applies to, default there, one-line description)
OPTIONS: dict[str, tuple[frozenset[str], object, str]] = {
    "deck": (frozenset(VARIANTS), 36, "36 cards (6..A) or 52 cards (2..A)"),
    "first_move": (frozenset(VARIANTS), "from_under_fool",
                   "later games of a series: from_under_fool (the fool's left neighbour leads) "
                   "or under_fool (the fool's right neighbour leads, the fool defends)"),
    "first_bout_limit": (BOUT_VARIANTS, None,
                         "null, or 1-6 attack cards per bout until the first bout that ends all beaten"),
    "throw_in_after_take": (BOUT_VARIANTS, True, "others may still throw in after the defender says take"),
    "defender_draws_last": (BOUT_VARIANTS, False, "the defender refills after everyone else"),
    "transfer_after_beat": (frozenset(("perevodnoy",)), True,
                            "a transfer is allowed also after some table cards were beaten"),
    "transfer_beaten_pairs": (frozenset(("perevodnoy", "chase")), "stay",
                              "beaten pairs on a transfer: stay on the table, or discard (chase: "
                              "only with allow_transfer)"),
    "allow_transfer": (frozenset(("chase",)), False, "chase on classic transfer rules"),
    "max_actions": (frozenset(VARIANTS), 5000, "decisions per game before it ends as a flagged draw"),
    "ask_forced_passes": (BOUT_VARIANTS, True,
                          "ask every seat with cards while the table has room, even if pass is its only "
                          "move (false: such a seat passes automatically)"),
}


class RulesError(ValueError):
    """A rules config that is not valid; the message names the option."""


class Rules(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A variant and its options (RULES.md 5c). ``None`` on input means "the variant's default"."""

    variant: Variant = "podkidnoy"
    deck: Literal[36, 52] = 36
    first_move: Literal["from_under_fool", "under_fool"] = "from_under_fool"
    first_bout_limit: int | None = None
    throw_in_after_take: bool | None = None
    defender_draws_last: bool | None = None
    transfer_after_beat: bool | None = None
    transfer_beaten_pairs: Literal["stay", "discard"] | None = None
    allow_transfer: bool | None = None
    max_actions: int = 5000
    ask_forced_passes: bool | None = None

    def __post_init__(self) -> None:
        variant = self.variant
        for name, (variants, default, _) in OPTIONS.items():
            value = getattr(self, name)
            applies = variant in variants and not (
                name == "transfer_beaten_pairs" and variant == "chase" and not self.allow_transfer)
            if not applies:
                if value is not None:
                    raise RulesError(f"option {name!r} does not apply to variant {variant!r}")
            elif value is None and default is not None:
                msgspec.structs.force_setattr(self, name, default)
        if self.first_bout_limit is not None and not 1 <= self.first_bout_limit <= BOUT_CARD_LIMIT:
            raise RulesError(f"option 'first_bout_limit' must be null or 1-6, not {self.first_bout_limit}")
        if self.max_actions < 1:
            raise RulesError(f"option 'max_actions' must be at least 1, not {self.max_actions}")

    def options(self) -> dict[str, object]:
        """The options that apply to this variant, with their effective values."""
        return {name: getattr(self, name) for name in applicable_options(self.variant)
                if not (name == "transfer_beaten_pairs" and self.transfer_beaten_pairs is None)}

    @property
    def has_transfers(self) -> bool:
        return self.variant == "perevodnoy" or bool(self.allow_transfer)

    @property
    def is_bout_game(self) -> bool:
        return self.variant in BOUT_VARIANTS


def applicable_options(variant: str) -> list[str]:
    """The options of ``variant`` in table order (transfer_beaten_pairs listed for chase too)."""
    return [name for name, (variants, _, _) in OPTIONS.items() if variant in variants]


def parse_option_value(text: str) -> object:
    """A ``--set OPTION=VALUE`` value: JSON if it parses (true, 5, null), else the bare string."""
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
    except RecursionError:
        raise RulesError(f"option value nested too deeply: {text[:40]!r}...") from None


def rules_from_options(variant: str, options: dict[str, object]) -> Rules:
    """Build and validate :class:`Rules`; every problem becomes one :class:`RulesError` line."""
    if variant not in VARIANTS:
        raise RulesError(f"unknown variant {variant!r}: expected one of {', '.join(VARIANTS)}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise RulesError(f"unknown option {unknown[0]!r}: expected one of {', '.join(OPTIONS)}")
    try:
        return msgspec.convert({"variant": variant, **options}, Rules)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `$.")
        if path:
            raise RulesError(f"option {path.rstrip('`')!r}: {message[0].lower()}{message[1:]}") from None
        raise RulesError(str(exc)) from None
