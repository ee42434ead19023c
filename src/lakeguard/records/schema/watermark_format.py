"""How an http records source writes its watermark into the query parameter (pure).

A watermark is stored as text (`2013-03-15 15:00:00.000000`); an API may want a date, epoch
seconds or milliseconds, or its own pattern. `watermark_format` is one of the keywords `date`,
`epoch`, `epoch_ms` or a strftime pattern of the directives below. Its *granule* is the finest
unit it writes: a parameter coarser than the watermark column (a date for a timestamp, a
pattern without time fields, whole seconds for microseconds) cannot say where in its granule
the last batch ended, so the read starts at the granule's beginning and the rows the dataset
already holds are dropped by content.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from enum import IntEnum

KEYWORDS = ("date", "epoch", "epoch_ms")


class Granule(IntEnum):
    """The finest unit a format writes, coarsest first."""

    YEAR = 0
    MONTH = 1
    DAY = 2
    HOUR = 3
    MINUTE = 4
    SECOND = 5
    MILLISECOND = 6
    MICROSECOND = 7


# strftime directives a pattern may use, and the unit each writes (None: no unit of time)
DIRECTIVES: dict[str, Granule | None] = {
    "Y": Granule.YEAR,
    "y": Granule.YEAR,
    "m": Granule.MONTH,
    "b": Granule.MONTH,
    "B": Granule.MONTH,
    "d": Granule.DAY,
    "j": Granule.DAY,
    "H": Granule.HOUR,
    "I": Granule.HOUR,
    "p": None,
    "M": Granule.MINUTE,
    "S": Granule.SECOND,
    "f": Granule.MICROSECOND,
    "z": None,
    "Z": None,
    "%": None,
}
_DIRECTIVE = re.compile(r"%(.)?", re.DOTALL)
# what a watermark column of each type resolves
RESOLUTION = {"date": Granule.DAY, "timestamp": Granule.MICROSECOND}


def format_problem(fmt: str) -> str | None:
    """Why `fmt` is not a watermark format (None: it is one)."""
    if fmt in KEYWORDS:
        return None
    if "%" not in fmt:
        return (
            f"{fmt!r} is neither {', '.join(KEYWORDS)} nor a strftime pattern "
            "(e.g. '%Y-%m-%dT%H:%M:%S')"
        )
    found = [m.group(1) for m in _DIRECTIVE.finditer(fmt)]
    unknown = sorted({d or "" for d in found if d not in DIRECTIVES})
    if unknown:
        return (
            f"{fmt!r} uses {', '.join('%' + d for d in unknown)}; a watermark pattern may use "
            + " ".join("%" + d for d in DIRECTIVES)
        )
    if not {"Y", "y"} & set(found):
        return f"{fmt!r} writes no year (%Y or %y): an API could not compare it"
    return None


def granule(fmt: str) -> Granule:
    """The finest unit `fmt` writes (`fmt` is valid)."""
    if fmt == "date":
        return Granule.DAY
    if fmt == "epoch":
        return Granule.SECOND
    if fmt == "epoch_ms":
        return Granule.MILLISECOND
    units = [DIRECTIVES[m.group(1)] for m in _DIRECTIVE.finditer(fmt)]
    return max((u for u in units if u is not None), default=Granule.YEAR)


def coarser(fmt: str, column_type: str) -> bool:
    """Whether `fmt` writes less than a watermark column of `column_type` holds."""
    return granule(fmt) < RESOLUTION.get(column_type.lower(), Granule.MICROSECOND)


def floor(value: datetime, unit: Granule) -> datetime:
    """The start of the `unit` that `value` is in."""
    if unit == Granule.YEAR:
        return value.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == Granule.MONTH:
        return value.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == Granule.DAY:
        return value.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == Granule.HOUR:
        return value.replace(minute=0, second=0, microsecond=0)
    if unit == Granule.MINUTE:
        return value.replace(second=0, microsecond=0)
    if unit == Granule.SECOND:
        return value.replace(microsecond=0)
    if unit == Granule.MILLISECOND:
        return value.replace(microsecond=value.microsecond // 1000 * 1000)
    return value


def render(value: datetime, fmt: str) -> str:
    """`value` (naive UTC, as watermarks are stored) as `fmt` writes it."""
    aware = value.replace(tzinfo=UTC)
    if fmt == "date":
        return value.date().isoformat()
    if fmt == "epoch":
        return str(int(aware.timestamp()))
    if fmt == "epoch_ms":
        return str(int(aware.timestamp()) * 1000 + value.microsecond // 1000)
    return aware.strftime(fmt)


def as_datetime(text: str) -> datetime:
    """A stored date or timestamp watermark as a naive datetime."""
    if len(text) == 10:
        found = date.fromisoformat(text)
        return datetime(found.year, found.month, found.day)
    return datetime.fromisoformat(text)
