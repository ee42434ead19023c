"""Run a job (tasks in dependency order) or one dataset, retrying transient errors."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.errors import NotRegisteredError
from lakeguard.gate import Gate
from lakeguard.planning import order_tasks
from lakeguard.store import MetadataStore
from openlaketx.runner.dataset_step import RunContext, StepResult, error_text, run_dataset
from openlaketx.runner.definitions import Definitions
from openlaketx.runner.lifecycle import JobRun

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class JobResult:
    run_id: str
    pipeline_id: str
    status: str  # COMPLETED | BLOCKED | FAILED
    steps: list[StepResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    duration_ms: int = 0
    error: str | None = None


@dataclass(frozen=True)
class PlannedTask:
    task_id: str
    dataset_id: str
    depends_on: list[str]


def plan(defs: Definitions, target: str) -> tuple[str, list[PlannedTask], int, int]:
    """Tasks to run for a job id or a dataset id: (pipeline_id, tasks, retries, retry delay)."""
    job = defs.job(target)
    if job is not None:
        tasks = {t["task_id"]: t for t in defs.job_tasks(target)}
        order = order_tasks({tid: list(t["depends_on"] or []) for tid, t in tasks.items()})
        planned = [
            PlannedTask(tid, tasks[tid]["dataset_id"], list(tasks[tid]["depends_on"] or []))
            for tid in order
        ]
        return target, planned, int(job["max_retries"] or 0), int(job["retry_delay_seconds"] or 0)
    try:
        defs.dataset(target)
    except NotRegisteredError:
        raise NotRegisteredError(
            f"{target!r} is neither a registered job nor a registered dataset",
            where="jobs / dataset_registry",
            fix="check `laketx status` for what is registered, or apply its metadata first",
        ) from None
    return target, [PlannedTask(target, target, [])], 0, 0


def run(
    spark: SparkSession,
    store: MetadataStore,
    warehouse: str,
    target: str,
    *,
    trigger_type: str = "manual",
    triggered_by: str = "cli",
    progress: Callable[[str], None] = lambda _: None,
) -> JobResult:
    """Run `target`; every attempt leaves its terminal rows whatever happens."""
    defs = Definitions.load(store)
    pipeline_id, tasks, retries, delay = plan(defs, target)
    params = defs.job_parameters(pipeline_id) if defs.job(pipeline_id) else {}
    job = JobRun(
        store,
        pipeline_id,
        trigger_type=trigger_type,
        triggered_by=triggered_by,
        parameters=params,
        config_version=defs.config_version,
    )
    job.start()
    ctx = RunContext(spark, store, Gate(store), defs, warehouse, job, progress)
    result = JobResult(job.run_id, pipeline_id, "COMPLETED")
    outcome: dict[str, str] = {}
    try:
        for task in tasks:
            if any(outcome.get(dep) != "SUCCESS" for dep in task.depends_on):
                outcome[task.task_id] = "SKIPPED"
                result.skipped.append(task.dataset_id)
                continue
            step = run_dataset(ctx, task.dataset_id)
            attempts = 1
            while (
                step.status == "FAILED"
                and step.error
                and step.error.transient
                and attempts <= retries
            ):
                progress(f"{task.dataset_id}: transient failure, retry {attempts}/{retries}")
                time.sleep(delay)
                result.steps.append(step)
                step = run_dataset(ctx, task.dataset_id)
                attempts += 1
            result.steps.append(step)
            outcome[task.task_id] = step.status
    except BaseException as exc:
        result.status, result.error = "FAILED", error_text(exc)
        job.finish("FAILED", result.error)
        raise
    statuses = set(outcome.values())
    if "FAILED" in statuses:
        result.status = "FAILED"
    elif "BLOCKED" in statuses:
        result.status = "BLOCKED"
    failures = [s.reason for s in result.steps if s.status in ("FAILED", "BLOCKED") and s.reason]
    result.error = failures[-1] if failures else None
    row = job.finish(result.status, result.error)
    result.duration_ms = int(row["duration_ms"] or 0)
    return result
