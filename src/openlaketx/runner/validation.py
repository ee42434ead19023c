"""The gate's figures for a staged batch: rule outcomes and the column profile.

Row rules come from the aggregates observed while the batch was written; UNIQUE rules from one
groupBy over the staged key columns; the profile from the staged files' Parquet footers. Only
the UNIQUE rules read data again, and only their key columns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.quality.evaluate import ROWS_METRIC, evaluate_unique, recount, row_outcomes
from lakeguard.quality.outcome import BatchEvaluation, ProfileMetric, outcome_for
from lakeguard.quality.rules import CompiledRule
from openlaketx.loads import footers
from openlaketx.loads.staging import StagedBatch

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

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
    spark: SparkSession, staged: StagedBatch, rules: list[CompiledRule], *, profile: bool
) -> BatchEvaluation:
    """Outcomes of `rules` on the staged batch (in rule order) and, optionally, its profile."""
    rows = staged.rows
    observed = staged.observed
    if int(observed.get(ROWS_METRIC) or 0) != rows:
        # observe() counts every task attempt, so a retried task counts twice. The staged files
        # are the truth: the counts are taken again from them.
        observed = recount(spark.read.parquet(staged.folder), rules) if rows else {}
    outcomes = row_outcomes(observed, rules, rows)
    good = spark.read.parquet(staged.part_folder()) if staged.good else None
    for rule in rules:
        if rule.row_level:
            continue
        if good is None:
            outcomes.append(outcome_for(rule, rows, 0, []))
        else:
            outcomes.append(evaluate_unique(good, rule, rows))
    order = {r.rule_id: k for k, r in enumerate(rules)}
    outcomes.sort(key=lambda o: order[o.rule_id])
    metrics: list[ProfileMetric] = []
    if profile:
        metrics = [
            ProfileMetric(*m) for m in footers.profile(staged.good, profiled_columns(staged))
        ]
    return BatchEvaluation(rows, outcomes, metrics)
