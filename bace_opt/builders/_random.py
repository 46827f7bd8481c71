"""Seeded random streams whose output is stable across Python versions and platforms.

Python guarantees that ``random.Random(seed).random()`` yields the same sequence for the same int/str
seed (the other methods of ``random`` may change between versions), so every draw the builders make is
derived from ``random()`` alone.  Each independent decision (the cluster, job k's dataset, ...) gets its
own named stream, so changing one option (e.g. the number of jobs) does not shift the other draws.
"""
from __future__ import annotations

import math
import random
from typing import Sequence, TypeVar

T = TypeVar("T")


class Stream:
    """A named random stream: ``Stream("paper", seed, "cluster")``."""

    def __init__(self, *key) -> None:
        self._r = random.Random("/".join(str(k) for k in key))

    def random(self) -> float:
        return self._r.random()

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self._r.random()

    def integer(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi] (both included)."""
        return lo + min(int(self._r.random() * (hi - lo + 1)), hi - lo)

    def choice(self, seq: Sequence[T]) -> T:
        return seq[self.integer(0, len(seq) - 1)]

    def permutation(self, seq: Sequence[T]) -> list[T]:
        """Fisher-Yates shuffle driven by random() only."""
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.integer(0, i)
            out[i], out[j] = out[j], out[i]
        return out

    def exponential(self, mean: float) -> float:
        return -mean * math.log(1.0 - self._r.random())
