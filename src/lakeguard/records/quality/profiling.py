"""Column profiles: when the full profile is due, and how far a profile drifted (pure).

Every evaluated batch of a profiled dataset records the footer profile, which costs nothing:
`row_count` and, per column, `null_count`, `null_ratio`, `min`, `max`. The full profile adds
`approx_distinct`, `mean` and `stddev` (numeric columns) and `top_values` (string columns)
at the dataset's cadence: every batch, every Nth batch, or when a cron time has passed since
the last full profile. Its drift against the last profile feeds PROFILE policies.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from croniter import croniter

FULL_METRICS = ("approx_distinct", "mean", "stddev", "top_values")


@dataclass(frozen=True)
class ProfileCadence:
    """When a dataset's full profile runs (`every` batches, or at `cron` times)."""

    every: int | None = None
    cron: str | None = None
    top_values: int = 5

    @classmethod
    def from_json(cls, raw: object) -> ProfileCadence | None:
        """The cadence stored in a transform (None: footer profile only, or no profile)."""
        if not isinstance(raw, dict):
            return None
        return cls(raw.get("every"), raw.get("cron"), int(raw.get("top_values", 5)))


@dataclass(frozen=True)
class LastProfiles:
    """What the store holds about a dataset's earlier profiles."""

    latest: Mapping[tuple[str, str], str | None]  # (column, metric) -> value, last profile
    full_at: datetime | None = None  # when the last full profile ran
    batches_since_full: int = 0  # evaluated batches since then


def full_profile_due(cadence: ProfileCadence | None, last: LastProfiles, now: datetime) -> bool:
    """Whether this batch gets the full profile."""
    if cadence is None:
        return False
    if last.full_at is None:
        return True
    if cadence.cron:
        due: datetime = croniter(cadence.cron, last.full_at).get_next(datetime)
        return due <= now
    return last.batches_since_full + 1 >= (cadence.every or 1)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def profile_drift(
    previous: Mapping[tuple[str, str], str | None], current: Mapping[tuple[str, str], str | None]
) -> dict[str, float]:
    """How far the current profile moved from the previous one, over the columns both have.

    - `null_ratio_increase`: the largest rise of a column's share of nulls (0..1);
    - `mean_shift`: the largest move of a numeric column's mean, in previous standard
      deviations (columns whose previous deviation is 0 or unknown are not measured);
    - `distinct_change`: the largest relative change of a column's approximate distinct count;
    - `compared`: 1 when a previous profile was there to compare with, else 0;
    - `full_compared`: 1 when both profiles are full ones (mean and distinct were compared).
    """
    columns = {c for c, m in current if c != "*"} & {c for c, m in previous if c != "*"}
    null_rise = mean_shift = distinct = 0.0
    full = False
    for column in columns:
        now_null = _number(current.get((column, "null_ratio")))
        was_null = _number(previous.get((column, "null_ratio")))
        if now_null is not None and was_null is not None:
            null_rise = max(null_rise, now_null - was_null)
        now_mean, was_mean = (_number(p.get((column, "mean"))) for p in (current, previous))
        was_std = _number(previous.get((column, "stddev")))
        if now_mean is not None and was_mean is not None:
            full = True
            if was_std:  # a constant (or single-row) column gives no scale to measure by
                mean_shift = max(mean_shift, abs(now_mean - was_mean) / was_std)
        now_d, was_d = (_number(p.get((column, "approx_distinct"))) for p in (current, previous))
        if now_d is not None and was_d is not None:
            full = True
            distinct = max(distinct, abs(now_d - was_d) / max(was_d, 1.0))
    return {
        "null_ratio_increase": round(null_rise, 6),
        "mean_shift": round(mean_shift, 6),
        "distinct_change": round(distinct, 6),
        "compared": 1.0 if columns else 0.0,
        "full_compared": 1.0 if full else 0.0,
    }


def top_values_text(pairs: list[tuple[str | None, int]]) -> str:
    """The `top_values` metric's value: a JSON list of [value, count], most frequent first."""
    return json.dumps([[v, n] for v, n in pairs], separators=(",", ":"))
