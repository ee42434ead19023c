"""The gate of a staged batch: its rules, checks and policies evaluated, LakeGuard's decision
recorded, before anything is published (docs/design.md §5, invariant 5)."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lakeguard.actors.gate import Decision, decide
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.evidence import Check, CheckKind
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.quality.outcome import BatchEvaluation
from lakeguard.records.quality.profiling import LastProfiles, full_profile_due, profile_drift
from lakeguard.records.schema.fingerprint import from_fields
from lakeguard.rules.quality.fail_behavior import droppable as droppable_rules
from lakeguard.rules.quality.fail_behavior import fail_behavior
from lakeguard.words.vocabulary import FailBehavior, Outcome, RuleType, StepStatus
from openlaketx.loads import staging
from openlaketx.loads.publish import fields_of
from openlaketx.loads.version_read import read_version
from openlaketx.runner import drift, dropping, evidence
from openlaketx.runner.ahead import read_ahead
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.batch_rows import merge_plan
from openlaketx.runner.context import NOT_PUBLISHED, RunContext, Target
from openlaketx.runner.lifecycle import DatasetAttempt
from openlaketx.runner.policies import policy_checks
from openlaketx.runner.validation import evaluate_staged
from openlaketx.tables import dataset_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True, kw_only=True)
class GateOutcome:
    """What the gate found and decided about one staged batch."""

    result: BatchEvaluation
    decision: Decision
    fail_behavior: FailBehavior

    @property
    def allowed(self) -> bool:
        return self.decision.allowed

    @property
    def malformed_rows(self) -> int:
        """Unparseable rows the batch had (the built-in PARSE rule's count)."""
        return malformed(self.result)


def malformed(result: BatchEvaluation) -> int:
    return sum(o.failed_rows for o in result.outcomes if o.rule_type == RuleType.PARSE)


def last_profiles_ahead(ctx: RunContext, target: Target) -> Future[LastProfiles]:
    """The dataset's last profiles (none when it is not profiled), read on a thread while
    the batch is staged: two DataFusion joins the gate would otherwise wait for."""
    if not target.dataset.transform.profile:
        done: Future[LastProfiles] = Future()
        done.set_result(LastProfiles({}))
        return done
    return read_ahead(lambda: ctx.gate.reader.versions.last_profiles(target.dataset_id))


def gate(
    ctx: RunContext,
    target: Target,
    attempt: DatasetAttempt,
    *,
    batch: InputBatch,
    staged: staging.StagedBatch,
    rules: list[CompiledRule],
    own_latest: ApprovedVersion | None,
    drifts: list[drift.DriftOutcome],
    profiles: Future[LastProfiles],
) -> GateOutcome:
    """Evaluate the batch's rules, then decide with its checks and policies and record the
    decision (its evidence rows go with the attempt's terminal rows). `profiles`: the
    dataset's last profiles, read ahead (`last_profiles_ahead`)."""
    dataset = target.dataset
    transform = dataset.transform
    last_profiles = profiles.result()
    full = full_profile_due(transform.profile_cadence, last_profiles, ctx.writer.now())
    with attempt.phase(f"evaluate {len(rules)} rules", "validate") as log:
        result = evaluate_staged(
            ctx.spark,
            staged,
            rules,
            profile=transform.profile,
            full_profile_top=transform.profile_cadence.top_values
            if full and transform.profile_cadence
            else None,
            referenced=lambda dataset_id: approved_snapshot(ctx, dataset_id),
            unique_on=batch.unique_on,
        )
        attempt.rows_read = log.rows = result.rows
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
            dataset,
            rows=result.rows,
            own_latest=own_latest,
            drift_kinds=[d.change.kind for o in drifts for d in o.decided],
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
        behavior = fail_behavior(dataset, ctx.registry.source_objects(target.dataset_id))
        droppable = droppable_rules(rules, behavior)
        to_drop = [o.rule_id for o in result.outcomes if o.outcome == Outcome.FAIL]
        to_drop = [r for r in to_drop if r in droppable]
        if len(to_drop) == 1 and malformed(result) == 0:
            # one rule and no unparseable row to leave out: its footer count is the answer
            dropped_rows = next(o.failed_rows for o in result.outcomes if o.rule_id in to_drop)
        else:
            dropped_rows = dropping.rows_failing(ctx.spark, staged, to_drop)
        if to_drop and dropped_rows >= result.rows - malformed(result):
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
            to_layer=dataset.layer,
            checks=checks,
            droppable=droppable,
        )
        decision = replace(
            decision,
            evidence=decision.evidence.about_batch(
                fail_behavior=behavior,
                upstream=batch.upstream_refs,
                batch=batch.fingerprint,  # tells a stuck dataset apart
                dropped_rows=dropped_rows if to_drop else None,
                read=batch.pieces(),  # a later batch that reads them all holds this one again
            ),
        )
        decision_row = ctx.gate.decision_row(target.dataset_id, attempt.run_id, decision)
        attempt.evidence = [
            *evidence.rows(
                tenant=ctx.writer.tenant,
                pipeline_logging_id=ctx.job.run_id,
                run_id=attempt.run_id,
                decided_at=decision_row.evaluated_at,
                dataset=dataset,
                result=result,
                columns=from_fields(fields_of(staged.schema, NOT_PUBLISHED)),
            ),
            *drift.log_rows(
                drifts,
                tenant=ctx.writer.tenant,
                dataset_id=target.dataset_id,
                run_id=attempt.run_id,
                now=decision_row.evaluated_at,
            ),
        ]
        # The time limit's last check: the decision is recorded only if it is carried out
        # whole (published and recorded as a version, or quarantined), the timer held off.
        ctx.deadline.begin_publishing()
        ctx.gate.record(decision_row)
        log.status = StepStatus.COMPLETED if decision.allowed else StepStatus.BLOCKED
        log.metadata = {"allowed": decision.allowed, "reason": decision.reason}
    return GateOutcome(result=result, decision=decision, fail_behavior=behavior)


def approved_snapshot(ctx: RunContext, dataset_id: str) -> DataFrame | None:
    """Another dataset's live rows in its latest approved snapshot (a foreign key's
    reference): soft-deleted rows and closed scd2 versions hold no valid key."""
    approved = ctx.gate.latest(dataset_id)
    if approved is None:
        return None
    referenced = ctx.registry.dataset(dataset_id)
    snapshot = read_version(
        ctx.spark,
        dataset_location(ctx.warehouse, referenced.table_name),
        int(approved.snapshot_ref),
    )
    return merge_plan(referenced).current(snapshot)
