"""Spark SQL type names as metadata declares them, and what each may be used for (pure)."""

from __future__ import annotations

NUMERIC_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long", "float", "double")
INTEGRAL_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "long")
TEMPORAL_TYPES = ("date", "timestamp")


def is_numeric(data_type: str) -> bool:
    kind = data_type.lower()
    return kind in NUMERIC_TYPES or kind.startswith("decimal")


def is_watermark_type(data_type: str) -> bool:
    """Numbers, dates and timestamps grow; a watermark column must be one of them."""
    return is_numeric(data_type) or data_type.lower() in TEMPORAL_TYPES
