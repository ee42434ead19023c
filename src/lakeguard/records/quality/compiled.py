"""A rule compiled for the engine: a per-row violation predicate, or a batch-level check (pure).

Row-level rules become SQL that is true exactly for the rows that break them; the evaluator
flags each row while the batch is staged. The others are checked on the staged batch: UNIQUE
by one pass over its key columns, ROW_COUNT from the files' footers, an AGGREGATE condition,
a FOREIGN_KEY anti-join.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CompiledRule:
    rule_id: str
    rule_type: str
    severity: str
    threshold: float
    columns: tuple[str, ...]
    violation_sql: str | None
    sample_sql: str | None
    unique_keys: tuple[str, ...] = ()
    # batch-level rules (at most one of these): row-count bounds, an aggregate condition,
    # or the keys that must exist in another dataset (dataset, columns, its columns)
    row_bounds: tuple[int | None, int | None] | None = None
    aggregate_sql: str | None = None
    reference: tuple[str, tuple[str, ...], tuple[str, ...]] | None = None
    # what the rule was when compiled, recorded with each of its judgments
    # (lakeguard.records.judged): its parameters but the threshold, and what it asks in words
    # (None: a built-in rule)
    expression: str | None = None
    asks: str | None = None

    @property
    def row_level(self) -> bool:
        return self.violation_sql is not None
