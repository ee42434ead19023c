"""Rules on a batch while it is written — the Spark edge of quality.

Every row-level rule becomes one staged column (`rule_flag(i)`), computed while the batch is
staged: null where the row passes, a sample of the row where it breaks the rule. Each staged
file's Parquet footer then holds, per rule, its failures (rows minus the null count) and two
samples (the column's min and max), so counting costs no read at all whatever share of rows
fail. Each row's `FAILED_RULES` (the rule ids it breaks) is built from those columns. UNIQUE
rules are one pass over the staged key columns only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.quality.outcome import RuleOutcome, outcome_for
from lakeguard.words.quoting import quote, sql_string
from lakeguard.words.vocabulary import PARENT_VERSION, rule_flag

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

FAILED_RULES = "_laketx_failed_rules"
# A flag holds SAMPLE_MARK + the sample (cut to SAMPLE_CHARS, so Parquet keeps its min/max:
# parquet-mr drops statistics over 4 KiB) or "" where the failing row has no sample value.
SAMPLE_MARK = "+"
SAMPLE_CHARS = 200


@dataclass(frozen=True)
class RuleTally:
    """One row-level rule's failures in a staged batch and its flag column's min and max."""

    failed: int = 0
    low: str | None = None
    high: str | None = None

    def samples(self) -> list[str | None]:
        return [decode_sample(self.low), decode_sample(self.high)]


def decode_sample(flag: str | None) -> str | None:
    """The sample a flag value carries (None: no flag, or a failing row without a value)."""
    if not flag:
        return None
    return flag.removeprefix(SAMPLE_MARK)


def row_rules(rules: list[CompiledRule]) -> list[CompiledRule]:
    """The row-level rules, in the order their flag columns are numbered."""
    return [r for r in rules if r.row_level]


def rule_flag_sql(rules: list[CompiledRule]) -> list[tuple[str, str]]:
    """(name, SQL) of each row-level rule's staged flag column (pure): null where the row
    passes, SAMPLE_MARK and the row's sample (or "") where it breaks the rule. Each is one
    SQL expression over the rule's vetted SQL, so that it reaches the JVM in one round trip."""
    flags = []
    for i, rule in enumerate(row_rules(rules)):
        sample = "CAST(NULL AS STRING)"
        if rule.sample_sql:
            sample = (
                f"concat({sql_string(SAMPLE_MARK)}, "
                f"substring(({rule.sample_sql}), 1, {SAMPLE_CHARS}))"
            )
        value = f"coalesce({sample}, '')"
        flags.append((rule_flag(i), f"CASE WHEN ({rule.violation_sql}) THEN {value} END"))
    return flags


def failed_rules_sql(rules: list[CompiledRule]) -> str:
    """Per row, the ids of the row-level rules it breaks (empty when it breaks none), read from
    the flag columns `rule_flag_sql` added, as one SQL expression (pure).

    Most rows break nothing: they get the empty array after one null test, and only a failing
    row pays for building its array.
    """
    empty = "CAST(array() AS ARRAY<STRING>)"
    named = [(quote(rule_flag(i)), r.rule_id) for i, r in enumerate(row_rules(rules))]
    if not named:
        return empty
    flagged = ", ".join(
        f"CASE WHEN {flag} IS NOT NULL THEN {sql_string(rule_id)} END" for flag, rule_id in named
    )
    failing = f"filter(array({flagged}), laketx_id -> laketx_id IS NOT NULL)"
    flags = [flag for flag, _ in named]
    any_flag = f"coalesce({', '.join(flags)})" if len(flags) > 1 else flags[0]
    return f"CASE WHEN {any_flag} IS NOT NULL THEN {failing} ELSE {empty} END"


def row_outcomes(
    tallies: Mapping[int, RuleTally], rules: list[CompiledRule], rows: int
) -> list[RuleOutcome]:
    """Outcomes of the row-level rules from their tallies by flag index (pure; a missing
    index means no row broke that rule)."""
    outcomes = []
    for i, rule in enumerate(row_rules(rules)):
        tally = tallies.get(i, RuleTally())
        outcomes.append(outcome_for(rule, rows, tally.failed, tally.samples()))
    return outcomes


def implied_unique(rule: CompiledRule, unique_on: tuple[str, ...]) -> bool:
    """Whether a UNIQUE rule cannot fail on a batch unique on `unique_on` (within each parent
    version) by construction: its keys include all of them. Uniqueness on some columns holds
    on any superset of them."""
    keys = {k.lower() for k in rule.unique_keys}  # Spark's column names ignore case
    return bool(keys and unique_on) and {k.lower() for k in unique_on} <= keys


def evaluate_unique(frame: DataFrame, rule: CompiledRule, rows: int) -> RuleOutcome:
    """Rows whose (non-null) key occurs more than once in the batch (in one parent version,
    when the batch spans several).

    A single-column key is counted over a window partitioned by it, not by a groupBy: in a
    batch that holds, every key is distinct, so a groupBy's map-side partial aggregate
    reduces nothing and only adds a hash table per task, while the window shuffles the key
    once and counts each key's rows in its sorted partition, whose sort compares the key's
    own prefix (bench/unique_check.py: ~25-40 % cheaper). A composite key keeps the groupBy:
    its sort would compare by the first column's prefix alone, often low in cardinality.
    """
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    keys = [F.col(quote(c)) for c in rule.unique_keys]
    if PARENT_VERSION in frame.columns:
        keys.append(F.col(PARENT_VERSION))
    not_null = " AND ".join(f"{quote(c)} IS NOT NULL" for c in rule.unique_keys)
    present = frame.select(*keys).where(not_null)
    if len(rule.unique_keys) == 1:  # one row per row: each duplicate row weighs 1
        counted = present.withColumn("__rows", F.count(F.lit(1)).over(Window.partitionBy(*keys)))
        weight = F.lit(1)
    else:  # one row per key: it weighs its rows
        counted = present.groupBy(*keys).agg(F.count(F.lit(1)).alias("__rows"))
        weight = F.col("__rows")
    dupes = (
        counted.where(F.col("__rows") > 1)
        .withColumn("__sample", F.expr(rule.sample_sql or "NULL"))
        .agg(
            F.sum(weight).alias("failed"),
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
    # start-up time: pyspark loads on first use, never in metadata-only commands
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
    # start-up time: pyspark loads on first use, never in metadata-only commands
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
