"""Quarantine: rejected rows kept for inspection, with the run id and the rules each row broke."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.quality.evaluate import failed_rules_column
from lakeguard.quality.rules import CompiledRule
from openlaketx.tables import QUARANTINE_DB, dataset_location, register

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from openlaketx.runner.dataset_step import RunContext


def quarantine(
    ctx: RunContext, dataset_id: str, frame: DataFrame, rules: list[CompiledRule], run_id: str
) -> int:
    """Append `frame` to `quarantine.<dataset_id>` in one commit; returns rows kept."""
    from pyspark.sql import functions as F

    name = f"{QUARANTINE_DB}.{dataset_id}"
    path = dataset_location(ctx.warehouse, name)
    kept = (
        frame.withColumn("_laketx_failed_rules", failed_rules_column(rules))
        .withColumn("_laketx_run_id", F.lit(run_id))
        .withColumn("_laketx_quarantined_at", F.current_timestamp())
    )
    (
        kept.write.format("delta")
        .mode("append")
        .option("mergeSchema", "true")
        .option("userMetadata", f'{{"laketx_quarantine":{{"run_id":"{run_id}"}}}}')
        .save(path)
    )
    register(ctx.spark, ctx.warehouse, name)
    from delta.tables import DeltaTable

    metrics = DeltaTable.forPath(ctx.spark, path).history(1).collect()[0]["operationMetrics"]
    return int((metrics or {}).get("numOutputRows", 0))
