"""REGEX: a column's text matches a regular expression."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import RuleKind, as_text
from lakeguard.words.fields import ColumnName
from lakeguard.words.quoting import quote, sql_string


class RegexRule(RuleKind):
    type: Literal["REGEX"]
    column: ColumnName
    pattern: str = Field(min_length=1)

    per_column: ClassVar[Literal["columns", "column"] | None] = "column"
    usage: ClassVar[str] = "needs 'column' and 'pattern'"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from exc
        return value

    def columns_used(self) -> list[str]:
        return [self.column]

    def compile(self) -> CompiledRule:
        column = quote(self.column)
        return self._compiled(
            columns=(self.column,),
            violation_sql=(
                f"({column} IS NOT NULL AND NOT "
                f"(CAST({column} AS STRING) RLIKE {sql_string(self.pattern)}))"
            ),
            sample_sql=as_text([self.column]),
        )

    def explain(self) -> str:
        return f"{self.column} matches /{self.pattern}/"
