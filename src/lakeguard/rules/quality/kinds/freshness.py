"""FRESHNESS: a row's timestamp is no older than `max_age` when the batch is checked."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text
from lakeguard.words.durations import DURATION, seconds
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote


class FreshnessRule(RuleKind):
    type: Literal["FRESHNESS"]
    column: ColumnName
    max_age: Annotated[str, Field(pattern=DURATION)] = Field(
        description="How old a row's timestamp may be, e.g. '2 days'"
    )

    per_column: ClassVar[Literal["columns", "column"] | None] = "column"
    depends_on_clock: ClassVar[bool] = True
    usage: ClassVar[str] = "needs 'max_age' as '<n> seconds|minutes|hours|days', and 'column'"

    def columns_used(self) -> list[str]:
        return [self.column]

    def compile(self) -> CompiledRule:
        column = quote(self.column)
        return self._compiled(
            columns=(self.column,),
            violation_sql=(
                f"({column} IS NOT NULL AND CAST({column} AS TIMESTAMP) < "
                f"current_timestamp() - make_dt_interval(0, 0, 0, {seconds(self.max_age)}))"
            ),
            sample_sql=as_text([self.column]),
        )

    def explain(self) -> str:
        return f"{self.column} at most {self.max_age.strip()} old"
