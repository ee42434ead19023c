"""Rules on a batch while it is written — the Spark edge of quality.

Every row-level rule becomes one flag in a per-row array of the rules the row breaks
(`FAILED_RULES`), computed while the batch is staged. Its count, with two sample values, is an
aggregate over that array, taken only over the staged files that hold any broken rule. UNIQUE
rules are one groupBy over the staged key columns only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lakeguard.quality.compiled import CompiledRule
from lakeguard.quality.outcome import RuleOutcome, outcome_for
from lakeguard.shapes import JsonObject
from lakeguard.store.ddl import quote
from lakeguard.vocabulary import PARENT_VERSION

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


def rule_metrics(rules: list[CompiledRule]) -> list[Column]:
    """Aggregates over rows that carry `FAILED_RULES`: rows, failures and samples per rule."""
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
    counts: Mapping[str, Any], rules: list[CompiledRule], rows: int
) -> list[RuleOutcome]:
    """Outcomes of the row-level rules from the `rule_metrics` aggregates (pure; an empty
    mapping means no row broke any rule)."""
    outcomes = []
    for i, rule in enumerate(r for r in rules if r.row_level):
        samples = [counts.get(f"__smin{i}"), counts.get(f"__smax{i}")]
        outcomes.append(outcome_for(rule, rows, int(counts.get(f"__fail{i}") or 0), samples))
    return outcomes


def count_failures(frame: DataFrame, rules: list[CompiledRule]) -> JsonObject:
    """The `rule_metrics` aggregates over staged rows."""
    row = frame.agg(*rule_metrics(rules)).collect()[0]
    return row.asDict()


def implied_unique(rule: CompiledRule, unique_on: tuple[str, ...]) -> bool:
    """Whether a UNIQUE rule cannot fail on a batch unique on `unique_on` (within each parent
    version) by construction: its keys include all of them. Uniqueness on some columns holds
    on any superset of them."""
    keys = {k.lower() for k in rule.unique_keys}  # Spark's column names ignore case
    return bool(keys and unique_on) and {k.lower() for k in unique_on} <= keys


def evaluate_unique(frame: DataFrame, rule: CompiledRule, rows: int) -> RuleOutcome:
    """Rows whose (non-null) key occurs more than once in the batch (in one parent version,
    when the batch spans several)."""
    from pyspark.sql import functions as F

    keys = [F.col(quote(c)) for c in rule.unique_keys]
    if PARENT_VERSION in frame.columns:
        keys.append(F.col(PARENT_VERSION))
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


def evaluate_row_count(
    rule: CompiledRule, rows: int, per_version: Mapping[int, int] | None = None
) -> RuleOutcome:
    """The batch's row count against the rule's bounds (pure): all rows fail when outside.

    `per_version`: the rows of each parent version of a batch that spans several; each
    version's count must lie inside, as it would have in a run of its own.
    """
    assert rule.row_bounds is not None
    low, high = rule.row_bounds

    def inside(n: int) -> bool:
        return (low is None or n >= low) and (high is None or n <= high)

    if per_version:
        outside = {v: n for v, n in sorted(per_version.items()) if not inside(n)}
        samples: list[str | None] = [f"parent v{v}: {n}" for v, n in list(outside.items())[:2]]
        if not samples:
            samples.append(str(rows))
        return outcome_for(rule, max(rows, 1), sum(outside.values()) if outside else 0, samples)
    ok = inside(rows)
    return outcome_for(rule, max(rows, 1), 0 if ok else max(rows, 1), [str(rows)])


def evaluate_aggregate(frame: DataFrame | None, rule: CompiledRule, rows: int) -> RuleOutcome:
    """A condition over aggregates of the batch (of each parent version, when it spans
    several): when false, the whole batch fails it."""
    from pyspark.sql import functions as F

    holds = False
    if frame is not None:
        condition = F.expr(rule.aggregate_sql or "FALSE").alias("holds")
        if PARENT_VERSION in frame.columns:
            found = frame.groupBy(PARENT_VERSION).agg(condition).collect()
            holds = all(bool(r["holds"]) for r in found)
        else:
            row = frame.agg(condition).first()
            holds = bool(row and row["holds"])
    return outcome_for(rule, max(rows, 1), 0 if holds else max(rows, 1), [])


def evaluate_reference(
    frame: DataFrame | None, rule: CompiledRule, rows: int, referenced: DataFrame | None
) -> RuleOutcome:
    """Rows whose (non-null) key has no match in the referenced dataset's approved snapshot."""
    from pyspark.sql import functions as F

    assert rule.reference is not None
    _, columns, ref_columns = rule.reference
    if frame is None:
        return outcome_for(rule, rows, 0, [])
    keys = frame.where(" AND ".join(f"{quote(c)} IS NOT NULL" for c in columns))
    if referenced is not None:
        known = referenced.select(
            *[F.col(quote(r)).alias(c) for c, r in zip(columns, ref_columns, strict=True)]
        ).distinct()
        keys = keys.join(known, on=list(columns), how="left_anti")
    missing = (
        keys.select(F.expr(rule.sample_sql or "NULL").alias("s"))
        .agg(F.count(F.lit(1)).alias("n"), F.min("s").alias("a"), F.max("s").alias("b"))
        .first()
    )
    assert missing is not None
    return outcome_for(rule, rows, int(missing["n"] or 0), [missing["a"], missing["b"]])
