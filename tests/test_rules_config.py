"""The rules config: every option's default per variant, applicability, bad values, JSON round trip (RULES.md 5c)."""

from __future__ import annotations

import msgspec
import pytest

from protocol.rules import VARIANTS, Rules, RulesError, rules_from_options

BOUT_DEFAULTS = {
    "deck": 36,
    "first_move": "from_under_fool",
    "first_bout_limit": None,
    "throw_in_after_take": True,
    "defender_draws_last": False,
    "max_actions": 5000,
    "ask_forced_passes": True,
}

EXPECTED_DEFAULTS = {
    "podkidnoy": BOUT_DEFAULTS,
    "perevodnoy": {**BOUT_DEFAULTS, "transfer_after_beat": True, "transfer_beaten_pairs": "stay"},
    "chase": {**BOUT_DEFAULTS, "allow_transfer": False},
    "fools_fool": {"deck": 36, "first_move": "from_under_fool", "max_actions": 5000},
}

ALL_OPTIONS = ("deck", "first_move", "first_bout_limit", "throw_in_after_take", "defender_draws_last",
               "transfer_after_beat", "transfer_beaten_pairs", "allow_transfer", "max_actions",
               "ask_forced_passes")

# (variant, option, a value that would be valid where the option applies)
NOT_APPLICABLE = [
    ("podkidnoy", "transfer_after_beat", False),
    ("podkidnoy", "transfer_beaten_pairs", "discard"),
    ("podkidnoy", "allow_transfer", True),
    ("perevodnoy", "allow_transfer", True),
    ("chase", "transfer_after_beat", False),
    ("chase", "transfer_beaten_pairs", "stay"),  # only with allow_transfer on
    ("fools_fool", "first_bout_limit", 5),
    ("fools_fool", "throw_in_after_take", False),
    ("fools_fool", "defender_draws_last", True),
    ("fools_fool", "transfer_after_beat", True),
    ("fools_fool", "transfer_beaten_pairs", "stay"),
    ("fools_fool", "allow_transfer", False),
    ("fools_fool", "ask_forced_passes", True),
    ("fools_fool", "ask_forced_passes", False),
]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_option_defaults_per_variant(variant: str) -> None:
    """RULES.md 5c: options left out take the variant's default; options that do not apply are null."""
    rules = rules_from_options(variant, {})
    assert rules.options() == EXPECTED_DEFAULTS[variant]
    for name in ALL_OPTIONS:
        assert getattr(rules, name) == EXPECTED_DEFAULTS[variant].get(name), name


def test_variant_defaults_to_podkidnoy() -> None:
    """RULES.md 5c: the variant defaults to podkidnoy."""
    assert Rules().variant == "podkidnoy"
    assert Rules() == rules_from_options("podkidnoy", {})


def test_chase_with_allow_transfer_gets_transfer_beaten_pairs() -> None:
    """RULES.md 4.3, 5c: transfer_beaten_pairs applies to chase only with allow_transfer on (default stay)."""
    rules = rules_from_options("chase", {"allow_transfer": True})
    assert rules.transfer_beaten_pairs == "stay"
    assert rules.transfer_after_beat is None
    assert rules_from_options("chase", {"allow_transfer": True, "transfer_beaten_pairs": "discard"}) \
        .transfer_beaten_pairs == "discard"


