"""ALLOWED_VALUES: a column holds one of the listed values."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text, literal
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote


class AllowedValuesRule(RuleKind):
    type: Literal["ALLOWED_VALUES"]
    column: ColumnName
    values: list[str | int | float | bool] = Field(min_length=1)

    per_column: ClassVar[Literal["columns", "column"] | None] = "column"
    usage: ClassVar[str] = "needs 'column' and a non-empty list 'values'"

    def columns_used(self) -> list[str]:
        return [self.column]

    def compile(self) -> CompiledRule:
        column = quote(self.column)
        listed = ", ".join(literal(v) for v in self.values)
        return self._compiled(
            columns=(self.column,),
            violation_sql=f"({column} IS NOT NULL AND {column} NOT IN ({listed}))",
            sample_sql=as_text([self.column]),
        )

    def explain(self) -> str:
        return f"{self.column} in {{{', '.join(str(v) for v in self.values)}}}"
