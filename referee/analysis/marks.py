"""How large a loss earns a mark: the one home of the thresholds (the README's analyze section prints them).

A loss is in the chance of not being the fool (0 to 1): a decision worth 0.10 less than the best one gives up
one game's escape in ten. A decision is marked only when its loss is also larger than its error bar (the 95%
half-width), so sampling noise alone never marks one; exact losses have no error bar.
"""

from __future__ import annotations

from typing import Final

#: (mark, the least loss that earns it), gravest first.
THRESHOLDS: Final = (("blunder", 0.20), ("mistake", 0.10), ("inaccuracy", 0.05))


def mark_of(loss: float, error: float) -> str | None:
    """The mark a decision of this loss and error bar earns, or None."""
    if loss <= error:
        return None
    for mark, least in THRESHOLDS:
        if loss >= least:
            return mark
    return None
