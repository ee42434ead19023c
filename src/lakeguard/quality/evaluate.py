"""Rules on a batch while it is written — the Spark edge of quality.

Every row-level rule becomes one flag in a per-row array of the rules the row breaks
(`FAILED_RULES`), and its count, with two sample values, becomes one aggregate observed during
the staged write (`DataFrame.observe`): no pass over the data of its own. UNIQUE rules are the
exception: each is one groupBy over the staged key columns only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lakeguard.quality.outcome import RuleOutcome, outcome_for
from lakeguard.quality.rules import CompiledRule
from lakeguard.store.ddl import quote

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

FAILED_RULES = "_laketx_failed_rules"
ROWS_METRIC = "__rows"


def failed_rules_column(rules: list[CompiledRule]) -> Column:
    """Per row, the ids of the row-level rules it breaks (empty when it breaks none).

    Most rows break nothing: they get the empty array after one OR of the predicates, and
    only a failing row pays for building its array.
    """
    from functools import reduce

    from pyspark.sql import functions as F

    empty = F.array().cast("array<string>")
    row_rules = [r for r in rules if r.row_level]
    if not row_rules:
        return empty
    violated = [F.expr(r.violation_sql or "FALSE") for r in row_rules]
    flags = [F.when(v, F.lit(r.rule_id)) for v, r in zip(violated, row_rules, strict=True)]
    failing = F.filter(F.array(*flags), lambda x: x.isNotNull())
    any_violated = F.coalesce(reduce(lambda a, b: a | b, violated), F.lit(False))
    return F.when(any_violated, failing).otherwise(empty)


def observed_metrics(rules: list[CompiledRule]) -> list[Column]:
    """Aggregates to observe over rows that carry `FAILED_RULES`: rows, failures, samples."""
    from pyspark.sql import functions as F

    metrics = [F.count(F.lit(1)).alias(ROWS_METRIC)]
    for i, rule in enumerate(r for r in rules if r.row_level):
        broken = F.array_contains(F.col(FAILED_RULES), rule.rule_id)
        metrics.append(F.sum(F.when(broken, 1).otherwise(0)).alias(f"__fail{i}"))
        if rule.sample_sql:
            sample = F.when(broken, F.expr(rule.sample_sql))
            metrics += [F.min(sample).alias(f"__smin{i}"), F.max(sample).alias(f"__smax{i}")]
    return metrics


def row_outcomes(
    observed: Mapping[str, Any], rules: list[CompiledRule], rows: int
) -> list[RuleOutcome]:
    """Outcomes of the row-level rules from the observed aggregates (pure)."""
    outcomes = []
    for i, rule in enumerate(r for r in rules if r.row_level):
        samples = [observed.get(f"__smin{i}"), observed.get(f"__smax{i}")]
        outcomes.append(outcome_for(rule, rows, int(observed.get(f"__fail{i}") or 0), samples))
    return outcomes


def recount(frame: DataFrame, rules: list[CompiledRule]) -> dict[str, Any]:
    """The observed aggregates computed again from staged rows (when observation miscounted)."""
    row = frame.agg(*observed_metrics(rules)).collect()[0]
    return row.asDict()


def evaluate_unique(frame: DataFrame, rule: CompiledRule, rows: int) -> RuleOutcome:
    """Rows whose (non-null) key occurs more than once in the batch."""
    from pyspark.sql import functions as F

    keys = [F.col(quote(c)) for c in rule.unique_keys]
    not_null = " AND ".join(f"{quote(c)} IS NOT NULL" for c in rule.unique_keys)
    dupes = (
        frame.select(*keys)
        .where(not_null)
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
