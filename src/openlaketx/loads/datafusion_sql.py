"""Spark SQL as DataFusion reads it: the MERGE conditions are written once, in Spark's dialect
(`MergePlan`), and rendered for delta-rs's DataFusion by sqlglot (`small_merge.py`)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres


class _DataFusion(Postgres):
    """PostgreSQL's SQL as DataFusion parses it: NOT and IS [NOT] DISTINCT FROM bind more
    loosely there than in PostgreSQL (`NOT x IS NULL` reads `(NOT x) IS NULL`, and
    `a IS NOT DISTINCT FROM b AND c` takes `b AND c` as its right side), so they are
    parenthesised."""

    class Generator(Postgres.Generator):  # type: ignore[misc,valid-type]
        def not_sql(self, expression: exp.Not) -> str:
            inner = expression.this
            if isinstance(inner, exp.Is):
                return f"({self.sql(inner, 'this')} IS NOT {self.sql(inner, 'expression')})"
            return f"NOT ({self.sql(expression, 'this')})"

        def nullsafeeq_sql(self, expression: exp.NullSafeEQ) -> str:
            return f"({self.binary(expression, 'IS NOT DISTINCT FROM')})"

        def nullsafeneq_sql(self, expression: exp.NullSafeNEQ) -> str:
            return f"({self.binary(expression, 'IS DISTINCT FROM')})"


def datafusion(spark_sql: str) -> str:
    """SQL written in Spark's dialect, as DataFusion reads it (`<=>` becomes
    `IS NOT DISTINCT FROM`, backquoted names double-quoted)."""
    return sqlglot.transpile(spark_sql, read="spark", write=_DataFusion)[0]
