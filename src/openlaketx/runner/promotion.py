"""After the gate: an allowed batch published in one tagged commit and recorded as a version,
or a blocked one kept whole in quarantine with the target untouched (invariants 6 and 7)."""

from __future__ import annotations

from lakeguard.records.sources.progress import WatermarkMark
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.words.errors import SourceError
from lakeguard.words.vocabulary import AttemptStatus, FailBehavior, LoadType
from openlaketx.connect import MERGE_NEEDS, refuse_through_connect
from openlaketx.loads import footers, small_catch_up, small_merge, staging, strategies
from openlaketx.loads.commit import CommitTag, release
from openlaketx.loads.content import staged_hash
from openlaketx.loads.publish import create_empty, fields_of, publish, quarantine
from openlaketx.runner import drift, dropping
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.context import (
    NOT_PUBLISHED,
    RunContext,
    StepResult,
    Target,
    batch_inputs,
)
from openlaketx.runner.gating import GateOutcome
from openlaketx.runner.lifecycle import DatasetAttempt
from openlaketx.runner.recovery import Recovered, record_commit
from openlaketx.runner.stage import NO_ROW_CHANGES, Novelty
from openlaketx.sources.archive import archive_files
from openlaketx.sources.watermarks import watermark_text
from openlaketx.tables import quarantine_name, register


def hold_back(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    staged: staging.StagedBatch,
    gated: GateOutcome,
    batch: InputBatch,
    version: int,
) -> StepResult:
    """A blocked batch: its staged files become its quarantine; the target is untouched.
    Blocked with every row malformed, what its sources read is recorded as a rejection mark
    (once it is quarantined): an unchanged source is then nothing new, not quarantined again."""
    with attempt.phase("quarantine", "quarantine") as log:
        log.rows = quarantine(target.quarantine_path, staged, attempt.run_id, malformed_only=False)
        register(ctx.spark, ctx.warehouse, quarantine_name(target.dataset_id))
        wholly = 0 < gated.result.rows <= gated.malformed_rows
        rejected = [(s.source_object_id, m) for s in batch.sources for m in s.malformed]
        if wholly and rejected:
            now = ctx.writer.now()
            ctx.writer.append(
                [
                    SourceProgressRow.of(
                        mark,
                        tenant_id=ctx.writer.tenant,
                        dataset_id=target.dataset_id,
                        source_object_id=source_object_id,
                        run_id=attempt.run_id,
                        data_version=version,
                        recorded_at=now,
                    )
                    for source_object_id, mark in rejected
                ]
            )
    return target.result(
        attempt.run_id,
        AttemptStatus.BLOCKED,
        rows_read=gated.result.rows,
        rows_written=0,
        reason=gated.decision.reason,
        outcomes=gated.result.outcomes,
        quarantined=log.rows or 0,
        aborts_job=gated.fail_behavior == FailBehavior.ABORT,
        inputs=batch_inputs(batch),
        profile=gated.result.profile,
    )


