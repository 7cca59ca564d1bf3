"""The engine's only source of randomness: a seeded stream, the same on every machine.

Bytes come from SHA-256 in counter mode (``SHA-256(b"durak-referee/v1:" + seed + b":" + block)``,
seed and block in decimal ASCII), never from ``hash()`` or the ``random`` module, so a seed
names the same deck for any Python version. RULES.md "Shuffling" documents it for bot authors.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import MutableSequence
from typing import Final, TypeVar

T = TypeVar("T")

_PREFIX: Final = b"durak-referee/v1:"
_WORD: Final = 1 << 64
#: randbelow's rejection limit, the largest multiple of n up to 2**64, for the n of shuffles and deals.
_LIMITS: Final = tuple(_WORD - _WORD % n if n else 0 for n in range(64))


class SeededRng:
    """Uniform integers from a seed: ``randbelow`` by rejection on 64-bit words."""

    def __init__(self, seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, not {seed}")
        self.seed = seed
        self._prefix = b"%s%d:" % (_PREFIX, seed)
        self._block = 0
        self._words: list[int] = []

    def _next_word(self) -> int:
        if not self._words:
            digest = hashlib.sha256(b"%s%d" % (self._prefix, self._block)).digest()
            self._block += 1
            self._words = list(struct.unpack(">4Q", digest))[::-1]
        return self._words.pop()

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``; words at or above the largest multiple of n are redrawn."""
        if n <= 0:
            raise ValueError("randbelow needs n >= 1")
        limit = _LIMITS[n] if n < len(_LIMITS) else _WORD - _WORD % n
        while True:
            word = self._next_word()
            if word < limit:
                return word % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place: for i from the last index down to 1, swap i with randbelow(i + 1)."""
        for i in range(len(items) - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]


def derive_seed(seed: int, *labels: object) -> int:
    """A 63-bit seed for one part of a run, e.g. ``derive_seed(run_seed, "selfplay", 7)``.

    The first 8 bytes of ``SHA-256(b"durak-referee/derive/v1:" + seed and labels joined by ":")``,
    big-endian, top bit cleared: stable across machines and Python versions.
    """
    text = ":".join(str(part) for part in (seed, *labels))
    digest = hashlib.sha256(b"durak-referee/derive/v1:" + text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
