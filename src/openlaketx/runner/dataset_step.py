"""The governed write path of one dataset (DESIGN.md §5).

lease the dataset → read the input once (lazily) → write it once to a staged folder no reader
sees, counting every row rule during that write → UNIQUE rules from the staged keys → LakeGuard
decides and records the decision → if allowed, publish in one tagged, idempotent Delta commit
(the staged files added in place, or merged from) → LakeGuard records the version → one
terminal run_history row. A blocked batch's staged files become its quarantine and the target
is untouched; any exception ends FAILED.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from lakeguard.errors import (
    LakeTxError,
    MetadataStoreError,
    SourceError,
    describe,
)
from lakeguard.evidence import Check, CheckKind
from lakeguard.gate import Decision, Gate, decide
from lakeguard.quality.compiled import CompiledRule
from lakeguard.quality.fail_behavior import droppable as droppable_rules
from lakeguard.quality.fail_behavior import fail_behavior
from lakeguard.quality.outcome import BatchEvaluation, RuleOutcome
from lakeguard.quality.profiling import LastProfiles, full_profile_due, profile_drift
from lakeguard.quality.rules import compile_rules
from lakeguard.schema.drift import diff
from lakeguard.schema.fingerprint import capture, from_fields, schema_hash
from lakeguard.store import RunWriter
from lakeguard.store.ddl import quote
from lakeguard.store.records import ApprovedVersion, DatasetDef
from lakeguard.store.registry import Registry
from lakeguard.vocabulary import (
    SCD2_COLUMNS,
    AttemptStatus,
    Layer,
    LoadType,
    ProgressKind,
    RuleType,
    StepStatus,
)
from openlaketx.loads import footers, staging, strategies
from openlaketx.loads.catchup import PARENT_VERSION
from openlaketx.loads.commit import CommitTag, TaggedCommit, app_id, find_commit, published_through
from openlaketx.loads.content import recorded_digests_hash, staged_hash
from openlaketx.loads.publish import create_empty, fields_of, publish, quarantine
from openlaketx.runner import drift, dropping, evidence
from openlaketx.runner.batch_rows import merge_keys, merge_plan, publishable
from openlaketx.runner.inputs import (
    InputBatch,
    bronze_input,
    derived_input,
)
from openlaketx.runner.lease import LeaseHold
from openlaketx.runner.lifecycle import DatasetAttempt, JobRun, new_id
from openlaketx.runner.models import model_input
from openlaketx.runner.policies import policy_checks
from openlaketx.runner.validation import evaluate_staged
from openlaketx.sources.credentials import scrub
from openlaketx.sources.files import CORRUPT_COLUMN, archive_files
from openlaketx.sources.jdbc import root_cause
from openlaketx.sources.kinds import reader
from openlaketx.sources.watermarks import watermark_text
from openlaketx.tables import dataset_location, quarantine_name, register

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Staged with the rows, never part of the table: unparseable text, a catch-up's parent version.
_NOT_PUBLISHED = frozenset({CORRUPT_COLUMN, PARENT_VERSION})


@dataclass(kw_only=True)
class StepResult:
    dataset_id: str
    run_id: str
    status: AttemptStatus
    rows_read: int | None = None
    rows_written: int | None = None
    data_version: int | None = None
    reason: str | None = None
    error: LakeTxError | None = None
    outcomes: list[RuleOutcome] = field(default_factory=list)
    quarantined: int = 0
    aborts_job: bool = False  # blocked under fail_behavior: abort; the job stops here


@dataclass(frozen=True, kw_only=True)
class RunContext:
    spark: SparkSession
    gate: Gate
    writer: RunWriter
    registry: Registry
    warehouse: str
    job: JobRun
    progress: Callable[[str], None]
    hold: LeaseHold  # the job run's leases: every dataset it writes, taken up front


def run_dataset(ctx: RunContext, dataset_id: str) -> StepResult:
    """Run one governed attempt; always ends with exactly one run_history row."""
    dataset = ctx.registry.dataset(dataset_id)
    attempt = DatasetAttempt(ctx.job, dataset_id, dataset.layer, ctx.progress)
    attempt.start()
    step = _GovernedStep(ctx, dataset, attempt)
    try:
        ctx.hold.check(dataset_id)
        result = step.execute()
    except BaseException as exc:  # interrupted or crashed: still one terminal row, then re-raise
        message = describe(exc)
        attempt.finish(AttemptStatus.FAILED, rows_read=step.rows_read, error=message)
        if not isinstance(exc, Exception):
            raise
        return StepResult(
            dataset_id=dataset_id,
            run_id=attempt.run_id,
            status=AttemptStatus.FAILED,
            rows_read=step.rows_read,
            reason=message,
            error=exc if isinstance(exc, LakeTxError) else LakeTxError(message),
        )
    attempt.finish(
        result.status,
        rows_read=result.rows_read,
        rows_written=result.rows_written,
        data_version=result.data_version,
        error=result.reason if result.status == AttemptStatus.BLOCKED else None,
    )
    _record_trust(ctx, dataset_id, attempt.run_id)
    return result


def _record_trust(ctx: RunContext, dataset_id: str, run_id: str) -> None:
    """Append the dataset's trust score after the attempt (best effort: it never fails a run)."""
    try:
        score = ctx.gate.reader.trust([dataset_id])[dataset_id]
        ctx.writer.append(
            "trust_scores",
            [
                {
                    "score_id": new_id(),
                    "tenant_id": ctx.writer.tenant,
                    "dataset_id": dataset_id,
                    "run_id": run_id,
                    "score": score.score,
                    "quality": score.quality,
                    "freshness": score.freshness,
                    "stability": score.stability,
                    "lineage": score.lineage,
                    "computed_at": ctx.writer.now(),
                }
            ],
        )
    except Exception as exc:  # the score is derived; the next attempt records it again
        ctx.progress(f"{dataset_id}: trust score not recorded: {describe(exc)}")


