"""SQL quoting: a backquoted identifier and a single-quoted string literal (pure)."""

from __future__ import annotations


def quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
