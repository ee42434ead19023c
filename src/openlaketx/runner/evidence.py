"""The evidence rows recorded with a gate decision: dq summary, rule outcomes, profile, schema."""

from __future__ import annotations

from datetime import datetime

from lakeguard.records.checks.result_rows import (
    DqResultRow,
    ProfileRow,
    RuleResultRow,
    SchemaSnapshotRow,
)
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.quality.outcome import BatchEvaluation, overall_status
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.schema.fingerprint import SchemaColumn, schema_hash, schema_json
from lakeguard.words.hashing import fingerprint, to_json
from lakeguard.words.vocabulary import DqStatus, Outcome


def rows(
    *,
    tenant: str,
    pipeline_logging_id: str,
    run_id: str,
    decided_at: datetime,
    dataset: DatasetDef,
    result: BatchEvaluation,
    columns: list[SchemaColumn],
) -> list[RuntimeRow]:
    """Rows for `dq_results`, `data_quality_results`, `data_profiling_results` and
    `schema_history`, all stamped with the decision's time."""
    now = decided_at
    dataset_id = dataset.dataset_id
    outcomes = result.outcomes
    failed = [o for o in outcomes if o.outcome != Outcome.PASS]
    rule_set = fingerprint(
        sorted((o.rule_id, o.rule_type, o.severity, o.threshold) for o in outcomes), 16
    )
    summary = DqResultRow(
        pipeline_logging_id=pipeline_logging_id,
        run_id=run_id,
        tenant_id=tenant,
        dataset_id=dataset_id,
        target_table=dataset.table_name,
        dq_config_id=rule_set,
        executed_at=now,
        rows_evaluated=result.rows,
        expectations_passed=len(outcomes) - len(failed),
        expectations_failed=len(failed),
        failed_expectations=to_json(
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
        overall_status=DqStatus(overall_status(outcomes)),
    )
    per_rule = [
        RuleResultRow(
            run_id=run_id,
            tenant_id=tenant,
            dataset_id=dataset_id,
            rule_id=o.rule_id,
            rule_type=o.rule_type,
            severity=o.severity,
            columns=list(o.columns),
            rows_evaluated=o.rows_evaluated,
            failed_rows=o.failed_rows,
            failed_ratio=o.failed_ratio,
            sample_values=list(o.samples),
            outcome=o.outcome,
            executed_at=now,
            threshold=o.threshold,
            rule_expression=o.expression,
            asks=o.asks,
        )
        for o in outcomes
    ]
    profile = [
        ProfileRow(
            run_id=run_id,
            tenant_id=tenant,
            dataset_id=dataset_id,
            column_name=m.column,
            metric=m.metric,
            value=m.value,
            profiled_at=now,
        )
        for m in result.profile
    ]
    schema = SchemaSnapshotRow(
        run_id=run_id,
        tenant_id=tenant,
        dataset_id=dataset_id,
        schema_hash=schema_hash(columns),
        schema_json=schema_json(columns),
        captured_at=now,
    )
    return [summary, *per_rule, *profile, schema]
