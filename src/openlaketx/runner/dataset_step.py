"""The governed write path of one dataset (docs/design.md §5), in order.

recover (sweep crashed runs' staged batches, record their published commits) → read the input
once (lazily) → decide its schema drift → stage it once in a folder no reader sees, each row
with the rules it breaks → nothing new? stop → gate: evaluate the rules, check policies,
LakeGuard decides and records → promote (one tagged, idempotent commit, then the version) or
hold it back in quarantine → one terminal run_history row, whatever happens. Each part is a
module of its own (recovery, stage, gating, promotion); they share only what they return.
"""

from __future__ import annotations

from lakeguard.errors import LakeTxError, describe
from lakeguard.quality.rules import compile_rules
from lakeguard.store.runtime_rows import TrustScoreRow
from lakeguard.vocabulary import AttemptStatus, Layer
from openlaketx import storage
from openlaketx.loads import staging, strategies
from openlaketx.runner import drift
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.context import RunContext, StepResult, Target
from openlaketx.runner.gating import gate, last_profiles_ahead
from openlaketx.runner.inputs import dataset_input
from openlaketx.runner.lifecycle import DatasetAttempt
from openlaketx.runner.promotion import hold_back, promote
from openlaketx.runner.recovery import Recovered, recover
from openlaketx.runner.stage import novelty, stage_batch
from openlaketx.sources.credentials import scrub
from openlaketx.sources.jdbc import root_cause
from openlaketx.sources.kinds import engine

__all__ = ["RunContext", "StepResult", "run_dataset"]


def run_dataset(ctx: RunContext, dataset_id: str) -> StepResult:
    """Run one governed attempt; always ends with exactly one run_history row."""
    dataset = ctx.registry.dataset(dataset_id)
    attempt = DatasetAttempt(ctx.job, dataset_id, dataset.layer, ctx.progress, ctx.deadline)
    attempt.start()
    ctx.observer.started(dataset, attempt.run_id, ctx.job.run_id)
    target = Target.of(ctx.warehouse, dataset)
    try:
        ctx.hold.check(dataset_id)
        result = _attempt(ctx, target, attempt)
    except BaseException as raised:  # interrupted or crashed: still one terminal row, then re-raise
        exc = ctx.deadline.explain(raised)  # a Spark job the time limit cancelled says so
        message = describe(exc)
        attempt.finish(AttemptStatus.FAILED, rows_read=attempt.rows_read, error=message)
        failed = StepResult(
            dataset_id=dataset_id,
            run_id=attempt.run_id,
            status=AttemptStatus.FAILED,
            rows_read=attempt.rows_read,
            reason=message,
            error=exc if isinstance(exc, LakeTxError) else LakeTxError(message),
        )
        ctx.observer.ended(dataset, failed, ctx.job.run_id)
        if not isinstance(raised, Exception):
            raise
        return failed
    finally:
        ctx.deadline.end_publishing()  # the gate began it (gating.py): a decision is carried out
        staging.drop_landing(target.path, attempt.run_id)
    trust = _trust_row(ctx, attempt)
    attempt.finish(
        result.status,
        rows_read=result.rows_read,
        rows_written=result.rows_written,
        data_version=result.data_version,
        error=result.reason if result.status == AttemptStatus.BLOCKED else None,
        with_rows=[trust] if trust is not None else [],
    )
    result.trust = trust.score if trust is not None else None
    ctx.observer.ended(dataset, result, ctx.job.run_id)
    return result


