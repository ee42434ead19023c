"""Rows as a run writes them, planted in a store for the alert tests that need no Spark: the
job run, the attempt, its decision and rule results, the version it made, its request."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from lakeguard.records.checks.result_rows import RuleResultRow
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.evidence import CheckRecord, Evidence
from lakeguard.records.rows.runtime import new_id
from lakeguard.records.runs.coordination import RunRequestRow
from lakeguard.records.runs.rows import PipelineRunRow, RunHistoryRow
from lakeguard.store import MetadataStore
from lakeguard.words.hashing import to_json
from lakeguard.words.vocabulary import AttemptStatus, JobStatus, Outcome

T0 = datetime(2026, 12, 1, 8, 0, 0)


class Plant:
    """Rows as a run writes them: the job run, the attempt, its decision and rule results."""

    def __init__(
        self, store: MetadataStore, *, dataset: str = "bronze_cells_i", job: str = "cells_job_i"
    ) -> None:
        self.store = store
        self.at = T0
        self.dataset, self.job = dataset, job
        self.suffix = dataset.removeprefix("bronze_cells")

    def attempt(
        self,
        status: AttemptStatus,
        *,
        dataset: str | None = None,
        allowed: bool | None = None,
        version: int | None = None,
        error: str | None = None,
        checks: tuple[CheckRecord, ...] = (),
        warn: bool = False,
        job_status: JobStatus | None = None,
        retry_of: str | None = None,
        accepted: bool = False,
    ) -> RunHistoryRow:
        self.at += timedelta(minutes=10)
        dataset = dataset or self.dataset
        job_run, attempt = new_id(), new_id()
        tenant = self.store.tenant
        row = RunHistoryRow(
            run_id=attempt,
            pipeline_logging_id=job_run,
            tenant_id=tenant,
            dataset_id=dataset,
            layer="bronze",
            status=status,
            start_time=self.at - timedelta(minutes=1),
            end_time=self.at,
            data_version=version,
            error_message=error,
            triggered_by="test",
        )
        rows: list[Any] = [row]
        if allowed is not None:
            rules = {f"lat_range{self.suffix}": Outcome.FAIL if not allowed else Outcome.PASS}
            if warn:
                rules[f"radio_known{self.suffix}"] = Outcome.WARN
            evidence = Evidence(rules=rules, checks=checks)
            decision = DecisionRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=attempt,
                from_layer="source",
                to_layer="bronze",
                allowed=allowed,
                reason=f"blocked by FAIL rule lat_range{self.suffix}" if not allowed else "allowed",
                evidence=to_json(evidence.to_json()),
                evaluated_at=self.at - timedelta(seconds=30),
            )
            self.store.append_rows([decision], _by_gate=True)
            if not allowed:
                rows.append(
                    RuleResultRow(
                        run_id=attempt,
                        tenant_id=tenant,
                        dataset_id=dataset,
                        rule_id=f"lat_range{self.suffix}",
                        rule_type="RANGE",
                        severity="FAIL",
                        outcome=Outcome.FAIL,
                        failed_rows=2,
                        rows_evaluated=10,
                        sample_values=["91.5"],
                        executed_at=self.at,
                    )
                )
            if warn:
                rows.append(
                    RuleResultRow(
                        result_id=new_id(),
                        run_id=attempt,
                        tenant_id=tenant,
                        dataset_id=dataset,
                        rule_id=f"radio_known{self.suffix}",
                        rule_type="ALLOWED_VALUES",
                        severity="WARN",
                        outcome=Outcome.WARN,
                        failed_rows=3,
                        rows_evaluated=10,
                        executed_at=self.at,
                    )
                )
        if version is not None:
            self.store.append_rows(
                [
                    DataVersionRow(
                        tenant_id=tenant,
                        dataset_id=dataset,
                        version=version,
                        snapshot_ref=str(version),
                        schema_hash="h",
                        row_count=10,
                        run_id=attempt,
                        promoted_at=self.at,
                        promoted_by="test",
                    )
                ],
                _by_gate=True,
            )
        status_of = {
            AttemptStatus.SUCCESS: JobStatus.COMPLETED,
            AttemptStatus.BLOCKED: JobStatus.BLOCKED,
            AttemptStatus.FAILED: JobStatus.FAILED,
        }
        rows.append(
            PipelineRunRow(
                pipeline_logging_id=job_run,
                pipeline_id=self.job,
                tenant_id=tenant,
                status=job_status or status_of[status],
                trigger_type="manual",
                trigger_by="test",
                start_time=self.at - timedelta(minutes=2),
                end_time=self.at,
                error_message=error,
            )
        )
        if accepted:
            rows.append(
                RunRequestRow(
                    request_key=job_run,
                    tenant_id=tenant,
                    job_id=self.job,
                    run_id=job_run,
                    trigger_type="retry" if retry_of else "api",
                    triggered_by="test",
                    retry_of=retry_of,
                    requested_at=self.at - timedelta(minutes=3),
                )
            )
        self.store.append_rows(rows)
        return row
