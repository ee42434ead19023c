"""FOREIGN_KEY: every non-null key exists among the live rows of another dataset's latest
approved snapshot."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds.base import KnownColumns, RuleKind, as_text
from lakeguard.words.fields import ColumnName, Identifier
from lakeguard.words.problems import Problem


class ForeignKeyRule(RuleKind):
    type: Literal["FOREIGN_KEY"]
    columns: list[ColumnName] = Field(min_length=1)
    references: Identifier = Field(description="The dataset whose approved snapshot holds the keys")
    ref_columns: list[ColumnName] | None = Field(
        default=None, description="Its key columns (default: the same names)"
    )

    usage: ClassVar[str] = "needs 'columns', 'references' and as many 'ref_columns' as columns"

    @property
    def referenced_columns(self) -> list[str]:
        return list(self.ref_columns or self.columns)

    def columns_used(self) -> list[str]:
        return list(self.columns)

    def check(self, known: KnownColumns, loc: tuple[Any, ...]) -> list[Problem]:
        problems = super().check(known, loc)
        if self.references not in known:
            return [
                Problem((*loc, "references"), f"unknown dataset {self.references!r}"),
                *problems,
            ]
        if len(self.referenced_columns) != len(self.columns):
            return [
                Problem((*loc, "ref_columns"), "as many ref_columns as columns are needed"),
                *problems,
            ]
        ref_known = known[self.references]
        if ref_known is not None:
            problems = [
                Problem((*loc, "ref_columns"), f"{name!r} is not a column of {self.references}")
                for name in self.referenced_columns
                if name not in ref_known
            ] + problems
        return problems

    def compile(self) -> CompiledRule:
        if len(self.referenced_columns) != len(self.columns):
            raise ValueError(self.usage)
        return self._compiled(
            columns=tuple(self.columns),
            violation_sql=None,
            sample_sql=as_text(self.columns),
            reference=(self.references, tuple(self.columns), tuple(self.referenced_columns)),
        )

    def explain(self) -> str:
        return (
            f"({', '.join(self.columns)}) exist in "
            f"{self.references}({', '.join(self.referenced_columns)})"
        )