def _attempt(ctx: RunContext, target: Target, attempt: DatasetAttempt) -> StepResult:
    refused = ctx.registry.refusal(target.dataset_id)  # stored definitions edited invalid
    if refused is not None:
        raise refused
    rules = compile_rules(ctx.registry.rules(target.dataset_id))
    start = recover(ctx, target, attempt)  # holding the lease: leftovers are a crash's

    with attempt.phase("read", "read") as log:
        batch = dataset_input(
            ctx.spark,
            ctx.gate.reader,
            ctx.registry,
            target.dataset,
            own_latest=start.own_latest,
            warehouse=ctx.warehouse,
            run_id=attempt.run_id,
            reach=ctx.reach,
        )
        log.metadata = {
            "fingerprint": batch.fingerprint,
            "swept": len(start.swept),
            "sources": {
                o.source_object_id: o.load_type
                for o in ctx.registry.source_objects(target.dataset_id)
            },
        }
        if batch.frame is None:
            log.rows, log.metadata["note"] = 0, batch.note
    if batch.frame is None:
        return _nothing_new(target, attempt, batch.note, start)
    derived = target.dataset.layer != Layer.BRONZE
    approved = ctx.gate.reader.approved_schema(target.dataset_id) if derived else None
    table_fields = storage.table_fields(target.path)  # what drift and staging compare with
    drifts = drift.batch_drift(ctx.registry, target.dataset, batch, approved, table_fields)
    batch.checks += drift.checks(drifts)

    all_rules = [*batch.builtin_rules, *rules]
    profiles = last_profiles_ahead(ctx, target)  # read while Spark stages the batch
    with attempt.phase("stage", "stage") as log:
        try:
            staged = stage_batch(
                target,
                batch,
                all_rules,
                version=start.next_version,
                run_id=attempt.run_id,
                table_fields=table_fields,
            )
        except Exception as exc:
            raise _source_failure(ctx, exc, batch) from exc
        finally:
            for view in batch.views:
                ctx.spark.catalog.dropTempView(view)
            for source in batch.sources:  # staged or failed: nothing reads what was fetched
                if source.landing is not None:
                    storage.remove_tree(source.landing)
        found = novelty(ctx, target, batch, staged, start.own_latest)
        if found.nothing is not None:
            staging.discard(staged)
            log.rows, log.metadata["note"] = 0, found.nothing
    if found.nothing is not None:
        return _nothing_new(target, attempt, found.nothing, start)

    gated = gate(
        ctx,
        target,
        attempt,
        batch=batch,
        staged=staged,
        rules=all_rules,
        own_latest=start.own_latest,
        drifts=drifts,
        profiles=profiles,
    )
    if not gated.allowed:
        return hold_back(ctx, target, attempt, staged, gated, batch, start.next_version)
    return promote(
        ctx,
        target,
        attempt,
        batch=batch,
        staged=staged,
        gated=gated,
        start=start,
        drifts=drifts,
        found=found,
    )


def _nothing_new(
    target: Target, attempt: DatasetAttempt, note: str | None, start: Recovered
) -> StepResult:
    """Nothing new to promote: no decision, no version (except one recovered from a crash)."""
    if not start.commits:
        return target.result(
            attempt.run_id, AttemptStatus.SUCCESS, rows_read=0, rows_written=0, reason=note
        )
    last = start.commits[-1]
    return target.result(
        attempt.run_id,
        AttemptStatus.SUCCESS,
        rows_written=sum(strategies.rows_written(c) for c in start.commits),
        data_version=last.data_version,
        reason=f"recovered commit {last.commit_version} of run {last.run_id}; {note}",
    )


def _trust_row(ctx: RunContext, attempt: DatasetAttempt) -> TrustScoreRow | None:
    """The dataset's trust score after the attempt, scored with the attempt's evidence rows
    before they are committed, so that it is committed with them (best effort: a score that
    cannot be read never fails a run; the next attempt records one again)."""
    dataset_id = attempt.dataset_id
    try:
        score = ctx.gate.reader.trust([dataset_id], pending=attempt.evidence)[dataset_id]
    except Exception as exc:
        ctx.progress(f"{dataset_id}: trust score not recorded: {describe(exc)}")
        return None
    return TrustScoreRow(
        tenant_id=ctx.writer.tenant,
        dataset_id=dataset_id,
        run_id=attempt.run_id,
        score=score.score,
        quality=score.quality,
        freshness=score.freshness,
        stability=score.stability,
        lineage=score.lineage,
        computed_at=ctx.writer.now(),
    )


def _source_failure(ctx: RunContext, exc: Exception, batch: InputBatch) -> Exception:
    """A failure while the source was being read, said without any secret and classified by
    the kind of each source read (the first that recognises it)."""
    if isinstance(exc, LakeTxError):
        return exc
    text = root_cause(exc)
    for source in batch.sources:
        text = scrub(text, source.secret)
    for source in batch.sources:
        obj = ctx.registry.source_object(source.source_object_id)
        found = engine(source.kind).classify(text, ctx.registry.system(source.system_id), obj)
        if found is not None:
            return found
    return exc
