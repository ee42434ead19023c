"""The full column profile of a staged batch: two Spark jobs over its Parquet files.

One aggregate gives every column's approximate distinct count and the numeric columns' mean
and standard deviation; one grouped count over the string columns (stacked into one column, so
it is one job whatever their number) gives each one's most frequent values. The footer
profile (nulls, min, max) costs nothing and comes from `loads.footers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.records.quality.outcome import ProfileMetric
from lakeguard.records.quality.profiling import top_values_text
from lakeguard.words.quoting import quote

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

NUMERIC = frozenset({"integer", "long", "short", "byte", "double", "float"})


def full_profile(frame: DataFrame, types: dict[str, str], top: int) -> list[ProfileMetric]:
    """approx_distinct, mean and stddev (numeric), top_values (strings) of `types`' columns."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not types:
        return []
    aggregates = []
    for i, (name, kind) in enumerate(types.items()):
        column = F.col(quote(name))
        aggregates.append(F.approx_count_distinct(column).alias(f"d{i}"))
        if kind in NUMERIC:
            aggregates.append(F.avg(column).alias(f"m{i}"))
            aggregates.append(F.stddev_samp(column).alias(f"s{i}"))
    row = frame.agg(*aggregates).first()
    assert row is not None
    found = row.asDict()
    metrics: list[ProfileMetric] = []
    for i, (name, kind) in enumerate(types.items()):
        metrics.append(ProfileMetric(name, "approx_distinct", str(found[f"d{i}"])))
        if kind in NUMERIC:
            for key, metric in ((f"m{i}", "mean"), (f"s{i}", "stddev")):
                value = found[key]
                metrics.append(ProfileMetric(name, metric, None if value is None else repr(value)))
    strings = [name for name, kind in types.items() if kind == "string"]
    if strings and top > 0:
        pairs = F.explode(
            F.array(
                *[
                    F.struct(F.lit(name).alias("c"), F.col(quote(name)).alias("v"))
                    for name in strings
                ]
            )
        ).alias("p")
        ranked = (
            frame.select(pairs)
            .groupBy("p.c", "p.v")
            .count()
            .withColumn(
                "r",
                F.row_number().over(
                    Window.partitionBy("c").orderBy(F.col("count").desc(), F.col("v"))
                ),
            )
            .where(F.col("r") <= top)
            .collect()
        )
        by_column: dict[str, list[tuple[int, str | None, int]]] = {}
        for r in ranked:
            by_column.setdefault(r["c"], []).append((r["r"], r["v"], int(r["count"])))
        for name in strings:
            listed = sorted(by_column.get(name, []))
            metrics.append(
                ProfileMetric(name, "top_values", top_values_text([(v, n) for _, v, n in listed]))
            )
    return metrics
