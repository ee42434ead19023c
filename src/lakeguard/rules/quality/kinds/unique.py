"""UNIQUE: no two rows share the values of the named columns (nulls aside).

Counted by one pass over the staged key columns (`evaluate_unique`); within each parent
version when a batch catches up on several.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text
from lakeguard.words.fields import ColumnName


class UniqueRule(RuleKind):
    type: Literal["UNIQUE"]
    columns: list[ColumnName] = Field(min_length=1)

    per_column: ClassVar[Literal["columns", "column"] | None] = "columns"
    usage: ClassVar[str] = "needs a non-empty list 'columns'"

    def columns_used(self) -> list[str]:
        return list(self.columns)

    def compile(self) -> CompiledRule:
        return self._compiled(
            columns=tuple(self.columns),
            violation_sql=None,
            sample_sql=as_text(self.columns),
            unique_keys=tuple(self.columns),
        )

    def explain(self) -> str:
        return f"({', '.join(self.columns)}) unique"
