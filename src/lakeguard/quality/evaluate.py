"""Evaluate compiled rules and profiling metrics on a batch — the Spark edge of quality.

All row-level rules and all profiling metrics are computed in **one** aggregation pass over the
batch. UNIQUE rules are the exception: each is one groupBy on its key (an exact
COUNT(DISTINCT) inside the big aggregate is far slower at millions of rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.quality.outcome import RuleOutcome, outcome_for
from lakeguard.quality.rules import CompiledRule
from lakeguard.store.ddl import quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

_PROFILABLE = (
    "string",
    "int",
    "bigint",
    "smallint",
    "tinyint",
    "double",
    "float",
    "date",
    "timestamp",
    "boolean",
)


@dataclass(frozen=True)
class ProfileMetric:
    column: str
    metric: str
    value: str | None


@dataclass(frozen=True)
class BatchEvaluation:
    rows: int
    outcomes: list[RuleOutcome]
    profile: list[ProfileMetric]


def _profilable(frame: DataFrame) -> list[str]:
    return [
        f.name
        for f in frame.schema.fields
        if f.dataType.simpleString().split("(")[0] in _PROFILABLE and not f.name.startswith("_")
    ]


def evaluate_batch(frame: DataFrame, rules: list[CompiledRule], profile: bool) -> BatchEvaluation:
    """Rule outcomes (and optional column profile) for `frame`."""
    from pyspark.sql import functions as F

    aggs: list[Column] = [F.count(F.lit(1)).alias("__rows")]
    row_rules = [r for r in rules if r.row_level]
    for i, rule in enumerate(row_rules):
        violated = F.expr(rule.violation_sql or "FALSE")
        aggs.append(F.sum(F.when(violated, 1).otherwise(0)).alias(f"__fail{i}"))
        if rule.sample_sql:
            sample = F.when(violated, F.expr(rule.sample_sql))
            aggs += [F.min(sample).alias(f"__smin{i}"), F.max(sample).alias(f"__smax{i}")]
    columns = _profilable(frame) if profile else []
    for j, name in enumerate(columns):
        col = F.col(quote(name))
        aggs += [
            F.sum(F.when(col.isNull(), 1).otherwise(0)).alias(f"__null{j}"),
            F.min(col).cast("string").alias(f"__min{j}"),
            F.max(col).cast("string").alias(f"__max{j}"),
        ]
    result = frame.agg(*aggs).collect()[0].asDict()
    rows = int(result["__rows"])

    outcomes: list[RuleOutcome] = []
    for i, rule in enumerate(row_rules):
        samples = [result.get(f"__smin{i}"), result.get(f"__smax{i}")]
        outcomes.append(outcome_for(rule, rows, int(result[f"__fail{i}"] or 0), samples))
    for rule in rules:
        if not rule.row_level:
            outcomes.append(_evaluate_unique(frame, rule, rows))
    metrics: list[ProfileMetric] = []
    for j, name in enumerate(columns):
        metrics += [
            ProfileMetric(name, "null_count", str(int(result[f"__null{j}"] or 0))),
            ProfileMetric(name, "min", result[f"__min{j}"]),
            ProfileMetric(name, "max", result[f"__max{j}"]),
        ]
    if profile:
        metrics.append(ProfileMetric("*", "row_count", str(rows)))
    order = {r.rule_id: k for k, r in enumerate(rules)}
    return BatchEvaluation(rows, sorted(outcomes, key=lambda o: order[o.rule_id]), metrics)


def _evaluate_unique(frame: DataFrame, rule: CompiledRule, rows: int) -> RuleOutcome:
    """Rows whose (non-null) key occurs more than once in the batch."""
    from pyspark.sql import functions as F

    keys = [F.col(quote(c)) for c in rule.unique_keys]
    not_null = " AND ".join(f"{quote(c)} IS NOT NULL" for c in rule.unique_keys)
    dupes = (
        frame.where(not_null)
        .groupBy(*keys)
        .count()
        .where(F.col("count") > 1)
        .withColumn("__sample", F.expr(rule.sample_sql or "NULL"))
        .agg(
            F.sum("count").alias("failed"),
            F.min("__sample").alias("a"),
            F.max("__sample").alias("b"),
        )
        .collect()[0]
    )
    return outcome_for(rule, rows, int(dupes["failed"] or 0), [dupes["a"], dupes["b"]])


def failed_rules_column(rules: list[CompiledRule]) -> Column:
    """Per row, the ids of the rules it breaks (for the quarantine copy of a rejected batch)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    flags = []
    for rule in rules:
        if rule.row_level:
            violated = F.expr(rule.violation_sql or "FALSE")
        else:
            window = Window.partitionBy(*[F.col(quote(c)) for c in rule.unique_keys])
            keys_present = F.expr(" AND ".join(f"{quote(c)} IS NOT NULL" for c in rule.unique_keys))
            violated = keys_present & (F.count(F.lit(1)).over(window) > 1)
        flags.append(F.when(violated, F.lit(rule.rule_id)))
    if not flags:
        return F.array().cast("array<string>")
    return F.filter(F.array(*flags), lambda x: x.isNotNull())
