"""Watermarks of incremental sources, as text in `source_progress` (pure).

A watermark is the highest value of the source's watermark column that a promoted batch read.
The next batch reads rows above it, less the source's lookback (to catch late rows). An http
source sends it in a query parameter, in the API's own format: one coarser than the column
makes the read start at the beginning of the format's granule, inclusive (`above`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from lakeguard.records.schema.types import INTEGRAL_TYPES, TEMPORAL_TYPES
from lakeguard.records.schema.watermark_format import as_datetime, coarser, floor, granule, render
from lakeguard.words import durations
from lakeguard.words.errors import ConfigError


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


@dataclass(frozen=True)
class Above:
    """Where an incremental read starts: the value sent to the source, and the rows kept."""

    sent: str  # as the source takes it (the parameter's format)
    lower: str  # in the column's type, as text: rows above it are kept
    inclusive: bool  # rows at `lower` are kept too (the start of a coarse format's granule)


def above(text: str, data_type: str, lookback: float | str | None, fmt: str | None) -> Above:
    """Where a read above the watermark `text` starts, sent in format `fmt` (None: as
    stored). A format coarser than the column cannot say where in its granule the last batch
    ended, so the read starts at the granule's beginning, rows there included: the engine
    drops those the dataset holds already (`runner.inputs.without_repeats`)."""
    lower = lower_bound(text, data_type, lookback)
    kind = data_type.lower()
    if fmt is None or kind not in TEMPORAL_TYPES:
        return Above(lower, lower, inclusive=False)
    moment = as_datetime(lower)
    if not coarser(fmt, kind):
        return Above(render(moment, fmt), lower, inclusive=False)
    start = floor(moment, granule(fmt))
    held = start.date() if kind == "date" else start
    return Above(render(start, fmt), watermark_text(held), inclusive=True)
