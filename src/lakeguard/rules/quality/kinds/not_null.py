"""NOT_NULL: every named column has a value in every row."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote


class NotNullRule(RuleKind):
    type: Literal["NOT_NULL"]
    columns: list[ColumnName] = Field(min_length=1)

    per_column: ClassVar[Literal["columns", "column"] | None] = "columns"
    usage: ClassVar[str] = "needs a non-empty list 'columns'"

    def columns_used(self) -> list[str]:
        return list(self.columns)

    def compile(self) -> CompiledRule:
        predicate = " OR ".join(f"{quote(c)} IS NULL" for c in self.columns)
        return self._compiled(
            columns=tuple(self.columns),
            violation_sql=f"({predicate})",
            sample_sql=as_text(self.columns),
        )

    def explain(self) -> str:
        return f"{', '.join(self.columns)} never null"
