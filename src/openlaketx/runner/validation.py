"""The gate's figures for a staged batch: rule outcomes and the column profile.

Every staged row carries, per row-level rule, a flag column computed during the one write;
the staged files' Parquet footers count each rule's failures and hold two samples of it, and
give the row counts and the profile, so row rules cost no read of the batch at all, clean or
dirty (`rule_tallies`). UNIQUE rules are one pass over the staged key columns, except where
the batch is unique on them by construction (a merge that keeps the last row of each key by
`sequence_by`: the check could only find nothing).

(Counting with `DataFrame.observe` during the write was measured first: its metrics are not
code-generated and cost about 1 s per 3 M rows on the 2-core machine, even with two
aggregates, and PySpark 4.1 counts a retried task twice. Footers are exact and free.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.quality.outcome import BatchEvaluation, ProfileMetric, outcome_for
from lakeguard.records.schema.delta_json import DeltaSchema
from lakeguard.rules.quality.evaluate import (
    evaluate_aggregate,
    evaluate_reference,
    evaluate_row_count,
    evaluate_unique,
    implied_unique,
    row_outcomes,
)
from lakeguard.words.vocabulary import PARENT_VERSION
from openlaketx.loads import footers
from openlaketx.loads.staging import StagedBatch, staged_rows
from openlaketx.runner.profiling import full_profile
from openlaketx.runner.rule_tallies import rule_tallies

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Column types a profile summarises (Delta schema JSON names).
PROFILED_TYPES = frozenset(
    {"string", "integer", "long", "short", "byte", "double", "float", "date", "timestamp"}
)


def profiled_columns(staged: StagedBatch) -> list[str]:
    return [
        f["name"]
        for f in staged.schema["fields"]
        if isinstance(f["type"], str)
        and f["type"] in PROFILED_TYPES
        and not f["name"].startswith("_")
    ]


def evaluate_staged(
    spark: SparkSession,
    staged: StagedBatch,
    rules: list[CompiledRule],
    *,
    profile: bool,
    full_profile_top: int | None = None,
    referenced: Callable[[str], DataFrame | None] = lambda _: None,
    unique_on: tuple[str, ...] = (),
) -> BatchEvaluation:
    """Outcomes of `rules` on the staged batch (in rule order) and, optionally, its profile
    (the full profile too, with that many top values, unless `full_profile_top` is None).
    A UNIQUE rule the batch satisfies by construction (`unique_on`) passes without a pass
    over the keys."""
    rows = staged.rows
    outcomes = row_outcomes(rule_tallies([*staged.good, *staged.malformed], rules), rules, rows)
    full = profile and full_profile_top is not None
    # The staged rows as a DataFrame only where something reads them: its analysis is ~15
    # round trips to the JVM, a fixed cost of every step whose rules the footers answer.
    needs_rows = full or any(
        _reads_rows(rule, unique_on, staged.schema) for rule in rules if not rule.row_level
    )
    good = staged_rows(spark, staged) if staged.good and needs_rows else None
    per_version = _rows_per_parent_version(good, rules)
    for rule in rules:
        if rule.row_level:
            continue
        if rule.row_bounds is not None:
            outcomes.append(evaluate_row_count(rule, rows, per_version))
        elif rule.aggregate_sql is not None:
            outcomes.append(evaluate_aggregate(good, rule, rows))
        elif rule.reference is not None:
            outcomes.append(evaluate_reference(good, rule, rows, referenced(rule.reference[0])))
        elif good is None or implied_unique(rule, unique_on):
            outcomes.append(outcome_for(rule, rows, 0, []))
        else:
            outcomes.append(evaluate_unique(good, rule, rows))
    order = {r.rule_id: k for k, r in enumerate(rules)}
    outcomes.sort(key=lambda o: order[o.rule_id])
    metrics: list[ProfileMetric] = []
    if profile:
        columns = profiled_columns(staged)
        metrics = [ProfileMetric(*m) for m in footers.profile(staged.good, columns)]
        if full_profile_top is not None and good is not None:
            types = {f["name"]: str(f["type"]) for f in staged.schema["fields"]}
            metrics += full_profile(good, {c: types[c] for c in columns}, full_profile_top)
    return BatchEvaluation(rows, outcomes, metrics)


def _reads_rows(rule: CompiledRule, unique_on: tuple[str, ...], schema: DeltaSchema) -> bool:
    """Whether a batch-level rule's outcome needs a pass over the staged rows (a row count
    needs one only for a batch that spans parent versions)."""
    if rule.row_bounds is not None:
        return any(f["name"] == PARENT_VERSION for f in schema["fields"])
    if rule.aggregate_sql is not None or rule.reference is not None:
        return True
    return not implied_unique(rule, unique_on)


def _rows_per_parent_version(
    good: DataFrame | None, rules: list[CompiledRule]
) -> dict[int, int] | None:
    """Rows per parent version of a batch that spans several, when a ROW_COUNT rule needs
    them (one small aggregate over one staged column)."""
    if good is None or PARENT_VERSION not in good.columns:
        return None
    if not any(r.row_bounds is not None for r in rules):
        return None
    counts = good.groupBy(PARENT_VERSION).count().collect()
    return {int(r[PARENT_VERSION]): int(r["count"]) for r in counts}
