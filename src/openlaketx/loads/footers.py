"""What the Parquet footers of a staged batch tell without reading its rows.

Each staged file's footer holds its record count and, per column, min, max and null count. They
become the Delta statistics of the file's add action (so data skipping keeps working on files
published by delta-rs) and the batch's column profile, at no cost in Spark.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import pyarrow.parquet as pq

from openlaketx import storage

# Delta truncates string statistics to a 32-character prefix; a longer max cannot be truncated
# safely (a prefix sorts below the value), so it is left out and readers do not skip on it.
STRING_PREFIX = 32


@dataclass
class ColumnSummary:
    min: Any = None
    max: Any = None
    null_count: int | None = 0
    bounded: bool = True  # every row group had min/max (or no non-null value)


@dataclass(frozen=True)
class FileFooter:
    path: str
    size: int
    modification_time: int  # ms since the epoch
    num_records: int
    columns: dict[str, ColumnSummary] = field(default_factory=dict)


def _merge(into: ColumnSummary, low: Any, high: Any, nulls: int | None, has_bounds: bool) -> None:
    if nulls is None or into.null_count is None:
        into.null_count = None
    else:
        into.null_count += nulls
    if not has_bounds:
        into.bounded = False
        return
    if low is None or high is None:  # no non-null value in this part
        return
    into.min = low if into.min is None or low < into.min else into.min
    into.max = high if into.max is None or high > into.max else into.max


def read_footer(path: str) -> FileFooter:
    """The footer summary of one Parquet file (top-level columns only)."""
    if storage.is_remote(path):
        with storage.open_input(path) as handle:
            meta = pq.ParquetFile(handle).metadata
        size, mtime = storage.file_info(path)
    else:
        meta = pq.ParquetFile(path).metadata
        stat = os.stat(path)
        size, mtime = stat.st_size, int(stat.st_mtime * 1000)
    columns: dict[str, ColumnSummary] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            name = chunk.path_in_schema
            if "." in name:  # nested columns: no statistics kept
                continue
            summary = columns.setdefault(name, ColumnSummary())
            stats = chunk.statistics
            if stats is None:
                _merge(summary, None, None, None, False)
                continue
            nulls = int(stats.null_count) if stats.has_null_count else None
            all_null = nulls is not None and nulls == group.num_rows
            if all_null:
                _merge(summary, None, None, nulls, True)
            else:
                has = bool(stats.has_min_max)
                _merge(summary, stats.min if has else None, stats.max if has else None, nulls, has)
    return FileFooter(
        path=path,
        size=size,
        modification_time=mtime,
        num_records=int(meta.num_rows),
        columns=columns,
    )


def _stat_value(value: Any, *, upper: bool) -> int | float | str | None:
    """A footer value as Delta statistics JSON, or None when it cannot be a safe bound."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, datetime):
        utc = value.astimezone(UTC) if value.tzinfo else value
        return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        if len(value) <= STRING_PREFIX:
            return value
        return None if upper else value[:STRING_PREFIX]
    return None


def delta_stats(footer: FileFooter, columns: list[str]) -> str:
    """The `stats` JSON of a Delta add action for `footer`, over the table's `columns`."""
    mins: dict[str, int | float | str] = {}
    maxs: dict[str, int | float | str] = {}
    nulls: dict[str, int] = {}
    for name in columns:
        summary = footer.columns.get(name)
        if summary is None:
            continue
        if summary.null_count is not None:
            nulls[name] = summary.null_count
        if summary.bounded and summary.min is not None:
            low = _stat_value(summary.min, upper=False)
            high = _stat_value(summary.max, upper=True)
            if low is not None:
                mins[name] = low
            if high is not None:
                maxs[name] = high
    return json.dumps(
        {
            "numRecords": footer.num_records,
            "minValues": mins,
            "maxValues": maxs,
            "nullCount": nulls,
        },
        separators=(",", ":"),
    )


def highest(footers: list[FileFooter], column: str) -> Any:
    """The greatest non-null value of `column` over the files, or None when a file's footer
    cannot tell (no statistics) or no file has a value."""
    best = None
    for footer in footers:
        summary = footer.columns.get(column)
        if summary is None or not summary.bounded:
            return None
        if summary.max is not None and (best is None or summary.max > best):
            best = summary.max
    return best


def _profile_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return naive.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def profile(footers: list[FileFooter], columns: list[str]) -> list[tuple[str, str, str | None]]:
    """(column, metric, value) over all files: null_count, null_ratio, min and max per column,
    row_count."""
    out: list[tuple[str, str, str | None]] = []
    rows = sum(f.num_records for f in footers)
    for name in columns:
        total = ColumnSummary()
        for footer in footers:
            summary = footer.columns.get(name)
            if summary is None:
                total.bounded, total.null_count = False, None
                continue
            _merge(total, summary.min, summary.max, summary.null_count, summary.bounded)
        out.append(
            (name, "null_count", None if total.null_count is None else str(total.null_count))
        )
        if total.null_count is not None and rows:
            out.append((name, "null_ratio", repr(round(total.null_count / rows, 6))))
        out.append((name, "min", _profile_text(total.min) if total.bounded else None))
        out.append((name, "max", _profile_text(total.max) if total.bounded else None))
    out.append(("*", "row_count", str(rows)))
    return out