class _GovernedStep:
    def __init__(self, ctx: RunContext, dataset: DatasetDef, attempt: DatasetAttempt) -> None:
        self.ctx = ctx
        self.dataset = dataset
        self.dataset_id = dataset.dataset_id
        self.attempt = attempt
        self.path = dataset_location(ctx.warehouse, dataset.table_name)
        self.quarantine_path = dataset_location(ctx.warehouse, quarantine_name(self.dataset_id))
        self.load_type = LoadType(dataset.load_type)
        self.keys = merge_keys(dataset)
        self.rows_read: int | None = None
        self.content_hash: str | None = None  # of a full load's staged snapshot
        self.drift: list[drift.DriftOutcome] = []

    def _result(self, status: AttemptStatus, **kw: Any) -> StepResult:
        return StepResult(
            dataset_id=self.dataset_id, run_id=self.attempt.run_id, status=status, **kw
        )

    # -- the path -------------------------------------------------------------------------
    def execute(self) -> StepResult:
        ctx, attempt = self.ctx, self.attempt
        rules = compile_rules(ctx.registry.rules(self.dataset_id))
        own_latest = ctx.gate.latest(self.dataset_id)
        published = published_through(self.path, app_id(ctx.writer.tenant, self.dataset_id))
        # Holding the lease, any staged batch left here is a crashed run's leftover.
        swept = staging.sweep(self.path, published)
        recovered: list[TaggedCommit] = []
        if published > (own_latest.version if own_latest else 0):
            recovered = self._recover(own_latest, published)
            own_latest = ctx.gate.latest(self.dataset_id)
        next_version = (own_latest.version if own_latest else 0) + 1

        with attempt.phase("read", "read") as log:
            batch = self._input(own_latest)
            log.metadata = {
                "fingerprint": batch.fingerprint,
                "swept": len(swept),
                "sources": {
                    o.source_object_id: o.load_type
                    for o in ctx.registry.source_objects(self.dataset_id)
                },
            }
            if batch.frame is None:
                log.rows, log.metadata["note"] = 0, batch.note
        if batch.frame is None:
            return self._nothing_new(batch.note, recovered)
        self.drift = self._drift(batch, own_latest)
        batch.checks += drift.checks(self.drift)

        all_rules = [*batch.builtin_rules, *rules]
        with attempt.phase("stage", "stage") as log:
            try:
                staged = self._stage(batch, all_rules, next_version)
            except Exception as exc:
                raise _source_failure(exc, batch) from exc
            finally:
                for view in batch.views:
                    ctx.spark.catalog.dropTempView(view)
            nothing = "no new rows" if staged.rows == 0 and batch.empty_is_nothing_new else None
            if nothing is None and self._unchanged(staged, own_latest, batch):
                nothing = "no row would change"
            if nothing is not None:
                staging.discard(staged)
                log.rows, log.metadata["note"] = 0, nothing
        if nothing is not None:
            return self._nothing_new(nothing, recovered)
        transform = self.dataset.transform
        last_profiles = (
            ctx.gate.reader.last_profiles(self.dataset_id)
            if transform.profile
            else LastProfiles({})
        )
        full = full_profile_due(transform.profile_cadence, last_profiles, ctx.writer.now())
        with attempt.phase(f"evaluate {len(all_rules)} rules", "validate") as log:
            result = evaluate_staged(
                ctx.spark,
                staged,
                all_rules,
                profile=transform.profile,
                full_profile_top=transform.profile_cadence.top_values
                if full and transform.profile_cadence
                else None,
                referenced=self._approved_snapshot,
            )
            self.rows_read = result.rows
            log.rows = result.rows
            log.metadata = {
                "staged": staged.folder,
                "files": len(staged.good) + len(staged.malformed),
                "outcomes": {o.rule_id: o.outcome for o in result.outcomes},
            }

        with attempt.phase("gate", "gate") as log:
            checks = list(batch.checks)
            checks += policy_checks(
                ctx.registry,
                ctx.gate.reader,
                self.dataset,
                rows=result.rows,
                own_latest=own_latest,
                drift_kinds=[d.change.kind for o in self.drift for d in o.decided],
                now=ctx.writer.now(),
                profile_drift=profile_drift(
                    last_profiles.latest, {(m.column, m.metric): m.value for m in result.profile}
                ),
            )
            if staged.rows == 0 and any(s.snapshot for s in batch.sources):
                checks.append(
                    Check(
                        name="empty_snapshot",
                        kind=CheckKind.EMPTY_SNAPSHOT,
                        passed=False,
                        blocking=True,
                        detail="the source returned no rows; promoting an empty snapshot "
                        "would empty the dataset",
                    )
                )
            behavior = fail_behavior(self.dataset, ctx.registry.source_objects(self.dataset_id))
            droppable = droppable_rules(all_rules, behavior)
            to_drop = [o.rule_id for o in result.outcomes if o.outcome == "FAIL"]
            to_drop = [r for r in to_drop if r in droppable]
            dropped_rows = dropping.rows_failing(ctx.spark, staged, to_drop)
            if to_drop and dropped_rows >= result.rows - _malformed(result):
                checks.append(
                    Check(
                        name="nothing_left",
                        kind=CheckKind.NOTHING_LEFT,
                        passed=False,
                        blocking=True,
                        detail=f"every row fails {', '.join(to_drop)}: dropping them would "
                        "leave nothing to promote",
                    )
                )
            decision = decide(
                result.outcomes,
                from_layer=batch.from_layer,
                to_layer=self.dataset.layer,
                checks=checks,
                droppable=droppable,
            )
            evidence_of_batch = decision.evidence.about_batch(
                fail_behavior=behavior,
                upstream=batch.upstream_refs,
                batch=batch.fingerprint,  # tells a stuck dataset apart
                dropped_rows=dropped_rows if to_drop else None,
            )
            decision = replace(decision, evidence=evidence_of_batch)
            decision_row = ctx.gate.decision_row(self.dataset_id, attempt.run_id, decision)
            attempt.evidence = evidence.rows(
                tenant=ctx.writer.tenant,
                pipeline_logging_id=ctx.job.run_id,
                run_id=attempt.run_id,
                dataset=self.dataset,
                result=result,
                columns=from_fields(fields_of(staged.schema, _NOT_PUBLISHED)),
                decision_row=decision_row,
            )
            attempt.evidence["schema_change_log"] = drift.log_rows(
                self.drift,
                tenant=ctx.writer.tenant,
                dataset_id=self.dataset_id,
                run_id=attempt.run_id,
                now=decision_row["evaluated_at"],
            )
            ctx.gate.record(decision_row)
            log.status = StepStatus.COMPLETED if decision.allowed else StepStatus.BLOCKED
            log.metadata = {"allowed": decision.allowed, "reason": decision.reason}

        if not decision.allowed:
            with attempt.phase("quarantine", "quarantine") as log:
                log.rows = quarantine(
                    self.quarantine_path, staged, attempt.run_id, malformed_only=False
                )
                register(ctx.spark, ctx.warehouse, quarantine_name(self.dataset_id))
            return self._result(
                AttemptStatus.BLOCKED,
                rows_read=result.rows,
                rows_written=0,
                reason=decision.reason,
                outcomes=result.outcomes,
                quarantined=log.rows or 0,
                aborts_job=behavior == "abort",
            )
        return self._publish(staged, batch, result, decision, own_latest, next_version)

    def _nothing_new(self, note: str | None, recovered: list[TaggedCommit]) -> StepResult:
        """Nothing new to promote: no decision, no version (except one recovered from a crash)."""
        if not recovered:
            return self._result(AttemptStatus.SUCCESS, rows_read=0, rows_written=0, reason=note)
        last = recovered[-1]
        return self._result(
            AttemptStatus.SUCCESS,
            rows_written=sum(strategies.rows_written(c) for c in recovered),
            data_version=last.data_version,
            reason=f"recovered commit {last.commit_version} of run {last.run_id}; {note}",
        )

    def _input(self, own_latest: ApprovedVersion | None) -> InputBatch:
        ctx = self.ctx
        if self.dataset.layer == Layer.BRONZE:
            progress = ctx.gate.reader.source_progress(self.dataset_id)
            batch = bronze_input(ctx.spark, ctx.registry, self.dataset, progress)
            return self._without_repeats(batch, own_latest)
        if self.dataset.transform.sql is not None:
            latest = {p: ctx.gate.latest(p) for p in self.dataset.parents}
            return model_input(
                ctx.spark,
                ctx.registry,
                self.dataset,
                latest,
                own_latest,
                ctx.warehouse,
                self.attempt.run_id,
            )
        parent_versions = ctx.gate.reader.versions(self.dataset.parents[0])
        return derived_input(
            ctx.spark, ctx.registry, self.dataset, parent_versions, own_latest, ctx.warehouse
        )

    def _approved_snapshot(self, dataset_id: str) -> DataFrame | None:
        """Another dataset's live rows in its latest approved snapshot (a foreign key's
        reference): soft-deleted rows and closed scd2 versions hold no valid key."""
        approved = self.ctx.gate.latest(dataset_id)
        if approved is None:
            return None
        referenced = self.ctx.registry.dataset(dataset_id)
        snapshot = (
            self.ctx.spark.read.format("delta")
            .option("versionAsOf", int(approved.snapshot_ref))
            .load(dataset_location(self.ctx.warehouse, referenced.table_name))
        )
        return merge_plan(referenced).current(snapshot)

    def _table_types(self) -> dict[str, str] | None:
        """The dataset table's column types by lower-case name (None: no table yet)."""
        from deltalake import DeltaTable

        if not DeltaTable.is_deltatable(self.path):
            return None
        fields = json.loads(DeltaTable(self.path).schema().to_json())["fields"]
        return {c.name.lower(): c.type for c in from_fields(fields)}

    def _drift(
        self, batch: InputBatch, own_latest: ApprovedVersion | None
    ) -> list[drift.DriftOutcome]:
        """The batch's schema drift, each change decided by its source's or dataset's profile."""
        registry, table = self.ctx.registry, self._table_types()
        if self.dataset.layer == Layer.BRONZE:
            objects = {o.source_object_id: o for o in registry.source_objects(self.dataset_id)}
            return [
                drift.decide(
                    s.drift,
                    registry.profile(objects[s.source_object_id].schema_profile),
                    objects[s.source_object_id].schema_profile,
                    table,
                    source_object_id=s.source_object_id,
                    live=s.live,
                )
                for s in batch.sources
                if s.drift
            ]
        approved = self.ctx.gate.reader.approved_schema(self.dataset_id)
        if approved is None or batch.frame is None:
            return []
        live = [c for c in capture(batch.frame.schema) if not _engine_column(c.name)]
        changes = diff([c for c in approved if not _engine_column(c.name)], live)
        if not changes:
            return []
        profile = self.dataset.transform.schema_profile
        return [drift.decide(changes, registry.profile(profile), profile, table, live=live)]

    @property
    def evolves(self) -> bool:
        """Whether this promotion carries schema changes its profiles allowed."""
        return any(o.evolves for o in self.drift)

    def _without_repeats(self, batch: InputBatch, own_latest: ApprovedVersion | None) -> InputBatch:
        """Drop rows a lookback read again that the dataset already holds (at or above the
        lookback's lower bound, in its approved snapshot), so each source row lands once."""
        windows = [s.reread_from for s in batch.sources if s.reread_from is not None]
        if batch.frame is None or not windows or own_latest is None:
            return batch
        from pyspark.sql import functions as F

        column, lower, kind = windows[0]
        held = (
            self.ctx.spark.read.format("delta")
            .option("versionAsOf", int(own_latest.snapshot_ref))
            .load(self.path)
            .where(F.col(quote(column)) >= F.lit(lower).cast(kind))
            .select(*[F.col(quote(c)) for c in batch.frame.columns])
        )
        same = [batch.frame[quote(c)].eqNullSafe(held[quote(c)]) for c in batch.frame.columns]
        batch.frame = batch.frame.join(held, on=same, how="left_anti")
        return batch

    def _stage(
        self, batch: InputBatch, rules: list[CompiledRule], version: int
    ) -> staging.StagedBatch:
        from deltalake import DeltaTable

        assert batch.frame is not None
        table = (
            DeltaTable(self.path).schema().to_arrow().names
            if DeltaTable.is_deltatable(self.path)
            else []
        )
        frame = publishable(
            batch.frame,
            self.dataset,
            version=version,
            run_id=self.attempt.run_id,
            rules=rules,
            table_columns=table,
        )
        # A MERGE copies what it reads, so its input is scratch; anything else is published
        # in place (a first merge creates the table from its batch).
        scratch = self._merging(batch)
        folder = staging.batch_folder(
            self.path, scratch=scratch, version=version, run_id=self.attempt.run_id
        )
        return staging.stage(frame, folder)

    @property
    def merges(self) -> bool:
        return self.load_type in (LoadType.MERGE, LoadType.SCD2)

    def _merging(self, batch: InputBatch) -> bool:
        """Whether the batch is published by a MERGE: a merge or scd2 batch into an existing
        table, or a catch-up of several parent versions (applied in order, even the first)."""
        from deltalake import DeltaTable

        return self.merges and (DeltaTable.is_deltatable(self.path) or bool(batch.parent_versions))

    def plan(self, batch: InputBatch) -> strategies.MergePlan:
        return merge_plan(self.dataset, batch.parent_versions)

    def _unchanged(
        self, staged: staging.StagedBatch, own_latest: ApprovedVersion | None, batch: InputBatch
    ) -> bool:
        """A batch that would change no row of the dataset: a full snapshot equal to the last
        approved one, or a merge or scd2 batch whose keys and row hashes all match."""
        from deltalake import DeltaTable

        if self.load_type == LoadType.FULL:
            # what an allowed full load promotes: every parseable row (a full load never drops)
            self.content_hash = staged_hash(f.path for f in staged.good)
            return own_latest is not None and own_latest.content_hash == self.content_hash
        if not self.merges or not staged.good or not DeltaTable.is_deltatable(self.path):
            return False
        rows = self.ctx.spark.read.parquet(staged.part_folder())
        counts = strategies.changes(self.ctx.spark, rows, self.path, self.plan(batch))
        return not any(counts.values())

    def _publish(
        self,
        staged: staging.StagedBatch,
        batch: InputBatch,
        result: BatchEvaluation,
        decision: Decision,
        own_latest: ApprovedVersion | None,
        version: int,
    ) -> StepResult:
        from deltalake import DeltaTable

        ctx = self.ctx
        tag = CommitTag(
            ctx.writer.tenant,
            self.dataset_id,
            self.attempt.run_id,
            version,
            batch.fingerprint,
            batch.upstream_refs,
        )
        with self.attempt.phase("write", "write") as log:
            set_aside = 0
            rejected = dropping.rejected(
                batch.has_corrupt_column and _malformed(result) > 0,
                list(decision.evidence.dropped_rules),
            )
            if rejected is not None:
                staged = staging.split(ctx.spark, staged, rejected)
            if staged.malformed:
                set_aside = quarantine(
                    self.quarantine_path, staged, self.attempt.run_id, malformed_only=True
                )
                register(ctx.spark, ctx.warehouse, quarantine_name(self.dataset_id))
            # What the batch takes from its sources counts once this version is approved.
            progress = self._progress_rows(batch, staged, version)
            if progress:
                ctx.writer.append("source_progress", progress)
            merging = self._merging(batch)
            if not merging and self.load_type != LoadType.FULL:
                # the staged good files are exactly what the commit adds: sum their digests;
                # a MERGE's rows are summed from the table after it
                self.content_hash = staged_hash(f.path for f in staged.good)
            ctx.hold.check(self.dataset_id)
            if merging:
                if not DeltaTable.is_deltatable(self.path):
                    create_empty(self.path, fields_of(staged.schema, _NOT_PUBLISHED))
                commit = strategies.merge(
                    ctx.spark,
                    staged.part_folder(),
                    self.path,
                    tag,
                    self.plan(batch),
                    drop=_NOT_PUBLISHED,
                    may_add=self.evolves,
                )
                staging.discard(staged)
            else:
                commit = publish(
                    self.path,
                    staged,
                    tag,
                    overwrite=self.load_type == LoadType.FULL,
                    drop=_NOT_PUBLISHED,
                    may_add=self.evolves,
                )
            register(ctx.spark, ctx.warehouse, self.dataset.table_name)
            log.rows = strategies.rows_written(commit)
            log.metadata = {
                "load_type": self.load_type,
                "delta_version": commit.commit_version,
                "set_aside": set_aside,
            }

        with self.attempt.phase("record version", "record") as log:
            self._record_commit(commit, own_latest, self.content_hash)
            for outcome in self.drift:
                if outcome.evolves and outcome.source_object_id and outcome.live is not None:
                    ctx.gate.evolve_source_schema(outcome.source_object_id, outcome.live)
            log.metadata = {"version": version}
        moves = [m for s in batch.sources for m in s.archive]
        if moves:
            with self.attempt.phase("archive", "archive") as log:
                archive_files(ctx.spark, moves)
                log.rows = len(moves)
        return self._result(
            AttemptStatus.SUCCESS,
            rows_read=result.rows,
            rows_written=strategies.rows_written(commit),
            data_version=version,
            reason=decision.reason,
            outcomes=result.outcomes,
            quarantined=set_aside,
        )

    def _progress_rows(
        self, batch: InputBatch, staged: staging.StagedBatch, version: int
    ) -> list[dict[str, Any]]:
        """`source_progress` rows for what the batch read, with new watermarks from the
        staged files' footers."""
        now = self.ctx.writer.now()
        base = {
            "tenant_id": self.ctx.writer.tenant,
            "dataset_id": self.dataset_id,
            "run_id": self.attempt.run_id,
            "data_version": version,
            "recorded_at": now,
        }
        rows = [
            {**base, **entry, "progress_id": new_id(), "source_object_id": s.source_object_id}
            for s in batch.sources
            for entry in s.progress
        ]
        for s in batch.sources:
            if s.watermark_column and staged.rows:
                rows.append(
                    {
                        **base,
                        "progress_id": new_id(),
                        "source_object_id": s.source_object_id,
                        "kind": ProgressKind.WATERMARK,
                        "watermark": self._highest(staged, s.watermark_column),
                    }
                )
        return rows

    def _highest(self, staged: staging.StagedBatch, column: str) -> str:
        """The highest value of `column` in the staged batch, as text (footers, else Spark)."""
        value = footers.highest([*staged.good, *staged.malformed], column)
        if value is None:
            from pyspark.sql import functions as F

            row = self.ctx.spark.read.parquet(staged.folder).agg(F.max(column)).first()
            value = row[0] if row else None
        if value is None:
            raise SourceError(
                f"the watermark column {column!r} is null in every new row",
                where=f"datasets[{self.dataset_id}]",
                fix="choose a watermark column that is set on every row",
            )
        return watermark_text(value)

    # -- versions and crash recovery ------------------------------------------------------
    def _table_schema_hash(self, commit_version: int) -> str:
        from deltalake import DeltaTable

        fields = json.loads(DeltaTable(self.path, version=commit_version).schema().to_json())
        return schema_hash(from_fields(fields["fields"]))

    def _record_commit(
        self,
        commit: TaggedCommit,
        latest: ApprovedVersion | None,
        content_hash: str | None = None,
        *,
        recovered: bool = False,
    ) -> None:
        """Record the version, with the content hash of the rows it wrote (`content_hash`: one
        already computed over the same rows) and the hash of the definitions it ran under
        (unknown for a crashed run's commit: its definitions may have changed since)."""
        if content_hash is None:
            content_hash = recorded_digests_hash(
                self.ctx.spark, self.path, commit.data_version, commit.commit_version
            )
        self.ctx.gate.record_version(
            dataset_id=self.dataset_id,
            version=commit.data_version,
            snapshot_ref=str(commit.commit_version),
            schema_hash=self._table_schema_hash(commit.commit_version),
            row_count=_row_count(latest, commit, self.load_type),
            rows_written=strategies.rows_written(commit),
            upstream_refs=commit.upstream,
            run_id=commit.run_id,
            promoted_by=self.ctx.job.pipeline_id,
            previous=latest,
            content_hash=content_hash,
            definition_hash=None
            if recovered
            else self.ctx.registry.definition_hash(self.dataset_id),
        )

    def _recover(self, latest: ApprovedVersion | None, published: int) -> list[TaggedCommit]:
        """Record the commits a crashed run published but never recorded (they were approved:
        their decisions are on record), oldest first; their input then counts as taken."""
        recovered = []
        with self.attempt.phase("record recovered version", "record") as log:
            for version in range((latest.version if latest else 0) + 1, published + 1):
                commit = find_commit(self.path, version)
                if commit is None:
                    raise MetadataStoreError(
                        f"{self.dataset_id} has a commit for version {version} without its tag",
                        where=self.path,
                        fix="inspect the table history (DESCRIBE HISTORY) before running again",
                    )
                self._record_commit(commit, latest, recovered=True)
                latest = self.ctx.gate.latest(self.dataset_id)
                recovered.append(commit)
            log.metadata = {"recovered_commits": [c.commit_version for c in recovered]}
        return recovered


