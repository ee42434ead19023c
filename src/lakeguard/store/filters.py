"""Row filters of the metadata store: (column, op, value) triples built inside the store,
rendered as the WHERE clause of a DataFusion query (never text from outside)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

Filter = tuple[str, str, Any]


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, date):
        return f"DATE '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


_OPERATORS = frozenset({"=", "!=", "<", "<=", ">", ">=", "in"})


def where_sql(filters: Sequence[Filter]) -> str:
    """A DataFusion WHERE clause from (column, op, value) triples built inside the store."""
    parts = []
    for column, op, value in filters:
        if op not in _OPERATORS or not column.replace("_", "").isalnum():
            raise ValueError(f"unsupported filter {(column, op)!r}")
        if op == "in":
            values = list(value)
            if not values:
                return " WHERE FALSE"
            parts.append(f'"{column}" IN ({", ".join(_literal(v) for v in values)})')
        else:
            parts.append(f'"{column}" {op} {_literal(value)}')
    return (" WHERE " + " AND ".join(parts)) if parts else ""
