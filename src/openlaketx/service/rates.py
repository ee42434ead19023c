"""Each API key's request budget: a token bucket per key, its size and refill set per tenant
(`TenantLimits.requests` per `window_seconds`); an empty bucket answers 429 with Retry-After.

In memory, per process: a restart refills every bucket, which is harmless (the budget is a
brake on load, not an account).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from lakeguard.actors.keys import ApiKey
from openlaketx.service.refusals import TooManyRequests
from openlaketx.settings import TenantLimits


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    def __init__(
        self,
        limits_of: Callable[[str], TenantLimits],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits_of = limits_of
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: ApiKey) -> None:
        """Spend one request of `key`'s budget, or raise TooManyRequests."""
        limits = self._limits_of(key.tenant_id)
        size, rate = limits.requests, limits.requests / limits.window_seconds
        with self._lock:
            now = self._clock()
            bucket = self._buckets.setdefault(key.api_key_id, _Bucket(size, now))
            bucket.tokens = min(size, bucket.tokens + (now - bucket.stamp) * rate)
            bucket.stamp = now
            if bucket.tokens >= 1:
                bucket.tokens -= 1
                return
            wait = math.ceil((1 - bucket.tokens) / rate)
        raise TooManyRequests(
            f"API key {key.api_key_id} has used its {limits.requests} requests per "
            f"{limits.window_seconds} s",
            retry_after=max(1, wait),
        )

    def clear(self) -> None:
        with self._lock:
            self._buckets.clear()
