"""The duration grammar of metadata: "90 seconds", "15 minutes", "2 hours", "1 day" (pure).

One home for the pattern the models validate with and the arithmetic the engine and the
rules use (a lookback, a FRESHNESS `max_age`).
"""

from __future__ import annotations

import re
from datetime import timedelta

DURATION = r"^\s*\d+\s*(second|minute|hour|day)s?\s*$"
_PARTS = re.compile(r"^\s*(\d+)\s*(second|minute|hour|day)s?\s*$")
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def seconds(text: object) -> int | None:
    """Seconds in a duration such as '2 hours' (None when it is not one)."""
    match = _PARTS.match(str(text or ""))
    return int(match.group(1)) * _UNITS[match.group(2)] if match else None


def duration(text: object) -> timedelta | None:
    """A duration as a timedelta (None when the text is not one)."""
    found = seconds(text)
    return None if found is None else timedelta(seconds=found)
