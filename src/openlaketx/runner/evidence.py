"""The evidence rows recorded with a gate decision: dq summary, rule outcomes, profile, schema."""

from __future__ import annotations

from typing import Any

from lakeguard.hashing import fingerprint, to_json
from lakeguard.quality.outcome import BatchEvaluation, overall_status
from lakeguard.schema.fingerprint import SchemaColumn, schema_hash, schema_json
from lakeguard.store.records import DatasetDef
from lakeguard.vocabulary import Outcome
from openlaketx.runner.lifecycle import new_id


def rows(
    *,
    tenant: str,
    pipeline_logging_id: str,
    run_id: str,
    dataset: DatasetDef,
    result: BatchEvaluation,
    columns: list[SchemaColumn],
    decision_row: dict[str, Any],
) -> dict[str, list[dict[str, Any]]]:
    """Rows for `dq_results`, `data_quality_results`, `data_profiling_results` and
    `schema_history`, all stamped with the decision's time."""
    dataset_id = dataset.dataset_id
    now = decision_row["evaluated_at"]
    outcomes = result.outcomes
    failed = [o for o in outcomes if o.outcome != Outcome.PASS]
    rule_set = fingerprint(
        sorted((o.rule_id, o.rule_type, o.severity, o.threshold) for o in outcomes), 16
    )
    summary = {
        "dq_result_id": new_id(),
        "pipeline_logging_id": pipeline_logging_id,
        "run_id": run_id,
        "tenant_id": tenant,
        "dataset_id": dataset_id,
        "target_table": dataset.table_name,
        "dq_config_id": rule_set,
        "executed_at": now,
        "rows_evaluated": result.rows,
        "expectations_passed": len(outcomes) - len(failed),
        "expectations_failed": len(failed),
        "failed_expectations": to_json(
            [
                {
                    "rule_id": o.rule_id,
                    "outcome": o.outcome,
                    "failed_rows": o.failed_rows,
                    "severity": o.severity,
                    "samples": list(o.samples),
                }
                for o in failed
            ]
        ),
        "overall_status": overall_status(outcomes),
    }
    per_rule = [
        {
            "result_id": new_id(),
            "run_id": run_id,
            "tenant_id": tenant,
            "dataset_id": dataset_id,
            "rule_id": o.rule_id,
            "rule_type": o.rule_type,
            "severity": o.severity,
            "columns": list(o.columns),
            "rows_evaluated": o.rows_evaluated,
            "failed_rows": o.failed_rows,
            "failed_ratio": o.failed_ratio,
            "sample_values": list(o.samples),
            "outcome": o.outcome,
            "executed_at": now,
        }
        for o in outcomes
    ]
    profile = [
        {
            "profile_id": new_id(),
            "run_id": run_id,
            "tenant_id": tenant,
            "dataset_id": dataset_id,
            "column_name": m.column,
            "metric": m.metric,
            "value": m.value,
            "profiled_at": now,
        }
        for m in result.profile
    ]
    schema = {
        "snapshot_id": new_id(),
        "run_id": run_id,
        "tenant_id": tenant,
        "dataset_id": dataset_id,
        "source_object_id": None,
        "schema_hash": schema_hash(columns),
        "schema_json": schema_json(columns),
        "captured_at": now,
    }
    return {
        "dq_results": [summary],
        "data_quality_results": per_rule,
        "data_profiling_results": profile,
        "schema_history": [schema],
    }
