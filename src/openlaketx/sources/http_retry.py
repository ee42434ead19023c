"""How the `http` kind spaces and retries its requests: each system's request budget
(`requests_per_second`) and the wait a server's Retry-After asks for."""

from __future__ import annotations

import email.utils
import threading
import time
from datetime import UTC, datetime

from lakeguard.records.sources.kinds.http import HttpOptions

# answers worth another try: too many requests, and a server or a gateway that failed
RETRIED = frozenset({429, 500, 502, 503, 504})


class Budget:
    """Requests spaced at least `1/rate` apart, whichever thread sends them: each takes the
    next free slot, then sleeps until it."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._lock = threading.Lock()
        self._next = 0.0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


# one budget per system and process: the read-ahead thread and the step's reads of a system
# share it, so together they keep to the rate
_BUDGETS: dict[tuple[str, str, float], Budget] = {}
_BUDGETS_LOCK = threading.Lock()


def budget(tenant: str, options: HttpOptions) -> Budget | None:
    """The process's budget of a system (by tenant, base URL and rate); None without one."""
    rate = options.requests_per_second
    if rate is None:
        return None
    key = (tenant, options.base_url, rate)
    with _BUDGETS_LOCK:
        return _BUDGETS.setdefault(key, Budget(rate))


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (a number or an HTTP date); None without one."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    when = email.utils.parsedate_to_datetime(value) if value else None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
