"""AGGREGATE: a vetted SQL condition over aggregates of the batch (per parent version in a
catch-up); false fails the whole batch."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.sqlsafety import render, vet_expression
from lakeguard.rules.quality.kinds.base import (
    NEEDS_AGGREGATE,
    KnownColumns,
    RuleKind,
    has_aggregate,
    vet,
)
from lakeguard.words.problems import Problem


class AggregateRule(RuleKind):
    type: Literal["AGGREGATE"]
    expression: str = Field(
        min_length=1, description="A SQL condition over aggregates of the batch, e.g. sum(x) > 0"
    )

    usage: ClassVar[str] = "needs 'expression'"

    def check(self, known: KnownColumns, loc: tuple[Any, ...]) -> list[Problem]:
        return vet(self.expression, (*loc, "expression"), known.get(self.dataset), aggregates=True)

    def compile(self) -> CompiledRule:
        where = f"quality_rules[rule_id={self.id}].expression"
        tree = vet_expression(self.expression, where=where, allow_aggregates=True)
        if not has_aggregate(tree):
            raise ValueError(NEEDS_AGGREGATE)
        return self._compiled(
            columns=(), violation_sql=None, sample_sql=None, aggregate_sql=render(tree)
        )

    def explain(self) -> str:
        return f"the batch: {self.expression}"