def _engine_column(name: str) -> bool:
    return name.startswith("_laketx") or name in SCD2_COLUMNS or name == CORRUPT_COLUMN


def _source_failure(exc: Exception, batch: InputBatch) -> Exception:
    """A failure while the source was being read, said without any secret and classified."""
    if isinstance(exc, LakeTxError):
        return exc
    text = root_cause(exc)
    for source in batch.sources:
        text = scrub(text, source.secret)
    if "FileNotFoundException" in text or "FILE_NOT_EXIST" in text:
        return SourceError(
            f"a source file vanished between listing and reading: {text}",
            where="source files",
            fix="run again: the files are listed afresh; nothing was promoted",
            transient=True,
        )
    transient = [s.kind for s in batch.sources if reader(s.kind).failures_transient]
    if transient:
        return SourceError(
            f"reading the source failed: {text}", where=f"{transient[0]} source", transient=True
        )
    return exc


def _malformed(result: BatchEvaluation) -> int:
    """Unparseable rows the batch had (the built-in PARSE rule's count)."""
    return sum(o.failed_rows for o in result.outcomes if o.rule_type == RuleType.PARSE)


def _row_count(latest: ApprovedVersion | None, commit: TaggedCommit, load_type: LoadType) -> int:
    """Rows in the table after the commit, from the previous count and what the commit did."""
    before = latest.row_count if latest else 0
    m = commit.metrics
    if load_type == LoadType.FULL:
        return commit.rows if commit.rows is not None else int(m.get("numOutputRows", 0))
    if "numTargetRowsInserted" in m:
        return (
            before + int(m.get("numTargetRowsInserted", 0)) - int(m.get("numTargetRowsDeleted", 0))
        )
    return before + (commit.rows if commit.rows is not None else int(m.get("numOutputRows", 0)))
