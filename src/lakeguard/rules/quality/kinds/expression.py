"""EXPRESSION: a vetted SQL predicate every row must satisfy (null counts as false)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.sqlsafety import vetted_sql
from lakeguard.rules.quality.kinds.base import KnownColumns, RuleKind, vet
from lakeguard.words.problems import Problem


class ExpressionRule(RuleKind):
    type: Literal["EXPRESSION"]
    expression: str = Field(min_length=1, description="SQL predicate every row must satisfy")

    usage: ClassVar[str] = "needs 'expression'"

    def check(self, known: KnownColumns, loc: tuple[Any, ...]) -> list[Problem]:
        return vet(self.expression, (*loc, "expression"), known.get(self.dataset))

    def compile(self) -> CompiledRule:
        safe = vetted_sql(self.expression, where=f"quality_rules[rule_id={self.id}].expression")
        return self._compiled(
            columns=(), violation_sql=f"(NOT coalesce(({safe}), FALSE))", sample_sql=None
        )

    def explain(self) -> str:
        return f"every row: {self.expression}"
