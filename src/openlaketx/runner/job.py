"""Run a job (tasks in dependency order) or one dataset, retrying transient errors."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import TYPE_CHECKING

from lakeguard.actors.gate import Gate
from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.store import MetadataStore, RunWriter
from lakeguard.words.errors import (
    ExitCode,
    LakeTxError,
    NotRegisteredError,
    TimeLimitExceeded,
    WriteConflict,
    describe,
)
from lakeguard.words.planning import order_tasks
from lakeguard.words.vocabulary import AttemptStatus, JobStatus
from openlaketx.runner.context import NoObserver, StepObserver
from openlaketx.runner.dataset_step import RunContext, StepResult, run_dataset
from openlaketx.runner.deadline import RunDeadline
from openlaketx.runner.lease import LeaseHold
from openlaketx.runner.lifecycle import DatasetAttempt, JobRun
from openlaketx.spark import run_scope

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(kw_only=True)
class JobResult:
    run_id: str
    pipeline_id: str
    status: JobStatus
    steps: list[StepResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    duration_ms: int = 0
    error: str | None = None
    # what stopped the run before any task started (e.g. another run holds its datasets)
    refused: LakeTxError | None = None
    # what stopped it partway, its tasks left undone (its time limit)
    stopped: LakeTxError | None = None

    @property
    def exit_code(self) -> ExitCode:
        """OK completed, BLOCKED blocked, else the code of the last failure (CONFLICT: a
        write conflict)."""
        if self.status == JobStatus.COMPLETED:
            return ExitCode.OK
        if self.status == JobStatus.BLOCKED:
            return ExitCode.BLOCKED
        if self.refused is not None:
            return self.refused.exit_code
        if self.stopped is not None:
            return self.stopped.exit_code
        failed = [s.error for s in self.steps if s.status == AttemptStatus.FAILED and s.error]
        if failed:
            return failed[-1].exit_code
        # a FAILED job without a failed step was aborted by a blocked batch (fail_behavior)
        return ExitCode.BLOCKED if any(s.aborts_job for s in self.steps) else ExitCode.FAILED


@dataclass(frozen=True, kw_only=True)
class PlannedTask:
    task_id: str
    dataset_id: str
    depends_on: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class JobPlan:
    """What a run does: its tasks in order, and its job's retries (taken from the job's
    record, whose values its row class defaults: no default of the plan's own)."""

    pipeline_id: str
    tasks: list[PlannedTask]
    max_retries: int
    retry_delay_seconds: int
    parameters: dict[str, str] = field(default_factory=dict)

    @property
    def datasets(self) -> list[str]:
        """Every dataset the run writes, in the one order leases are taken in."""
        return sorted({t.dataset_id for t in self.tasks})


def plan(registry: Registry, target: str) -> JobPlan:
    """Tasks to run for a job id or a dataset id (a job whose stored definition does not
    validate does not start: InvalidDefinition)."""
    job = registry.job(target)
    if job is not None:
        refused = registry.job_refusal(target)
        if refused is not None:
            raise refused
        tasks = {t.task_id: t for t in job.tasks}
        order = order_tasks({tid: list(t.depends_on) for tid, t in tasks.items()})
        return JobPlan(
            pipeline_id=target,
            tasks=[
                PlannedTask(
                    task_id=tid, dataset_id=tasks[tid].dataset_id, depends_on=tasks[tid].depends_on
                )
                for tid in order
            ],
            max_retries=job.max_retries,
            retry_delay_seconds=job.retry_delay_seconds,
            parameters=job.parameters,
        )
    try:
        registry.dataset(target)
    except NotRegisteredError:
        raise NotRegisteredError(
            f"{target!r} is neither a registered job nor a registered dataset",
            where="jobs / dataset_registry",
            fix="check `laketx status` for what is registered, or apply its metadata first",
        ) from None
    # a dataset run alone belongs to no job: it is never retried, so it waits for nothing
    return JobPlan(
        pipeline_id=target,
        tasks=[PlannedTask(task_id=target, dataset_id=target)],
        max_retries=0,
        retry_delay_seconds=0,
    )


