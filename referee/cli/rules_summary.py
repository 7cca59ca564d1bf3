"""One-paragraph summaries of each variant for ``durak rules`` (the full text is seeds/RULES.md)."""

from __future__ import annotations

SUMMARIES = {
    "podkidnoy": (
        "Throw-in Durak. Six cards each; the card under the stock fixes trump. The attacker leads cards of "
        "one rank to his left neighbour, who beats them one at a time (higher card of the suit, or a trump) "
        "or takes. The others may throw in cards of ranks already on the table: at most 6 attack cards and "
        "never more unbeaten cards than the defender holds. Everyone refills to six, first attacker first. "
        "Whoever is left holding cards when the stock is gone is the fool. (RULES.md 1-2)"
    ),
    "perevodnoy": (
        "Transfer Durak: throw-in Durak where the defender, instead of beating, may add a card of the "
        "unbeaten cards' rank and pass the whole attack to his left neighbour, who may transfer again. By "
        "default a transfer is allowed even after some cards were beaten; beaten pairs stay on the table. "
        "(RULES.md 3)"
    ),
    "chase": (
        "Chase Durak: throw-in Durak where laying k >= 2 cards of one rank in a single lead or throw-in "
        "scores k // 2 chases. After the usual end, the player with the FEWEST chases is the fool; ties go "
        "to the one who went out last. (RULES.md 4)"
    ),
    "fools_fool": (
        "Fool's Fool. A ladder deal of the whole deck (played by the referee): each card drawn goes on the "
        "nearest other pile one rank below, or is kept face down. Then chain beating: diamonds are trump but "
        "cannot beat clubs; each player must beat the pile's top card if he can, or takes its bottom card; "
        "a pile of N cards (N = players in) is discarded. The last player holding cards is the fool. "
        "(RULES.md 5)"
    ),
}
