"""How long a failed run waits before it is tried again (pure).

Exponential backoff with full jitter: the n-th retry waits a random time between half and all
of `base * 2**(n-1)` seconds, capped at an hour, so many runs failing together do not come
back together.
"""

from __future__ import annotations

import random

CAP_SECONDS = 3600.0


def backoff(attempt: int, base: float, rng: random.Random) -> float:
    """Seconds before retry number `attempt` (1 for the first) of a run."""
    ceiling = min(CAP_SECONDS, max(1.0, float(base)) * 2 ** max(0, attempt - 1))
    return rng.uniform(ceiling / 2, ceiling)
