"""ROW_COUNT: the batch's row count lies within [min, max] (per parent version in a catch-up);
outside, every row counts as failing."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, check_bounds


class RowCountRule(RuleKind):
    type: Literal["ROW_COUNT"]
    min: int | None = Field(default=None, ge=0)
    # validated even when left out, so that a rule with neither bound is refused here
    max: int | None = Field(default=None, ge=0, validate_default=True)

    usage: ClassVar[str] = "needs 'min', 'max' or both"

    @field_validator("max")
    @classmethod
    def _bounds(cls, value: int | None, info: Any) -> int | None:
        check_bounds("ROW_COUNT", info.data.get("min"), value)
        return value

    def compile(self) -> CompiledRule:
        return self._compiled(
            columns=(), violation_sql=None, sample_sql=None, row_bounds=(self.min, self.max)
        )

    def explain(self) -> str:
        low = "0" if self.min is None else f"{self.min:,}"
        high = "any" if self.max is None else f"{self.max:,}"
        return f"{low} to {high} rows per batch"
