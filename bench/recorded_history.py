"""A recorded history without Spark, shared by the benchmarks that need a store with one.

N copies of the test suite's bronze -> silver project (2N datasets, N jobs), then R job runs
spread over the last days: each run's rows (run events, run history, the job run, steps, rule
results and the dq summary, the profile, the decision, the approved version, the trust score)
written as the engine records them, through the store's typed rows and delta-rs, several runs
to a commit so that recording stays quick.
"""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from lakeguard.records.checks.result_rows import (
    DqResultRow,
    ProfileRow,
    RuleResultRow,
    TrustScoreRow,
)
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.evidence import CheckKind, CheckRecord, CheckResult, Evidence
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow, StepLogRow
from lakeguard.records.table_defs import table_def
from lakeguard.store import MetadataStore
from lakeguard.store.store import utcnow
from lakeguard.words.hashing import to_json
from lakeguard.words.vocabulary import (
    AttemptStatus,
    DqStatus,
    EventStatus,
    JobStatus,
    Outcome,
    StepStatus,
)

ROOT = Path(__file__).resolve().parents[1]
EVERY = timedelta(minutes=10)  # between two job runs of the history
COLUMNS = ("radio", "cell", "lat", "updated")
TRIGGERS = ("schedule", "schedule", "schedule", "api", "webhook", "file_arrival", "manual")
FULL_EVERY = 5  # batches between two full profiles (mean, distinct counts)


def project(work: Path, projects: int, tag: str = "p") -> list[Path]:
    """`projects` copies of the test suite's small bronze -> silver project, ids suffixed
    `_<tag>00`, `_<tag>01`, ..."""
    sys.path.insert(0, str(ROOT))
    from tests.support.project import cells_yaml

    docs = []
    for i in range(projects):
        doc = work / f"{tag}{i:02d}" / "cells.yaml"
        doc.parent.mkdir(parents=True)
        doc.write_text(cells_yaml(f"_{tag}{i:02d}"))
        docs.append(doc)
    return docs


