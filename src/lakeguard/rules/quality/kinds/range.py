"""RANGE: a numeric column lies within [min, max] (either bound may be left out)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text, check_bounds, literal
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote


class RangeRule(RuleKind):
    type: Literal["RANGE"]
    column: ColumnName
    min: float | None = None
    # validated even when left out, so that a rule with neither bound is refused here
    max: float | None = Field(default=None, validate_default=True)

    per_column: ClassVar[Literal["columns", "column"] | None] = "column"
    usage: ClassVar[str] = "needs 'column' and 'min', 'max' or both"

    @field_validator("max")
    @classmethod
    def _bounds(cls, value: float | None, info: Any) -> float | None:
        check_bounds("RANGE", info.data.get("min"), value)
        return value

    def columns_used(self) -> list[str]:
        return [self.column]

    def compile(self) -> CompiledRule:
        column = quote(self.column)
        checks = []
        if self.min is not None:
            checks.append(f"{column} >= {literal(float(self.min))}")
        if self.max is not None:
            checks.append(f"{column} <= {literal(float(self.max))}")
        return self._compiled(
            columns=(self.column,),
            violation_sql=f"({column} IS NOT NULL AND NOT ({' AND '.join(checks)}))",
            sample_sql=as_text([self.column]),
        )

    def explain(self) -> str:
        low = "-inf" if self.min is None else f"{self.min:g}"
        high = "+inf" if self.max is None else f"{self.max:g}"
        return f"{self.column} in [{low}, {high}]"
