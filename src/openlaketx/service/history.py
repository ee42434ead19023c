"""A dataset's history as the dashboard and the API give it: its column profiles over its last
batches (null ratio, mean, distinct count: drift) and its trust score with the components
behind it, after each attempt.

Both are read by delta-rs from the metadata tables (`data_profiling_results`, `trust_scores`):
no Spark.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from lakeguard.records.checks.result_rows import TrustScoreRow
from openlaketx.lakehouse import Lakehouse

# What drift is seen in: the footer profile gives null_ratio on every batch, the full profile
# mean (numeric columns) and approx_distinct when the dataset asks for it.
DRIFT_METRICS = ("null_ratio", "mean", "approx_distinct")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProfilePoint(_Model):
    run_id: str
    profiled_at: datetime
    value: float | None  # None: the metric was recorded without a value (e.g. all nulls)


class ProfileSeries(_Model):
    column_name: str
    metric: str
    points: list[ProfilePoint]  # oldest first; only the batches that recorded the metric


class ProfileHistory(_Model):
    dataset_id: str
    batches: int  # the last this many profiled batches were read
    metrics: list[str]
    series: list[ProfileSeries]  # by column, then metric in the order of `metrics`


class TrustPoint(_Model):
    run_id: str
    computed_at: datetime
    score: int
    quality: float
    freshness: float
    stability: float
    lineage: float


class TrustHistory(_Model):
    dataset_id: str
    points: list[TrustPoint]  # oldest first


def profile_history(lh: Lakehouse, dataset_id: str, batches: int) -> ProfileHistory:
    """The drift metrics of each of the dataset's columns over its last `batches` profiled
    batches, oldest first."""
    lh.dataset(dataset_id)  # NotRegisteredError (404) when it is not this tenant's
    rows = lh.store.rows(
        "data_profiling_results",
        filters=[("dataset_id", "=", dataset_id), ("metric", "in", list(DRIFT_METRICS))],
        columns=["run_id", "column_name", "metric", "value", "profiled_at"],
    )
    when: dict[str, datetime] = {}
    for r in rows:
        when[r["run_id"]] = max(r["profiled_at"], when.get(r["run_id"], r["profiled_at"]))
    kept = set(sorted(when, key=lambda run: when[run])[-batches:])
    found: dict[tuple[str, str], list[ProfilePoint]] = {}
    for r in sorted(rows, key=lambda r: r["profiled_at"]):
        if r["run_id"] in kept:
            found.setdefault((r["column_name"], r["metric"]), []).append(
                ProfilePoint(
                    run_id=r["run_id"], profiled_at=r["profiled_at"], value=_number(r["value"])
                )
            )
    order = {m: i for i, m in enumerate(DRIFT_METRICS)}
    return ProfileHistory(
        dataset_id=dataset_id,
        batches=batches,
        metrics=list(DRIFT_METRICS),
        series=[
            ProfileSeries(column_name=column, metric=metric, points=points)
            for (column, metric), points in sorted(
                found.items(), key=lambda item: (item[0][0], order[item[0][1]])
            )
        ],
    )


def trust_history(lh: Lakehouse, dataset_id: str, last: int) -> TrustHistory:
    """The dataset's trust score and its components after each of its last `last` attempts,
    oldest first."""
    lh.dataset(dataset_id)
    rows = lh.store.read(TrustScoreRow, filters=[("dataset_id", "=", dataset_id)])
    rows = sorted(rows, key=lambda r: r.computed_at)[-last:]
    return TrustHistory(
        dataset_id=dataset_id,
        points=[
            TrustPoint(
                run_id=r.run_id,
                computed_at=r.computed_at,
                score=r.score,
                quality=r.quality,
                freshness=r.freshness,
                stability=r.stability,
                lineage=r.lineage,
            )
            for r in rows
        ],
    )


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:  # a metric that is not a number is not drawn
        return None