class History:
    """The rows of a recorded history, run after run, as the engine would leave them."""

    def __init__(
        self, store: MetadataStore, projects: int, runs: int, seed: int, tag: str = "p"
    ) -> None:
        self.store, self.tenant, self.tag = store, store.tenant, tag
        self.projects, self.runs = projects, runs
        self.rng = random.Random(seed)
        self.versions: dict[str, int] = {}
        self.batches: dict[str, int] = {}
        self.first = utcnow() - EVERY * (runs + 1)

    def run(self, i: int) -> list[RuntimeRow]:
        """Job run `i`: its project's bronze attempt, then silver unless bronze was held."""
        p = i % self.projects
        job, logging_id = f"cells_job_{self.tag}{p:02d}", uuid.uuid4().hex
        start = self.first + EVERY * i + timedelta(seconds=self.rng.uniform(0, 60))
        draw = self.rng.random()
        held, failed = draw < 0.08, 0.08 <= draw < 0.12
        trigger = self.rng.choice(TRIGGERS)
        rows: list[RuntimeRow] = []
        at = start
        outcome = JobStatus.COMPLETED
        for layer in ("bronze", "silver"):
            dataset = f"{layer}_cells_{self.tag}{p:02d}"
            took = timedelta(seconds=self.rng.uniform(4, 40))
            if layer == "silver" and (held or failed):
                break
            status = (
                AttemptStatus.BLOCKED
                if held
                else AttemptStatus.FAILED
                if failed and layer == "bronze"
                else AttemptStatus.SUCCESS
            )
            rows += self.attempt(logging_id, job, dataset, layer, status, at, at + took, trigger)
            at += took
        if held:
            outcome = JobStatus.BLOCKED
        elif failed:
            outcome = JobStatus.FAILED
        rows.append(
            PipelineRunRow(
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                tenant_id=self.tenant,
                status=outcome,
                trigger_type=trigger,
                trigger_by="bench",
                start_time=start,
                end_time=at,
                duration_ms=int((at - start).total_seconds() * 1000),
                error_message="bench: a planted failure" if failed else None,
            )
        )
        rows += [
            RunEventRow(
                run_id=logging_id,
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                tenant_id=self.tenant,
                status=s,
                event_time=t,
                trigger_type=trigger,
                triggered_by="bench",
            )
            for s, t in ((EventStatus.RUNNING, start), (EventStatus(outcome), at))
        ]
        return rows

    def attempt(
        self,
        logging_id: str,
        job: str,
        dataset: str,
        layer: str,
        status: AttemptStatus,
        start: datetime,
        end: datetime,
        trigger: str,
    ) -> list[RuntimeRow]:
        run_id, rng, tenant = uuid.uuid4().hex, self.rng, self.tenant
        batch = self.batches[dataset] = self.batches.get(dataset, 0) + 1
        rows_in = rng.randint(800, 1200)
        rows: list[RuntimeRow] = [
            RunEventRow(
                run_id=run_id,
                pipeline_logging_id=logging_id,
                pipeline_id=job,
                dataset_id=dataset,
                tenant_id=tenant,
                status=s,
                event_time=t,
            )
            for s, t in ((EventStatus.RUNNING, start), (EventStatus(status), end))
        ]
        rows += [
            StepLogRow(
                pipeline_logging_id=logging_id,
                tenant_id=tenant,
                step_name=f"{dataset}:{kind}",
                step_type=kind,
                step_index=k,
                dataset_id=dataset,
                status=StepStatus.COMPLETED,
                start_time=start + (end - start) * k / 4,
                end_time=start + (end - start) * (k + 1) / 4,
                duration_ms=int((end - start).total_seconds() * 250),
                rows_processed=rows_in,
            )
            for k, kind in enumerate(("read", "validate", "gate", "write"))
        ]
        if status == AttemptStatus.FAILED:  # an error before the gate: no decision
            return [*rows, self._history(run_id, logging_id, dataset, layer, status, start, end)]
        held = status == AttemptStatus.BLOCKED
        rules = (
            [
                (f"lat_range_{dataset[-3:]}", "RANGE", "FAIL"),
                (f"radio_known_{dataset[-3:]}", "ALLOWED_VALUES", "WARN"),
            ]
            if layer == "bronze"
            else [(f"silver_unique_{dataset[-3:]}", "UNIQUE", "FAIL")]
        )
        results = []
        for k, (rule_id, kind, severity) in enumerate(rules):
            failing = rng.randint(1, 60) if held and k == 0 else rng.choice([0, 0, 0, 1, 2])
            outcome = (
                Outcome.PASS if failing == 0 else Outcome.FAIL if k == 0 and held else Outcome.WARN
            )
            if severity == "FAIL" and not held:
                failing, outcome = 0, Outcome.PASS
            results.append(
                RuleResultRow(
                    run_id=run_id,
                    tenant_id=tenant,
                    dataset_id=dataset,
                    rule_id=rule_id,
                    rule_type=kind,
                    severity=severity,
                    columns=["lat"],
                    rows_evaluated=rows_in,
                    failed_rows=failing,
                    failed_ratio=failing / rows_in,
                    sample_values=["999.0"] if failing else [],
                    outcome=outcome,
                    executed_at=end,
                    # the rule as it judged, as the engine records it (lakeguard.records.judged)
                    threshold=0.0,
                    rule_expression='{"column":"lat"}',
                    asks=f"{kind} on lat",
                )
            )
        rows += results
        failed = [r for r in results if r.outcome != Outcome.PASS]
        rows.append(
            DqResultRow(
                pipeline_logging_id=logging_id,
                run_id=run_id,
                tenant_id=tenant,
                dataset_id=dataset,
                target_table=dataset.replace("_", ".", 1),
                dq_config_id="bench",
                executed_at=end,
                rows_evaluated=rows_in,
                expectations_passed=len(results) - len(failed),
                expectations_failed=len(failed),
                failed_expectations=to_json([{"rule_id": r.rule_id} for r in failed]),
                overall_status=DqStatus.FAIL if held else DqStatus.PASS,
            )
        )
        rows += self._profile(run_id, dataset, rows_in, batch, end)
        parent = dataset.replace("silver", "bronze")
        upstream = {} if layer == "bronze" else {parent: self.versions[parent]}
        evidence = Evidence(
            rules={r.rule_id: r.outcome for r in results},
            checks=(
                CheckRecord(
                    name="volume",
                    kind=CheckKind.POLICY,
                    result=CheckResult.PASS,
                    detail=f"{rows_in} rows",
                ),
            ),
            upstream=upstream,
        )
        rows.append(
            DecisionRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=run_id,
                from_layer="source" if layer == "bronze" else "bronze",
                to_layer=layer,
                allowed=not held,
                reason="blocked: lat out of range" if held else "every rule passed",
                evidence=to_json(evidence.to_json()),
                evaluated_at=end,
            )
        )
        version = self.versions.get(dataset, 0)
        if not held:
            version = self.versions[dataset] = version + 1
            rows.append(
                DataVersionRow(
                    tenant_id=tenant,
                    dataset_id=dataset,
                    version=version,
                    snapshot_ref=str(version),
                    schema_hash="bench",
                    row_count=rows_in * version,
                    rows_written=rows_in,
                    upstream_refs=to_json(upstream),
                    run_id=run_id,
                    promoted_at=end,
                    promoted_by=job,
                )
            )
        quality = 1.0 - (0.3 if held else 0.0) - rng.uniform(0, 0.05)
        rows.append(
            TrustScoreRow(
                tenant_id=tenant,
                dataset_id=dataset,
                run_id=run_id,
                score=int(100 * (0.5 * quality + 0.2 + 0.15 + 0.15)),
                quality=quality,
                freshness=1.0,
                stability=1.0,
                lineage=1.0,
                computed_at=end,
            )
        )
        history = self._history(run_id, logging_id, dataset, layer, status, start, end)
        return [*rows, history]

    def _history(
        self,
        run_id: str,
        logging_id: str,
        dataset: str,
        layer: str,
        status: AttemptStatus,
        start: datetime,
        end: datetime,
    ) -> RunHistoryRow:
        return RunHistoryRow(
            run_id=run_id,
            pipeline_logging_id=logging_id,
            tenant_id=self.tenant,
            dataset_id=dataset,
            layer=layer,
            status=status,
            start_time=start,
            end_time=end,
            rows_read=1000,
            rows_written=0 if status != AttemptStatus.SUCCESS else 1000,
            data_version=self.versions.get(dataset),
            error_message="bench: a planted failure" if status == AttemptStatus.FAILED else None,
            triggered_by="bench",
        )

    def _profile(
        self, run_id: str, dataset: str, rows_in: int, batch: int, at: datetime
    ) -> list[ProfileRow]:
        """The footer profile of every batch, the full one every FULL_EVERY batches, drifting."""
        rng, drift = self.rng, batch / 40
        metrics: list[tuple[str, str, str | None]] = [("*", "row_count", str(rows_in))]
        for column in COLUMNS:
            nulls = int(rows_in * max(0.0, rng.gauss(0.01 + 0.02 * drift, 0.005)))
            metrics += [
                (column, "null_count", str(nulls)),
                (column, "null_ratio", repr(round(nulls / rows_in, 6))),
                (column, "min", "0"),
                (column, "max", "90"),
            ]
            if batch % FULL_EVERY == 1:
                distinct = rows_in if column == "cell" else rng.randint(2, 40)
                metrics.append((column, "approx_distinct", str(distinct)))
                if column != "radio":
                    metrics.append((column, "mean", repr(rng.gauss(45 + 5 * drift, 1.0))))
        return [
            ProfileRow(
                run_id=run_id,
                tenant_id=self.tenant,
                dataset_id=dataset,
                column_name=c,
                metric=m,
                value=v,
                profiled_at=at,
            )
            for c, m, v in metrics
        ]


