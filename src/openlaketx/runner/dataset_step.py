"""The governed write path of one dataset (DESIGN.md §5).

read (once, persisted) → capture schema → evaluate every rule and profile metric in one pass →
LakeGuard decides and records the decision with its evidence → if allowed, one tagged,
idempotent Delta commit → LakeGuard records the version → one terminal run_history row.
A blocked batch goes to quarantine and leaves the target untouched; any exception ends FAILED.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeguard.errors import LakeTxError
from lakeguard.gate import ApprovedVersion, Decision, Gate, decide
from lakeguard.quality.evaluate import BatchEvaluation, evaluate_batch
from lakeguard.quality.outcome import RuleOutcome
from lakeguard.quality.rules import compile_rules
from lakeguard.schema.fingerprint import capture, schema_hash
from lakeguard.store import MetadataStore
from openlaketx.loads import strategies
from openlaketx.loads.commit import CommitTag, TaggedCommit, find_commit
from openlaketx.runner import evidence
from openlaketx.runner.definitions import Definitions
from openlaketx.runner.inputs import (
    LOADED_COL,
    RUN_COL,
    VERSION_COL,
    InputBatch,
    bronze_input,
    derived_input,
)
from openlaketx.runner.lifecycle import DatasetAttempt, JobRun
from openlaketx.runner.quarantine import quarantine
from openlaketx.sources.files import CORRUPT_COLUMN
from openlaketx.tables import dataset_location, register

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class StepResult:
    dataset_id: str
    run_id: str
    status: str  # SUCCESS | BLOCKED | FAILED
    rows_read: int | None = None
    rows_written: int | None = None
    data_version: int | None = None
    reason: str | None = None
    error: LakeTxError | None = None
    outcomes: list[RuleOutcome] = field(default_factory=list)


@dataclass
class RunContext:
    spark: SparkSession
    store: MetadataStore
    gate: Gate
    defs: Definitions
    warehouse: str
    job: JobRun
    progress: Callable[[str], None]


def error_text(exc: BaseException) -> str:
    if isinstance(exc, LakeTxError):
        return exc.message
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"[:2000]


def run_dataset(ctx: RunContext, dataset_id: str) -> StepResult:
    """Run one governed attempt; always ends with exactly one run_history row."""
    dataset = ctx.defs.dataset(dataset_id)
    attempt = DatasetAttempt(ctx.job, dataset_id, dataset["layer"])
    attempt.start()
    step = _GovernedStep(ctx, dataset, attempt)
    try:
        result = step.execute()
    except BaseException as exc:  # interrupted or crashed: still one terminal row, then re-raise
        wrapped = exc if isinstance(exc, LakeTxError) else None
        message = error_text(exc)
        if step.open_timer is not None:
            attempt.log_step(step.open_timer, "FAILED", error=message)
        attempt.finish("FAILED", rows_read=step.rows_read, error=message)
        if not isinstance(exc, Exception):
            raise
        return StepResult(
            dataset_id,
            attempt.run_id,
            "FAILED",
            step.rows_read,
            reason=message,
            error=wrapped or LakeTxError(message),
        )
    finally:
        step.release()
    attempt.finish(
        result.status,
        rows_read=result.rows_read,
        rows_written=result.rows_written,
        data_version=result.data_version,
        error=result.reason if result.status == "BLOCKED" else None,
    )
    return result


class _GovernedStep:
    def __init__(self, ctx: RunContext, dataset: dict[str, Any], attempt: DatasetAttempt) -> None:
        self.ctx = ctx
        self.dataset = dataset
        self.dataset_id: str = dataset["dataset_id"]
        self.attempt = attempt
        self.path = dataset_location(ctx.warehouse, dataset["table_name"])
        self.rows_read: int | None = None
        self.open_timer: Any = None
        self._persisted: DataFrame | None = None

    def release(self) -> None:
        if self._persisted is not None:
            self._persisted.unpersist()
            self._persisted = None

    def _phase(self, name: str, step_type: str) -> Any:
        self.open_timer = self.attempt.timer(name, step_type)
        self.ctx.progress(f"{self.dataset_id}: {name}")
        return self.open_timer

    def _done(self, timer: Any, status: str = "COMPLETED", **kw: Any) -> None:
        self.attempt.log_step(timer, status, **kw)
        self.open_timer = None

    # -- the path -------------------------------------------------------------------------
    def execute(self) -> StepResult:
        ctx, gate = self.ctx, self.ctx.gate
        rules = compile_rules(ctx.defs.rules(self.dataset_id))
        own_latest = gate.latest(self.dataset_id)

        timer = self._phase("read", "read")
        batch = self._input(own_latest)
        next_version = (own_latest.version if own_latest else 0) + 1
        if batch.frame is None:
            self._done(timer, rows=0, metadata={"note": batch.note})
            return StepResult(
                self.dataset_id, self.attempt.run_id, "SUCCESS", 0, 0, reason=batch.note
            )

        pending = find_commit(ctx.spark, self.path, next_version)
        if pending is not None:
            if pending.batch_fingerprint == batch.fingerprint:
                self._done(timer, metadata={"note": "retry of a committed batch"})
                return self._adopt(pending, own_latest)
            own_latest = self._adopt_foreign(pending, own_latest)
            next_version += 1

        from pyspark import StorageLevel

        frame = batch.frame.persist(StorageLevel.MEMORY_AND_DISK_DESER)
        self._persisted = frame
        columns = capture(frame.schema)
        self._done(timer, metadata={"fingerprint": batch.fingerprint})

        timer = self._phase(f"validate {len(rules) + len(batch.builtin_rules)} rules", "validate")
        all_rules = [*batch.builtin_rules, *rules]
        result = evaluate_batch(frame, all_rules, profile=self._profile())
        self.rows_read = result.rows
        self._done(
            timer,
            rows=result.rows,
            metadata={"outcomes": {o.rule_id: o.outcome for o in result.outcomes}},
        )

        timer = self._phase("gate", "gate")
        decision = decide(
            result.outcomes, from_layer=batch.from_layer, to_layer=self.dataset["layer"]
        )
        decision_row = gate.decision_row(self.dataset_id, self.attempt.run_id, decision)
        self.attempt.evidence = evidence.rows(
            ctx, self.dataset, self.attempt, result, columns, decision_row
        )
        gate.record(decision_row)
        self._done(
            timer,
            "COMPLETED" if decision.allowed else "BLOCKED",
            metadata={"allowed": decision.allowed, "reason": decision.reason},
        )

        if not decision.allowed:
            timer = self._phase("quarantine", "quarantine")
            kept = quarantine(ctx, self.dataset_id, frame, all_rules, self.attempt.run_id)
            self._done(timer, rows=kept)
            return StepResult(
                self.dataset_id,
                self.attempt.run_id,
                "BLOCKED",
                result.rows,
                0,
                reason=decision.reason,
                outcomes=result.outcomes,
            )
        return self._publish(frame, batch, result, decision, own_latest, next_version, all_rules)

    def _input(self, own_latest: ApprovedVersion | None) -> InputBatch:
        ctx = self.ctx
        if self.dataset["layer"] == "bronze":
            return bronze_input(ctx.spark, ctx.defs, self.dataset)
        parent_latest = ctx.gate.latest(self.dataset["parents"][0])
        return derived_input(
            ctx.spark, ctx.defs, self.dataset, parent_latest, own_latest, ctx.warehouse
        )

    def _profile(self) -> bool:
        return bool(self.ctx.defs.transform(self.dataset).get("profile", True))

    def _publish(
        self,
        frame: DataFrame,
        batch: InputBatch,
        result: BatchEvaluation,
        decision: Decision,
        own_latest: ApprovedVersion | None,
        version: int,
        rules: list[Any],
    ) -> StepResult:
        from pyspark.sql import functions as F

        ctx = self.ctx
        timer = self._phase("write", "write")
        out = frame
        malformed = 0
        if batch.has_corrupt_column:
            malformed = next(
                (o.failed_rows for o in result.outcomes if o.rule_id == "_malformed_rows"), 0
            )
            if malformed:
                quarantine(
                    ctx,
                    self.dataset_id,
                    frame.where(F.col(CORRUPT_COLUMN).isNotNull()),
                    rules,
                    self.attempt.run_id,
                )
                out = frame.where(F.col(CORRUPT_COLUMN).isNull())
            out = out.drop(CORRUPT_COLUMN)
        keys = list(self.dataset.get("business_keys") or [])
        load_type = self.dataset.get("load_type") or "append"
        if load_type == "merge":
            out = strategies.with_row_hash(out, keys)
        out = (
            out.withColumn(VERSION_COL, F.lit(version).cast("long"))
            .withColumn(RUN_COL, F.lit(self.attempt.run_id))
            .withColumn(LOADED_COL, F.current_timestamp())
        )
        tag = CommitTag(
            ctx.store.tenant,
            self.dataset_id,
            self.attempt.run_id,
            version,
            batch.fingerprint,
            batch.upstream_refs,
        )
        if load_type == "merge":
            commit = strategies.merge(out, self.path, tag, keys, self.dataset.get("sequence_by"))
        elif load_type == "full":
            commit = strategies.overwrite(out, self.path, tag)
        else:
            commit = strategies.append(out, self.path, tag)
        register(ctx.spark, ctx.warehouse, self.dataset["table_name"])
        self._done(
            timer,
            rows=commit.rows_written,
            metadata={"delta_version": commit.commit_version, "malformed_set_aside": malformed},
        )

        timer = self._phase("record version", "record")
        row_count = _row_count(own_latest, commit.commit, load_type)
        ctx.gate.record_version(
            dataset_id=self.dataset_id,
            version=version,
            snapshot_ref=str(commit.commit_version),
            schema_hash=schema_hash(capture(out.schema)),
            row_count=row_count,
            rows_written=commit.rows_written,
            upstream_refs=batch.upstream_refs,
            run_id=self.attempt.run_id,
            promoted_by=ctx.job.pipeline_id,
            previous=own_latest,
        )
        self._done(timer, metadata={"version": version})
        return StepResult(
            self.dataset_id,
            self.attempt.run_id,
            "SUCCESS",
            result.rows,
            commit.rows_written,
            version,
            decision.reason,
            outcomes=result.outcomes,
        )

    # -- crash recovery -------------------------------------------------------------------
    def _table_schema_hash(self, commit_version: int) -> str:
        frame = (
            self.ctx.spark.read.format("delta")
            .option("versionAsOf", commit_version)
            .load(self.path)
        )
        return schema_hash(capture(frame.schema))

    def _record_commit(self, commit: TaggedCommit, latest: ApprovedVersion | None) -> None:
        load_type = self.dataset.get("load_type") or "append"
        self.ctx.gate.record_version(
            dataset_id=self.dataset_id,
            version=commit.data_version,
            snapshot_ref=str(commit.commit_version),
            schema_hash=self._table_schema_hash(commit.commit_version),
            row_count=_row_count(latest, commit, load_type),
            rows_written=strategies.rows_written(commit),
            upstream_refs=commit.upstream,
            run_id=commit.run_id,
            promoted_by=self.ctx.job.pipeline_id,
            previous=latest,
        )

    def _adopt(self, commit: TaggedCommit, latest: ApprovedVersion | None) -> StepResult:
        """The same batch was committed by a run that died before recording it: record it now."""
        timer = self._phase("record recovered version", "record")
        self._record_commit(commit, latest)
        self._done(timer, metadata={"recovered_commit": commit.commit_version})
        return StepResult(
            self.dataset_id,
            self.attempt.run_id,
            "SUCCESS",
            None,
            strategies.rows_written(commit),
            commit.data_version,
            reason=f"recovered commit {commit.commit_version} of run {commit.run_id}",
        )

    def _adopt_foreign(
        self, commit: TaggedCommit, latest: ApprovedVersion | None
    ) -> ApprovedVersion | None:
        """Another batch was committed (approved) but never recorded: record it first."""
        self._record_commit(commit, latest)
        return self.ctx.gate.latest(self.dataset_id)


def _row_count(latest: ApprovedVersion | None, commit: TaggedCommit | None, load_type: str) -> int:
    """Rows in the table after the commit, from the previous count and the commit's metrics."""
    before = latest.row_count if latest else 0
    if commit is None:
        return before
    m = commit.metrics
    if load_type == "full":
        return int(m.get("numOutputRows", 0))
    if "numTargetRowsInserted" in m:
        return (
            before + int(m.get("numTargetRowsInserted", 0)) - int(m.get("numTargetRowsDeleted", 0))
        )
    return before + int(m.get("numOutputRows", 0))
