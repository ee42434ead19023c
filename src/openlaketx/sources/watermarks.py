"""Watermarks of incremental sources, as text in `source_progress` (pure).

A watermark is the highest value of the source's watermark column that a promoted batch read.
The next batch reads rows above it, less the source's lookback (to catch late rows).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from lakeguard import durations
from lakeguard.errors import ConfigError
from lakeguard.schema.types import INTEGRAL_TYPES, TEMPORAL_TYPES


def watermark_text(value: Any) -> str:
    """A watermark value as stored: ISO text for dates and (naive UTC) timestamps."""
    if isinstance(value, datetime):
        naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return naive.isoformat(sep=" ", timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def duration(text: str) -> timedelta:
    found = durations.duration(text)
    if found is None:
        raise ConfigError(
            f"lookback {text!r} is not a duration",
            fix="write it as '<n> seconds|minutes|hours|days'",
        )
    return found


def lower_bound(text: str, data_type: str, lookback: float | str | None) -> str:
    """The value rows must exceed to be read: the watermark less the lookback, as text."""
    kind = data_type.lower()
    if lookback is None:
        return text
    if kind in TEMPORAL_TYPES:
        if not isinstance(lookback, str):
            raise ConfigError(
                f"a {kind} watermark needs a duration as lookback, not {lookback!r}",
                fix="write the lookback as e.g. '2 hours'",
            )
        if kind == "date":
            return (date.fromisoformat(text) - duration(lookback)).isoformat()
        moved = datetime.fromisoformat(text) - duration(lookback)
        return moved.isoformat(sep=" ", timespec="microseconds")
    if isinstance(lookback, str):
        raise ConfigError(
            f"a numeric watermark needs a number as lookback, not {lookback!r}",
            fix="write the lookback as a number of the watermark's unit",
        )
    moved_number = Decimal(text) - Decimal(str(lookback))
    if kind in INTEGRAL_TYPES:
        # a whole number, as the column holds it: `lookback: 5` is 5.0 once parsed, and
        # "97.0" is neither what an API takes for an integer nor castable to one (ANSI)
        return str(moved_number.to_integral_value(rounding=ROUND_FLOOR))
    return str(moved_number)
