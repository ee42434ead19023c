"""The staged rows a promotion leaves out: unparseable rows and, under `fail_behavior: drop`,
the rows failing a dropped rule (told apart by each row's `_laketx_failed_rules`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lakeguard.rules.quality.evaluate import FAILED_RULES
from openlaketx.loads.staging import StagedBatch, staged_rows
from openlaketx.sources.layouts import CORRUPT_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import Column, SparkSession


def failing_any(rule_ids: Sequence[str]) -> Column:
    """Whether a staged row failed any of `rule_ids`."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    ids = F.array(*[F.lit(r) for r in rule_ids])
    return F.coalesce(F.arrays_overlap(F.col(FAILED_RULES), ids), F.lit(False))


def rows_failing(spark: SparkSession, staged: StagedBatch, rule_ids: Sequence[str]) -> int:
    """Parseable staged rows failing any of `rule_ids` (reads their flags only)."""
    if not rule_ids or not staged.good:
        return 0
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    rows = staged_rows(spark, staged)
    if CORRUPT_COLUMN in rows.columns:  # unparseable rows are set aside anyway
        rows = rows.where(F.col(CORRUPT_COLUMN).isNull())
    return rows.where(failing_any(rule_ids)).count()


def rejected(malformed: bool, dropped: Sequence[str]) -> Column | None:
    """Which staged rows stay out: unparseable ones (when the batch had any) and those failing
    a dropped rule (None: every row is promoted)."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    parts = [F.col(CORRUPT_COLUMN).isNotNull()] if malformed else []
    if dropped:
        parts.append(failing_any(dropped))
    if not parts:
        return None
    out = parts[0]
    for part in parts[1:]:
        out = out | part
    return F.coalesce(out, F.lit(False))