def promote(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    *,
    batch: InputBatch,
    staged: staging.StagedBatch,
    gated: GateOutcome,
    start: Recovered,
    drifts: list[drift.DriftOutcome],
    found: Novelty,
) -> StepResult:
    """Publish an allowed batch in one tagged, idempotent commit and record its version.
    `found`: what the novelty check learnt of the batch (a full load's content hash, a small
    catch-up's fold, whether delta-rs merges it), so that the write does not ask again.
    A MERGE that changed no row (its commit's metrics) is released and records no version:
    the attempt says "no row would change", as the novelty check says of a small batch."""
    content_hash, fold, small = found.content_hash, found.fold, found.small
    version = start.next_version
    evolves = any(o.evolves for o in drifts)
    tag = CommitTag(
        ctx.writer.tenant,
        target.dataset_id,
        attempt.run_id,
        version,
        batch.fingerprint,
        batch.upstream_refs,
    )
    with attempt.phase("write", "write") as log:
        set_aside = 0
        rejected = dropping.rejected(
            batch.has_corrupt_column and gated.malformed_rows > 0,
            list(gated.decision.evidence.dropped_rules),
        )
        if rejected is not None:
            staged = staging.split(ctx.spark, staged, rejected)
            fold = None  # folded from rows that are not all published
        if staged.malformed:
            set_aside = quarantine(
                target.quarantine_path, staged, attempt.run_id, malformed_only=True
            )
            register(ctx.spark, ctx.warehouse, quarantine_name(target.dataset_id))
        # What the batch takes from its sources counts once this version is approved.
        progress = _progress_rows(ctx, target, attempt, batch, staged, version)
        if progress:
            ctx.writer.append(progress)
        merging = target.merging(batch)
        if not merging and target.load_type != LoadType.FULL:
            # the staged good files are exactly what the commit adds: sum their digests; a
            # MERGE's rows are summed from the table after it
            content_hash = staged_hash(f.path for f in staged.good)
        ctx.hold.check(target.dataset_id)
        if merging:
            if not target.exists():
                create_empty(target.path, fields_of(staged.schema, NOT_PUBLISHED))
            plan = target.plan(batch)
            if small is None:
                small = fold is not None or small_merge.fits(staged, target.path)
            if small and not small_merge.spans_versions(plan, staged):
                commit = small_merge.merge(
                    staged, target.path, tag, plan, drop=NOT_PUBLISHED, may_add=evolves
                )
            elif small:  # a small catch-up: Spark folds (unless the novelty check did)
                commit = small_catch_up.merge(
                    staged,
                    target.path,
                    tag,
                    plan,
                    lambda: (
                        fold
                        if fold is not None
                        else small_catch_up.fold(ctx.spark, staged, target.path, plan)
                    ),
                    drop=NOT_PUBLISHED,
                    may_add=evolves,
                )
            else:
                part = f"the Spark MERGE into {target.dataset_id}"
                where = f"datasets[{target.dataset_id}]"
                refuse_through_connect(ctx.spark, part, MERGE_NEEDS, where=where)
                commit = strategies.merge(
                    ctx.spark,
                    staged.part_folder(),
                    target.path,
                    tag,
                    plan,
                    drop=NOT_PUBLISHED,
                    may_add=evolves,
                )
            staging.discard(staged)
            if commit.changed_nothing:  # no version records it: the next batch is version N
                release(target.path, tag)
        else:
            commit = publish(
                target.path,
                staged,
                tag,
                overwrite=target.load_type == LoadType.FULL,
                drop=NOT_PUBLISHED,
                may_add=evolves,
            )
        register(ctx.spark, ctx.warehouse, target.dataset.table_name)
        log.rows = strategies.rows_written(commit)
        log.metadata = {
            "load_type": target.load_type,
            "delta_version": commit.commit_version,
            "set_aside": set_aside,
        }
        if merging and commit.changed_nothing:
            log.metadata["note"] = NO_ROW_CHANGES
    if merging and commit.changed_nothing:
        return target.result(
            attempt.run_id,
            AttemptStatus.SUCCESS,
            rows_read=gated.result.rows,
            rows_written=0,
            reason=NO_ROW_CHANGES,
            outcomes=gated.result.outcomes,
            quarantined=set_aside,
            inputs=batch_inputs(batch),
            profile=gated.result.profile,
        )

    with attempt.phase("record version", "record") as log:
        record_commit(ctx, target, commit, start.own_latest, content_hash)
        for outcome in drifts:
            if outcome.evolves and outcome.source_object_id and outcome.live is not None:
                ctx.gate.evolve_source_schema(outcome.source_object_id, outcome.live)
        log.metadata = {"version": version}
    moves = [m for s in batch.sources for m in s.archive]
    if moves:
        with attempt.phase("archive", "archive") as log:
            archive_files(moves)
            log.rows = len(moves)
    return target.result(
        attempt.run_id,
        AttemptStatus.SUCCESS,
        rows_read=gated.result.rows,
        rows_written=strategies.rows_written(commit),
        data_version=version,
        reason=gated.decision.reason,
        outcomes=gated.result.outcomes,
        quarantined=set_aside,
        inputs=batch_inputs(batch),
        profile=gated.result.profile,
    )


def _progress_rows(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    batch: InputBatch,
    staged: staging.StagedBatch,
    version: int,
) -> list[SourceProgressRow]:
    """`source_progress` rows for what the batch read, with new watermarks from the staged
    files' footers."""
    now = ctx.writer.now()
    marks = [(s.source_object_id, m) for s in batch.sources for m in s.progress]
    marks += [
        (
            s.source_object_id,
            WatermarkMark(watermark=_highest(ctx, target, staged, s.watermark_column)),
        )
        for s in batch.sources
        if s.watermark_column and staged.rows
    ]
    return [
        SourceProgressRow.of(
            mark,
            tenant_id=ctx.writer.tenant,
            dataset_id=target.dataset_id,
            source_object_id=source_object_id,
            run_id=attempt.run_id,
            data_version=version,
            recorded_at=now,
        )
        for source_object_id, mark in marks
    ]


def _highest(ctx: RunContext, target: Target, staged: staging.StagedBatch, column: str) -> str:
    """The highest value of `column` in the staged batch, as text (footers, else Spark)."""
    value = footers.highest([*staged.good, *staged.malformed], column)
    if value is None:
        # start-up time: pyspark loads on first use, never in metadata-only commands
        from pyspark.sql import functions as F

        rows = staging.staged_rows(ctx.spark, staged)
        if staged.split:
            rows = rows.unionByName(staging.staged_rows(ctx.spark, staged, malformed=True))
        row = rows.agg(F.max(column)).first()
        value = row[0] if row else None
    if value is None:
        raise SourceError(
            f"the watermark column {column!r} is null in every new row",
            where=f"datasets[{target.dataset_id}]",
            fix="choose a watermark column that is set on every row",
        )
    return watermark_text(value)