@pytest.mark.parametrize(("variant", "option", "value"), NOT_APPLICABLE)
def test_option_that_does_not_apply_is_an_error_naming_it(variant: str, option: str, value: object) -> None:
    """RULES.md 5c: "option 'first_bout_limit' does not apply to variant 'fools_fool'"."""
    expected = f"option '{option}' does not apply to variant '{variant}'"
    with pytest.raises(RulesError, match=expected):
        rules_from_options(variant, {option: value})
    with pytest.raises((RulesError, msgspec.ValidationError), match=option):
        Rules(variant=variant, **{option: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(("variant", "options", "named"), [
    ("podkidnoy", {"first_bout_limit": 0}, "first_bout_limit"),
    ("podkidnoy", {"first_bout_limit": 7}, "first_bout_limit"),
    ("chase", {"first_bout_limit": "5"}, "first_bout_limit"),
    ("podkidnoy", {"max_actions": 0}, "max_actions"),
    ("fools_fool", {"max_actions": -5}, "max_actions"),
    ("podkidnoy", {"max_actions": True}, "max_actions"),
    ("podkidnoy", {"deck": 40}, "deck"),
    ("fools_fool", {"deck": "52"}, "deck"),
    ("podkidnoy", {"first_move": "random"}, "first_move"),
    ("perevodnoy", {"transfer_beaten_pairs": "keep"}, "transfer_beaten_pairs"),
    ("perevodnoy", {"transfer_after_beat": "yes"}, "transfer_after_beat"),
    ("podkidnoy", {"throw_in_after_take": 1}, "throw_in_after_take"),
    ("chase", {"allow_transfer": "on"}, "allow_transfer"),
    ("perevodnoy", {"ask_forced_passes": "no"}, "ask_forced_passes"),
    ("podkidnoy", {"ask_forced_passes": 0}, "ask_forced_passes"),
])
def test_bad_values_are_rejected_naming_the_option(variant: str, options: dict[str, object], named: str) -> None:
    """RULES.md 5c: values outside the table (first_bout_limit null or 1-6, max_actions >= 1, ...) are errors."""
    with pytest.raises(RulesError, match=named):
        rules_from_options(variant, options)


def test_unknown_variant_and_unknown_option_are_errors() -> None:
    """RULES.md 5c: unknown variants and unknown options are config errors, named in the message."""
    with pytest.raises(RulesError, match="unknown variant 'durak'"):
        rules_from_options("durak", {})
    with pytest.raises(RulesError, match="unknown option 'trumps'"):
        rules_from_options("podkidnoy", {"trumps": "S"})


@pytest.mark.parametrize("limit", [1, 2, 5, 6])
def test_first_bout_limit_accepts_1_to_6(limit: int) -> None:
    """RULES.md 5c: first_bout_limit is null or an int 1-6."""
    assert rules_from_options("perevodnoy", {"first_bout_limit": limit}).first_bout_limit == limit


@pytest.mark.parametrize(("variant", "options"), [
    ("podkidnoy", {}),
    ("podkidnoy", {"deck": 52, "first_bout_limit": 5, "throw_in_after_take": False, "defender_draws_last": True,
                   "first_move": "under_fool", "max_actions": 100, "ask_forced_passes": False}),
    ("perevodnoy", {"transfer_after_beat": False, "transfer_beaten_pairs": "discard"}),
    ("chase", {"allow_transfer": True, "transfer_beaten_pairs": "discard", "first_bout_limit": 2}),
    ("chase", {}),
    ("chase", {"ask_forced_passes": False}),
    ("fools_fool", {"deck": 52, "first_move": "under_fool"}),
])
def test_rules_round_trip_through_json_listing_every_option(variant: str, options: dict[str, object]) -> None:
    """RULES.md 5c: the record lists every option with its effective value (null where it does not apply)."""
    rules = rules_from_options(variant, options)
    encoded = msgspec.json.encode(rules)
    decoded = msgspec.json.decode(encoded)
    assert set(decoded) == {"variant", *ALL_OPTIONS}
    for name, value in options.items():
        assert decoded[name] == value
    assert msgspec.json.decode(encoded, type=Rules) == rules
    assert rules_from_options(variant, {k: v for k, v in decoded.items() if k != "variant"}) == rules


def test_encoded_defaults_for_fools_fool_null_the_bout_options() -> None:
    """RULES.md 5c: options that do not apply are reported as null."""
    decoded = msgspec.json.decode(msgspec.json.encode(Rules(variant="fools_fool")))
    assert decoded == {"variant": "fools_fool", "deck": 36, "first_move": "from_under_fool",
                       "first_bout_limit": None, "throw_in_after_take": None, "defender_draws_last": None,
                       "transfer_after_beat": None, "transfer_beaten_pairs": None, "allow_transfer": None,
                       "max_actions": 5000, "ask_forced_passes": None}
