"""The governed write path of one dataset (docs/design.md §5), in order.

recover (sweep crashed runs' staged batches, record their published commits) → read the input
once (lazily), files that cannot be read put aside → decide its schema drift → stage it once in
a folder no reader sees, each row with the rules it breaks (a file Spark fails on mid-read is
put aside and the batch read again without it) → nothing new? stop → gate: evaluate the
rules, check policies, LakeGuard decides and records → promote (one tagged, idempotent commit,
then the version; a Spark MERGE that changed no row is released instead) or hold it back in
quarantine → the held batches it read again leave
quarantine → one terminal run_history row, whatever happens. Each part is a module of its own
(recovery, stage, gating, promotion, quarantine); they share only what they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import Future

from lakeguard.records.checks.result_rows import TrustScoreRow
from lakeguard.records.evidence import Check, CheckKind
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.quality.profiling import LastProfiles
from lakeguard.records.schema.delta_json import DeltaField
from lakeguard.records.sources.progress import Rejection
from lakeguard.records.sources.progress_rows import RejectedFileRow
from lakeguard.rules.quality.rules import compile_rules
from lakeguard.words.errors import LakeTxError, describe, root_cause
from lakeguard.words.vocabulary import AttemptStatus, Layer
from openlaketx import storage
from openlaketx.loads import staging, strategies
from openlaketx.runner import drift, quarantine
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.context import RunContext, StepResult, Target
from openlaketx.runner.gating import gate, last_profiles_ahead
from openlaketx.runner.inputs import dataset_input
from openlaketx.runner.lifecycle import DatasetAttempt
from openlaketx.runner.promotion import hold_back, promote
from openlaketx.runner.recovery import Recovered, recover
from openlaketx.runner.stage import novelty, stage_batch
from openlaketx.sources.bad_files import summary
from openlaketx.sources.credentials import scrub
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
    _settle_quarantine(ctx, target, result)
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

    # files Spark failed on mid-read in this attempt, by source object: each read leaves them out
    aside: dict[str, list[Rejection]] = {}
    ahead: tuple[list[DeltaField] | None, Future[LastProfiles]] | None = None
    while True:
        batch = _read(ctx, target, attempt, start, aside)
        if batch.frame is None:
            return _nothing_new(target, attempt, batch.note, start)
        if ahead is None:  # once there is a batch: what drift and staging compare with
            ahead = (storage.table_fields(target.path), last_profiles_ahead(ctx, target))
        table_fields, profiles = ahead  # the profiles are read while Spark stages the batch
        derived = target.dataset.layer != Layer.BRONZE
        approved = ctx.gate.reader.versions.approved_schema(target.dataset_id) if derived else None
        drifts = drift.batch_drift(ctx.registry, target.dataset, batch, approved, table_fields)
        batch.checks += drift.checks(drifts)
        all_rules = [*batch.builtin_rules, *rules]
        with attempt.phase("stage", "stage") as log:
            staged = _stage(ctx, target, attempt, batch, all_rules, start, table_fields, aside)
            if staged is not None:
                found = novelty(ctx, target, batch, staged, start.own_latest)
                if found.nothing is not None:
                    staging.discard(staged)
                    log.rows, log.metadata["note"] = 0, found.nothing
            else:  # a file failed mid-read: put aside, and the batch is read again
                log.rows, log.metadata["note"] = 0, "a file failed mid-read; read again without it"
        if staged is not None:
            break
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


def _read(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    start: Recovered,
    aside: Mapping[str, list[Rejection]],
) -> InputBatch:
    """The read phase: the attempt's input batch, without the files put aside. The files it
    rejects go with the attempt's terminal rows, and a batch that goes on says so in a check."""
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
            aside=aside,
        )
        rejected = [*batch.rejected, *((o, r) for o, found in aside.items() for r in found)]
        attempt.rejected = [
            RejectedFileRow.rejected(
                r.mark,
                r.reason,
                tenant_id=ctx.writer.tenant,
                dataset_id=target.dataset_id,
                source_object_id=source_object_id,
                run_id=attempt.run_id,
                recorded_at=ctx.writer.now(),
            )
            for source_object_id, r in rejected
        ]
        log.metadata = {
            "fingerprint": batch.fingerprint,
            "swept": len(start.swept),
            "sources": {
                o.source_object_id: o.load_type
                for o in ctx.registry.source_objects(target.dataset_id)
            },
        }
        if rejected:
            log.metadata["rejected"] = sorted(r.mark.key() for _, r in rejected)
            batch.checks.append(
                Check(
                    name="rejected_files",
                    kind=CheckKind.REJECTED_FILES,
                    passed=False,
                    blocking=False,
                    detail=f"{summary([r for _, r in rejected])}; they are not read again "
                    "until they change or are released (laketx files release)",
                )
            )
        if batch.frame is None:
            log.rows, log.metadata["note"] = 0, batch.note
    return batch