@dataclass(frozen=True, kw_only=True)
class RunRequest:
    """How a run was asked for and what it may take, from `Lakehouse.run` down to the run's
    rows: who triggered it, under which run id, its leases, its retries, its time and its
    Spark pool."""

    trigger_type: str = "manual"
    triggered_by: str = "cli"
    # the id the run was accepted under (the service answers with it before it starts)
    run_id: str | None = None
    lease_ttl: timedelta = timedelta(minutes=10)
    # how long to wait for another run holding one of its datasets
    lease_wait: timedelta = timedelta(0)
    # False: the caller retries failed runs itself (the service: a new run, later)
    retries: bool = True
    # seconds the run may work once it holds its datasets (runner/deadline.py)
    time_limit: float | None = None
    # the FAIR scheduler pool its Spark jobs run in (the tenant's)
    pool: str | None = None


def run(
    spark: Callable[[], SparkSession],
    store: MetadataStore,
    warehouse: str,
    target: str,
    request: RunRequest,
    *,
    progress: Callable[[str], None] = lambda _: None,
    observer: StepObserver | None = None,
) -> JobResult:
    """Run `target` as `request` says; every attempt leaves its terminal rows whatever
    happens. `spark` gives the session once the run holds its datasets: a run refused its
    leases never starts a JVM."""
    begun = _begin(store, target, request)
    if begun.hold is None:
        return begun.result
    deadline = RunDeadline(request.time_limit)
    with begun.hold, ExitStack() as scope:
        try:
            session = spark()
            # the run's own tag: a timer that fires late cancels nothing of a later run
            cancel = scope.enter_context(
                run_scope(session, tag=f"laketx-run-{begun.job.run_id}", pool=request.pool)
            )
        except BaseException as exc:  # no JVM: the announced run still ends, FAILED
            begun.job.finish(JobStatus.FAILED, describe(exc))
            raise
        deadline.start(cancel)
        try:
            return _run_tasks(
                RunContext(
                    spark=session,
                    gate=Gate(store),
                    writer=begun.writer,
                    registry=begun.registry,
                    warehouse=warehouse,
                    job=begun.job,
                    progress=progress,
                    hold=begun.hold,
                    reach=store.tenant_reach(),
                    observer=observer or NoObserver(),
                    deadline=deadline,
                ),
                begun.plan,
                begun.result,
            )
        finally:
            deadline.stop()  # before the scope ends: nothing cancels the thread's next run


@dataclass
class _Begun:
    """A job run planned, announced and holding every dataset it writes (`hold` None: another
    run held one of them, and the refusal is recorded in `result`)."""

    registry: Registry
    plan: JobPlan
    writer: RunWriter
    job: JobRun
    result: JobResult
    hold: LeaseHold | None


def _begin(store: MetadataStore, target: str, request: RunRequest) -> _Begun:
    registry = StoreReader(store).definitions.registry()
    job_plan = plan(registry, target)
    if not request.retries:
        job_plan = replace(job_plan, max_retries=0)
    writer = RunWriter(store)
    job = JobRun(
        writer,
        job_plan.pipeline_id,
        trigger_type=request.trigger_type,
        triggered_by=request.triggered_by,
        parameters=job_plan.parameters,
        config_version=registry.config_version,
        run_id=request.run_id,
    )
    job.start()
    result = JobResult(
        run_id=job.run_id, pipeline_id=job_plan.pipeline_id, status=JobStatus.COMPLETED
    )
    # Every dataset the run writes is its own from before the first write to the end.
    hold = LeaseHold(
        writer, job_plan.datasets, job.run_id, ttl=request.lease_ttl, wait=request.lease_wait
    )
    try:
        hold.take()
    except WriteConflict as exc:
        result.status, result.error, result.refused = JobStatus.FAILED, describe(exc), exc
        result.duration_ms = job.finish(JobStatus.FAILED, result.error).duration_ms or 0
        return _Begun(registry, job_plan, writer, job, result, None)
    except BaseException as exc:
        job.finish(JobStatus.FAILED, describe(exc))
        raise
    return _Begun(registry, job_plan, writer, job, result, hold)


