"""Runs the service accepts and executes on a bounded worker pool.

A run is accepted before it starts: its request is claimed (`run_requests`, once per request
key), a PENDING event makes it visible, and a worker runs it through the `Lakehouse` facade
as the CLI would, under the id it was given. A transient failure is retried as a new run
(`trigger_type=retry`, linked to the one it retries) after an exponential backoff with jitter,
up to the job's `max_retries`; a blocked decision is an outcome and never retried.

Draining (SIGTERM) stops accepting, lets the runs in flight finish, and records the ones not
started yet as FAILED.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta

from lakeguard.reads.reader import StoreReader
from lakeguard.records.rows.runtime import new_id
from lakeguard.records.runs.coordination import RunRequestRow
from lakeguard.records.runs.rows import RunEventRow
from lakeguard.store import RunWriter
from lakeguard.store.requests import claim, find, recorded
from lakeguard.store.store import utcnow
from lakeguard.words.errors import WriteConflict, describe
from lakeguard.words.liveness import known_dead, worker_instance
from lakeguard.words.retries import backoff
from lakeguard.words.vocabulary import AttemptStatus, EventStatus, JobStatus, TriggerType
from openlaketx.lakehouse import Lakehouse
from openlaketx.runner.job import JobResult, plan
from openlaketx.runner.lifecycle import JobRun
from openlaketx.service.refusals import IdempotencyKeyReused, ServiceStopping, TooManyRuns
from openlaketx.service.tenants import Tenants

__all__ = ["Accepted", "RunService", "ServiceStopping", "transient_failure"]

_log = logging.getLogger(__name__)

# How often a long-polling reader asks the store whether another process's run has ended.
POLL_SECONDS = 0.25


@dataclass(frozen=True)
class Accepted:
    run_id: str
    tenant: str
    job_id: str
    new: bool  # False: the request key named a run accepted before; this is that run


def transient_failure(result: JobResult) -> bool:
    """Whether a run failed for a reason worth another run (never a blocked decision)."""
    if result.status != JobStatus.FAILED:
        return False
    if result.refused is not None:
        return bool(result.refused.transient)
    failed = [s for s in result.steps if s.status == AttemptStatus.FAILED]
    return bool(failed) and all(s.error is not None and s.error.transient for s in failed)


class RunService:
    """Accepts runs for any tenant and runs them on `workers` threads; a tenant has at most
    `concurrent_runs(tenant)` runs accepted or in flight at once (counted in its store, so
    every process serving it counts the same runs)."""

    def __init__(
        self,
        tenants: Tenants,
        *,
        workers: int = 2,
        rng: random.Random | None = None,
        concurrent_runs: Callable[[str], int] = lambda _tenant: 1_000_000,
    ) -> None:
        self.tenants = tenants
        self.concurrent_runs = concurrent_runs
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="laketx-run")
        self._accepting = True
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._admitting = threading.Lock()
        self._futures: dict[str, Future[None]] = {}
        self._rng = rng or random.Random()

    @property
    def accepting(self) -> bool:
        return self._accepting

    def submit(
        self,
        tenant: str,
        job_id: str,
        *,
        trigger_type: TriggerType,
        triggered_by: str,
        request_key: str | None = None,
        fingerprint: str | None = None,
        wait: float = 0.0,
        retry_of: str | None = None,
        not_before: datetime | None = None,
        scheduled_for: datetime | None = None,
    ) -> Accepted:
        """Accept a run of `job_id` (a job or a dataset) for `tenant`: answers with its id at
        once. The same `request_key` gives the run first accepted under it, whatever that run
        is doing, unless its `fingerprint` says it was another request (IdempotencyKeyReused).
        WriteConflict when another run holds one of its datasets and the request does not
        wait; TooManyRuns when the tenant is at its limit; NotRegisteredError when the job is
        not the tenant's."""
        if not self._accepting:
            raise ServiceStopping(
                "the service is stopping and accepts no new run",
                fix="send the request again once the service is back",
            )
        lh = self.tenants.get(tenant)
        job_plan = plan(lh.reader.definitions.registry(), job_id)
        if request_key is not None and (earlier := recorded(lh.store, request_key)) is not None:
            return self._again(tenant, earlier, fingerprint)
        run_id = new_id()
        request = RunRequestRow(
            request_key=request_key or run_id,
            tenant_id=lh.store.tenant,
            job_id=job_plan.pipeline_id,
            run_id=run_id,
            trigger_type=trigger_type,
            triggered_by=triggered_by,
            retry_of=retry_of,
            not_before=not_before,
            scheduled_for=scheduled_for,
            requested_at=lh.store.now(),
            fingerprint=fingerprint,
        )
        if wait <= 0 and not_before is None:
            self._refuse_if_held(lh, job_plan.datasets)
        with self._admitting:  # one process never admits past the limit
            if retry_of is None:  # a retry replaces the run that just ended
                self._refuse_if_full(tenant, lh)
            found, fresh = claim(lh.store, request)
            if not fresh:
                return self._again(tenant, found, fingerprint)
            RunWriter(lh.store).append([self._pending(lh, request)])
        with self._lock:
            self._futures[run_id] = self._pool.submit(self._execute, tenant, request, wait)
        return Accepted(run_id, tenant, request.job_id, new=True)

    @staticmethod
    def _again(tenant: str, earlier: RunRequestRow, fingerprint: str | None) -> Accepted:
        """The answer to a request key seen before: its first run, if it was this request."""
        if fingerprint is not None and earlier.fingerprint not in (None, fingerprint):
            raise IdempotencyKeyReused(
                "this Idempotency-Key was sent before with another request (method, path or "
                f"body), which became run {earlier.run_id}",
                where="Idempotency-Key",
                fix="use a new Idempotency-Key for a new request; send the same request to "
                "get its run",
            )
        return Accepted(earlier.run_id, tenant, earlier.job_id, new=False)

    def _refuse_if_full(self, tenant: str, lh: Lakehouse) -> None:
        limit = self.concurrent_runs(tenant)
        active = [
            r
            for r in StoreReader(lh.store).runs.in_flight()
            if r.dataset_id is None and not known_dead(r.worker_instance)  # reaped later
        ]
        if len(active) >= limit:
            raise TooManyRuns(
                f"tenant {tenant} has {len(active)} runs accepted or in flight, its limit",
                retry_after=10,
                fix="wait for a run to end (GET /runs), then send the request again",
            )

    def _refuse_if_held(self, lh: Lakehouse, datasets: list[str]) -> None:
        reader = StoreReader(lh.store)
        for dataset in datasets:
            held = reader.runs.lease(dataset)
            if held is None:
                continue
            raise WriteConflict(
                f"dataset {dataset} is being written by run {held.run_id}",
                where=f"dataset_leases[{dataset}]",
                fix='wait for that run to finish, or ask to wait ({"wait": seconds})',
                details={"run_id": held.run_id, "dataset_id": dataset},
            )

    @staticmethod
    def _pending(lh: Lakehouse, request: RunRequestRow) -> RunEventRow:
        return RunEventRow(
            run_id=request.run_id,
            pipeline_logging_id=request.run_id,
            pipeline_id=request.job_id,
            tenant_id=lh.store.tenant,
            status=EventStatus.PENDING,
            event_time=lh.store.now(),
            worker_instance=worker_instance(),
            message=f"retry of {request.retry_of}" if request.retry_of else None,
            trigger_type=request.trigger_type,
            triggered_by=request.triggered_by,
        )

    def _execute(self, tenant: str, request: RunRequestRow, wait: float) -> None:
        lh = self.tenants.get(tenant)
        try:
            if request.not_before is not None:
                delay = (request.not_before - utcnow()).total_seconds()
                if delay > 0:
                    self._stop.wait(delay)
            if self._stop.is_set():
                self._never_started(lh, request, "the service stopped before the run started")
                return
            result = lh.run(
                request.job_id,
                trigger_type=request.trigger_type,
                triggered_by=request.triggered_by,
                wait=wait,
                run_id=request.run_id,
                retries=False,
            )
            self._maybe_retry(tenant, lh, request, result)
        except Exception as exc:  # the run's own rows say what happened; keep the worker alive
            _log.error("run %s of %s ended: %s", request.run_id, tenant, describe(exc))
        finally:
            with self._lock:
                self._futures.pop(request.run_id, None)

    @staticmethod
    def _never_started(lh: Lakehouse, request: RunRequestRow, why: str) -> None:
        job = JobRun(
            RunWriter(lh.store),
            request.job_id,
            trigger_type=request.trigger_type,
            triggered_by=request.triggered_by,
            parameters={},
            config_version="",
            run_id=request.run_id,
        )
        job.finish(JobStatus.FAILED, why)

    def _maybe_retry(
        self, tenant: str, lh: Lakehouse, request: RunRequestRow, result: JobResult
    ) -> None:
        if not transient_failure(result) or not self._accepting:
            return
        job = lh.reader.definitions.registry().job(request.job_id)
        limit = job.max_retries if job else 0
        attempt = self._retry_number(lh, request) + 1
        if attempt > limit:
            return
        base = job.retry_delay_seconds if job else 0
        delay = backoff(attempt, base, self._rng)
        self.submit(
            tenant,
            request.job_id,
            trigger_type=TriggerType.RETRY,
            triggered_by=f"retry {attempt}/{limit} of run {request.run_id}",
            request_key=f"retry:{request.run_id}",
            retry_of=request.run_id,
            not_before=utcnow() + timedelta(seconds=delay),
        )

    @staticmethod
    def _retry_number(lh: Lakehouse, request: RunRequestRow) -> int:
        """How many retries led to this run (following `retry_of` back)."""
        count, current = 0, request
        while current.retry_of is not None and count < 100:
            count += 1
            earlier = find(lh.store, current.retry_of)
            if earlier is None:
                break
            current = earlier
        return count

    def in_flight(self) -> int:
        with self._lock:
            return len(self._futures)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no accepted run is left (True) or `timeout` seconds pass (False)."""
        deadline = utcnow() + timedelta(seconds=timeout)
        while utcnow() < deadline:
            with self._lock:
                pending = list(self._futures.values())
            if not pending:
                return True
            for future in pending:
                remaining = (deadline - utcnow()).total_seconds()
                if remaining <= 0:
                    return False
                with suppress(Exception):  # a run's failure is in its rows
                    future.result(timeout=remaining)
        return False

    def wait_for(self, run_id: str, timeout: float, ended: Callable[[], bool]) -> None:
        """Block until run `run_id` ends or `timeout` seconds pass. A run this process executes
        is waited on through its worker, with no reads at all; a run of another process (one
        more `serve` over the same home) by asking `ended` every `POLL_SECONDS`. Returns early
        when the service drains."""
        deadline = time.monotonic() + timeout
        with self._lock:
            future = self._futures.get(run_id)
        if future is not None:
            futures_wait([future], timeout=timeout)
            return
        while not ended():
            left = deadline - time.monotonic()
            if left <= 0 or self._stop.wait(min(POLL_SECONDS, left)):
                return

    def drain(self, timeout: float = 300.0) -> None:
        """Stop accepting; runs in flight finish, runs not started are recorded FAILED."""
        self._accepting = False
        self._stop.set()
        self.wait_idle(timeout)
        self._pool.shutdown(wait=False, cancel_futures=True)
