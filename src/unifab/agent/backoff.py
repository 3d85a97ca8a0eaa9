"""Retry delays: exponential backoff with full jitter, capped (the AWS architecture blog's "full jitter").

The n-th consecutive failure waits a uniformly random time in ``[0, min(cap, base * 2**n)]``: many agents
that lost the same controller at the same moment spread their retries instead of arriving together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass(slots=True)
class Backoff:
    base: float  # seconds: the ceiling of the first retry's delay
    cap: float  # seconds: no delay is ever longer
    rng: random.Random = field(default_factory=random.Random)
    failures: int = 0

    def next_delay(self) -> float:
        """The delay before the next attempt after one more failure."""
        ceiling = min(self.cap, self.base * (2 ** min(self.failures, 62)))
        self.failures += 1
        return self.rng.uniform(0.0, ceiling)

    def reset(self) -> None:
        """A success: the next failure starts from ``base`` again."""
        self.failures = 0