def record_history(
    store: MetadataStore, projects: int, runs: int, per_commit: int, tag: str = "p"
) -> None:
    """The history, `per_commit` job runs to a commit of each table (decisions and versions
    too: the gate records them one by one in a real run; here they are history)."""
    history = History(store, projects, runs, seed=22, tag=tag)
    chunk: list[RuntimeRow] = []
    for i in range(runs):
        chunk += history.run(i)
        if (i + 1) % per_commit == 0 or i + 1 == runs:
            store.append_rows(chunk, _by_gate=True)
            chunk = []
        if (i + 1) % 100 == 0:
            print(f"[bench] recorded {i + 1} runs", file=sys.stderr, flush=True)
    date_the_logs(store, history.first)


def date_the_logs(store: MetadataStore, first: datetime) -> None:
    """Give the commit files of the store's runtime tables the ages of the history they hold,
    spread from `first` to now: recorded in minutes, a history of days would otherwise be all
    inside the log retention, which a store that lived those days is not (its passes removed
    the expired commit files as they went, `compaction.LOG_RETENTION`)."""
    start, now = first.timestamp(), time.time()
    for name in store.tables():
        log = Path(store.location(name)) / "_delta_log"
        if not table_def(name).append_only or not log.is_dir():
            continue
        files = sorted(log.iterdir())
        for i, path in enumerate(files):
            when = start + (now - start) * (i + 1) / len(files)
            os.utime(path, (when, when))
