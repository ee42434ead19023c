"""NOT_EMPTY_STRING: a text column is never empty or only blanks (a null is NOT_NULL's job)."""

from __future__ import annotations

from typing import ClassVar, Literal

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote


class NotEmptyStringRule(RuleKind):
    type: Literal["NOT_EMPTY_STRING"]
    column: ColumnName

    per_column: ClassVar[Literal["columns", "column"] | None] = "column"
    usage: ClassVar[str] = "needs 'column'"

    def columns_used(self) -> list[str]:
        return [self.column]

    def compile(self) -> CompiledRule:
        column = quote(self.column)
        return self._compiled(
            columns=(self.column,),
            violation_sql=f"({column} IS NOT NULL AND trim(CAST({column} AS STRING)) = '')",
            sample_sql=as_text([self.column]),
        )

    def explain(self) -> str:
        return f"{self.column} never empty or blank"