def _stage(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    batch: InputBatch,
    rules: list[CompiledRule],
    start: Recovered,
    table_fields: list[DeltaField] | None,
    aside: dict[str, list[Rejection]],
) -> staging.StagedBatch | None:
    """The batch staged; None when Spark failed on files of it mid-read that its sources put
    aside (added to `aside`, the staging folder removed): the caller reads the batch again."""
    scratch = target.merging(batch)
    try:
        return stage_batch(
            target,
            batch,
            rules,
            version=start.next_version,
            run_id=attempt.run_id,
            table_fields=table_fields,
        )
    except Exception as exc:
        known = {(o, r.mark.key()) for o, found in aside.items() for r in found}
        # only files not put aside already: the same one failing again is no bad file's doing
        found = [(o, r) for o, r in _mid_read(ctx, exc, batch) if (o, r.mark.key()) not in known]
        if not found:
            raise _source_failure(ctx, exc, batch) from exc
        for source_object_id, rejection in found:
            aside.setdefault(source_object_id, []).append(rejection)
        folder = staging.batch_folder(
            target.path, scratch=scratch, version=start.next_version, run_id=attempt.run_id
        )
        storage.remove_tree(folder)  # a failed write may leave its folder: staged again there
        return None
    finally:
        for view in batch.views:
            ctx.spark.catalog.dropTempView(view)
        for source in batch.sources:  # staged or failed: nothing reads what was fetched
            if source.landing is not None:
                storage.remove_tree(source.landing)


def _mid_read(ctx: RunContext, exc: Exception, batch: InputBatch) -> list[tuple[str, Rejection]]:
    """The files a staging failure came from that their sources put aside (none: the failure
    is not a bad file's, or its source says `on_bad_file: block`)."""
    if isinstance(exc, LakeTxError) or not batch.sources:
        return []
    text = f"{exc}\n{root_cause(exc)}"
    found = []
    for source in batch.sources:
        obj = ctx.registry.source_object(source.source_object_id)
        system = ctx.registry.system(source.system_id)
        rejected = engine(source.kind).unreadable(ctx.spark, system, obj, source, text)
        found += [(source.source_object_id, r) for r in rejected]
    return found


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


def _settle_quarantine(ctx: RunContext, target: Target, result: StepResult) -> None:
    """After a batch was held or promoted: the held batches it read again leave quarantine,
    so each is there once and none that a version holds (lakeguard.records.quarantine). Best effort:
    the attempt's outcome stands either way, and the next judged attempt (or `laketx migrate`)
    settles what is left."""
    if result.status != AttemptStatus.BLOCKED and result.data_version is None:
        return
    dataset_id = target.dataset_id
    try:
        state = quarantine.settle(
            target.quarantine_path,
            lambda held: ctx.gate.reader.decisions.judgments(dataset_id, held),
        )
    except Exception as exc:
        ctx.progress(f"{dataset_id}: quarantine not settled: {describe(exc)}")
        return
    for line in state.said():
        ctx.progress(f"{dataset_id}: quarantine: {line}")


def _trust_row(ctx: RunContext, attempt: DatasetAttempt) -> TrustScoreRow | None:
    """The dataset's trust score after the attempt, scored with the attempt's evidence rows
    before they are committed, so that it is committed with them (best effort: a score that
    cannot be read never fails a run; the next attempt records one again)."""
    dataset_id = attempt.dataset_id
    try:
        score = ctx.gate.reader.status.trust([dataset_id], pending=attempt.evidence)[dataset_id]
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