def _run_tasks(ctx: RunContext, job_plan: JobPlan, result: JobResult) -> JobResult:
    """The tasks in order, each after the ones it depends on succeeded."""
    job, progress = ctx.job, ctx.progress
    outcome: dict[str, AttemptStatus | str] = {}
    aborted: StepResult | None = None
    try:
        for task in job_plan.tasks:
            if result.stopped is None and ctx.deadline.expired:
                result.stopped = ctx.deadline.exceeded()
            if (
                aborted is not None
                or result.stopped is not None
                or any(outcome.get(dep) != AttemptStatus.SUCCESS for dep in task.depends_on)
            ):
                outcome[task.task_id] = "SKIPPED"
                result.skipped.append(task.dataset_id)
                continue
            step = _with_retries(ctx, task, job_plan, progress, result.steps)
            result.steps.append(step)
            outcome[task.task_id] = step.status
            if step.aborts_job:
                aborted = step
            if isinstance(step.error, TimeLimitExceeded):
                result.stopped = step.error
    except BaseException as exc:
        result.status, result.error = JobStatus.FAILED, describe(exc)
        job.finish(JobStatus.FAILED, result.error)
        raise
    statuses = set(outcome.values())
    if AttemptStatus.FAILED in statuses or aborted is not None or result.stopped is not None:
        result.status = JobStatus.FAILED
    elif AttemptStatus.BLOCKED in statuses:
        result.status = JobStatus.BLOCKED
    failures = [
        f"{s.dataset_id}: {s.reason}"
        for s in result.steps
        if s.status != AttemptStatus.SUCCESS and s.reason
    ]
    # every failing task, each named (the last one alone hid the others); one says it alone
    result.error = (
        next(s.reason for s in result.steps if s.status != AttemptStatus.SUCCESS and s.reason)
        if len(failures) == 1
        else "; ".join(failures) or None
    )
    if result.skipped:
        skipped = ", ".join(result.skipped)
        result.error = f"{result.error} (skipped: {skipped})" if result.error else None
    if aborted is not None:
        # fail_behavior: abort stops the whole job, independent tasks included
        result.error = f"aborted at {aborted.dataset_id} (fail_behavior: abort): {aborted.reason}"
    if result.stopped is not None:
        published = [
            f"{s.dataset_id} v{s.data_version}"
            for s in result.steps
            if s.status == AttemptStatus.SUCCESS and s.data_version is not None
        ]
        result.stopped = ctx.deadline.exceeded(published)
        result.error = describe(result.stopped)
    # the leases go back in the terminal row's commit round: one round less for every run
    row = ctx.hold.released_with(
        lambda released: job.finish(result.status, result.error, with_rows=released)
    )
    result.duration_ms = row.duration_ms or 0
    return result


def _retriable(step: StepResult) -> bool:
    return (
        step.status == AttemptStatus.FAILED
        and isinstance(step.error, LakeTxError)
        and bool(step.error.transient)
    )


def _with_retries(
    ctx: RunContext,
    task: PlannedTask,
    job_plan: JobPlan,
    progress: Callable[[str], None],
    earlier: list[StepResult],
) -> StepResult:
    """Run one task, again after a transient failure, up to the job's `max_retries`."""
    step = run_dataset(ctx, task.dataset_id)
    attempts = 1
    while _retriable(step) and attempts <= job_plan.max_retries:
        progress(f"{task.dataset_id}: transient failure, retry {attempts}/{job_plan.max_retries}")
        time.sleep(job_plan.retry_delay_seconds)
        earlier.append(step)
        step = run_dataset(ctx, task.dataset_id)
        attempts += 1
    return step


def run_nothing_new(
    store: MetadataStore, target: str, notes: dict[str, str], request: RunRequest
) -> JobResult:
    """A run that knows, from metadata and listings alone, that none of its datasets has
    anything new (runner/news.py): the same rows as a run that read nothing, without Spark.
    It still holds the job's leases while it records them."""
    begun = _begin(store, target, request)
    if begun.hold is None:
        return begun.result
    job, result = begun.job, begun.result
    with begun.hold:
        for task in begun.plan.tasks:
            dataset = begun.registry.dataset(task.dataset_id)
            attempt = DatasetAttempt(job, task.dataset_id, dataset.layer)
            attempt.start()
            with attempt.phase("read", "read") as log:
                log.rows, log.metadata = 0, {"note": notes[task.dataset_id], "spark": False}
            attempt.finish(AttemptStatus.SUCCESS, rows_read=0, rows_written=0)
            result.steps.append(
                StepResult(
                    dataset_id=task.dataset_id,
                    run_id=attempt.run_id,
                    status=AttemptStatus.SUCCESS,
                    rows_read=0,
                    rows_written=0,
                    reason=notes[task.dataset_id],
                )
            )
        row = begun.hold.released_with(
            lambda released: job.finish(JobStatus.COMPLETED, with_rows=released)
        )
    result.duration_ms = row.duration_ms or 0
    return result
