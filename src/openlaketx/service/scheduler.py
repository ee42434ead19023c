"""The scheduler: cron schedules, file arrival and upstream promotion, turned into runs.

One pass (`tick`) looks at every tenant's enabled jobs:

- **schedule**: each tick (lakeguard/words/schedule.py) after the job's last claimed one, up to
  now, is claimed once — `run_requests`, key `tick:<job>@<UTC time>` — so two schedulers
  never run one tick twice; after downtime only the latest missed tick runs (or all of them,
  with catch-up `all`, one after another). A tick that comes while a run of the job started
  before the pass is still in flight, or while another job holds its datasets, is claimed as
  skipped: it does not run later. Each tick thus has one outcome: one run, or a skip.
- **file_arrival**: a job whose file source lists what a run would ingest (a new file, or a
  changed one under `on_changed_file: reload`; a local listing, no Spark) starts, once per
  situation: the files a run would read (a changed file that blocks included) and the job's
  definitions. A run that blocked on a situation is not repeated while it lasts; once it
  changes (the blocking file removed, a rule fixed, another file come), the files still
  waiting start a run again, whatever key an earlier situation used. A run that failed is
  tried again on the same situation after a backoff.
- **upstream**: a job whose task reads a parent dataset that another job promoted since
  starts, once per parent version.

Each pass also checks every dataset's freshness SLA (`lakeguard.actors.alerts.outbox`): a dataset
whose latest approved version is older than its SLA gets its SLA_MISSED incident within one
pass of the breach, with no run (a feed that stopped delivering starts none).

A job whose stored definitions do not validate (a bad cron or time zone, a task naming an
unknown dataset: lakeguard.rules.catalog.recheck) is not fired; the pass says why, and the
other jobs run as usual.

`laketx serve` runs a pass every few seconds; `laketx scheduler --once` runs one and waits for
the runs it started.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from lakeguard.actors.alerts.outbox import Outbox
from lakeguard.records.alerts.event_rows import IncidentEventRow
from lakeguard.records.definitions.records import JobDef
from lakeguard.records.runs.coordination import RunRequestRow
from lakeguard.store.requests import claim
from lakeguard.store.store import utcnow
from lakeguard.words.errors import LakeTxError, WriteConflict, describe
from lakeguard.words.liveness import known_dead
from lakeguard.words.retries import backoff
from lakeguard.words.schedule import CatchUp, due
from lakeguard.words.vocabulary import EventStatus, Layer, TriggerType
from openlaketx.lakehouse import Lakehouse
from openlaketx.service.refusals import TooManyRuns
from openlaketx.service.runs import RunService
from openlaketx.sources.kinds import engine

_log = logging.getLogger(__name__)
SKIPPED = "skipped"  # the run id a skipped tick is claimed under
# A file-arrival situation whose run failed is tried again after this, doubled each failure
# (the job's retry_delay_seconds when it has one), capped at an hour.
FILE_RETRY_SECONDS = 60


@dataclass(frozen=True)
class Fired:
    """What one pass did for one job."""

    tenant: str
    job_id: str
    trigger: TriggerType
    run_id: str | None  # None: skipped, or not scheduled (detail says why)
    detail: str


class Scheduler:
    def __init__(
        self,
        runs: RunService,
        *,
        catch_up: CatchUp = CatchUp.LATEST,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.runs = runs
        self.catch_up = catch_up
        self.clock = clock
        self._stop = threading.Event()
        self.missed: list[IncidentEventRow] = []  # the SLA events the last pass recorded

    def tick(self) -> list[Fired]:
        """One pass over every tenant's jobs (and every dataset's freshness SLA)."""
        now = self.clock()
        fired: list[Fired] = []
        self.missed = []
        for tenant in self.runs.tenants.known():
            try:
                fired += self._tenant(tenant, now)
            except LakeTxError as exc:  # one tenant's bad definitions stop only its jobs
                _log.error("scheduler: tenant %s: %s", tenant, describe(exc))
        return fired

    def _tenant(self, tenant: str, now: datetime) -> list[Fired]:
        lh = self.runs.tenants.get(tenant)
        registry = lh.reader.definitions.registry()
        in_flight = {
            r.pipeline_id: r.run_id
            for r in lh.reader.runs.in_flight()
            if not r.dataset_id and not known_dead(r.worker_instance)  # the dead are reaped
        }
        fired: list[Fired] = []
        for job in sorted(registry.jobs.values(), key=lambda j: j.job_id):
            if not job.enabled:
                continue
            try:
                refused = registry.schedule_refusal(job.job_id)
                if refused is not None:
                    raise refused
                if job.schedule:
                    fired += self._schedule(tenant, lh, job, now, in_flight)
                if "file_arrival" in job.triggers:
                    fired += self._files(tenant, lh, job, now, in_flight)
                if "upstream" in job.triggers:
                    fired += self._upstream(tenant, lh, job)
            except LakeTxError as exc:  # one job's bad definitions stop only that job
                _log.error("scheduler: tenant %s, job %s: %s", tenant, job.job_id, describe(exc))
                detail = f"not scheduled: {exc.message}"
                fired.append(Fired(tenant, job.job_id, TriggerType.SCHEDULER, None, detail))
        try:  # freshness is checked whether or not anything runs
            missed = Outbox(lh.store, clock=self.clock).check_sla(registry, now)
        except LakeTxError as exc:
            _log.error("scheduler: tenant %s: freshness not checked: %s", tenant, describe(exc))
            missed = []
        for row in missed:
            _log.warning("scheduler: tenant %s: %s", tenant, row.title)
        self.missed += missed
        return fired

    def _last_tick(self, lh: Lakehouse, job_id: str) -> datetime | None:
        rows = lh.store.rows(
            "run_requests",
            filters=[("job_id", "=", job_id), ("trigger_type", "=", TriggerType.SCHEDULER)],
            columns=["scheduled_for"],
            newest_first="scheduled_for",
            limit=1,
        )
        return rows[0]["scheduled_for"] if rows else None

    def _schedule(
        self, tenant: str, lh: Lakehouse, job: JobDef, now: datetime, in_flight: dict[str, str]
    ) -> list[Fired]:
        assert job.schedule is not None
        # ticks are owed from the last one claimed, or from when the job was defined
        last = self._last_tick(lh, job.job_id) or job.created_at or now
        fired: list[Fired] = []
        queue = False  # the pass's later ticks of the job wait for its earlier ones
        for tick in due(job.schedule, job.timezone, last=last, now=now, catch_up=self.catch_up):
            key = f"tick:{job.job_id}@{tick:%Y-%m-%dT%H:%M:%S}"
            by = f"schedule '{job.schedule}' ({job.timezone}) at {tick:%Y-%m-%d %H:%M} UTC"
            running = in_flight.get(job.job_id)
            if running is not None:
                fired.append(self._skip(tenant, lh, job, key, tick, by, f"run {running} in flight"))
                continue
            try:
                accepted = self.runs.submit(
                    tenant,
                    job.job_id,
                    trigger_type=TriggerType.SCHEDULER,
                    triggered_by=by,
                    request_key=key,
                    scheduled_for=tick,
                    wait=lh.config.lease_ttl_seconds if queue else 0.0,
                )
            except (WriteConflict, TooManyRuns) as exc:
                fired.append(self._skip(tenant, lh, job, key, tick, by, exc.what))
                continue
            if not accepted.new:
                continue  # another scheduler claimed this tick first
            queue = True
            fired.append(Fired(tenant, job.job_id, TriggerType.SCHEDULER, accepted.run_id, by))
        return fired

    def _skip(
        self,
        tenant: str,
        lh: Lakehouse,
        job: JobDef,
        key: str,
        tick: datetime,
        by: str,
        why: str,
    ) -> Fired:
        """Claim a tick without a run, so no scheduler runs it later."""
        claim(
            lh.store,
            RunRequestRow(
                request_key=key,
                tenant_id=lh.store.tenant,
                job_id=job.job_id,
                run_id=SKIPPED,
                trigger_type=TriggerType.SCHEDULER,
                triggered_by=f"{by}: skipped, {why}",
                scheduled_for=tick,
                requested_at=lh.store.now(),
            ),
        )
        return Fired(tenant, job.job_id, TriggerType.SCHEDULER, None, f"skipped: {why}")

    def _files(
        self, tenant: str, lh: Lakehouse, job: JobDef, now: datetime, in_flight: dict[str, str]
    ) -> list[Fired]:
        if job.job_id in in_flight:
            return []  # that run may take the files: the next pass sees what is left
        registry = lh.reader.definitions.registry()
        waiting: list[str] = []
        situation: list[str] = []
        reach = lh.store.tenant_reach()
        for task in job.tasks:
            dataset = registry.dataset(task.dataset_id)
            situation.append(f"{dataset.dataset_id}:{registry.definition_hash(dataset.dataset_id)}")
            if dataset.layer != Layer.BRONZE or registry.refusal(dataset.dataset_id) is not None:
                continue  # a dataset that cannot run lists nothing (its run says why)
            progress = lh.reader.versions.source_progress(dataset.dataset_id)
            for obj in registry.source_objects(dataset.dataset_id):
                system = registry.system(obj.source_system_id)
                waiting += engine(system.kind).arrivals(system, obj, progress, reach) or []
        if not waiting:
            return []
        text = "\n".join(sorted(waiting) + sorted(situation))
        prefix = f"files:{job.job_id}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        recent = lh.store.read(
            RunRequestRow,
            filters=[("job_id", "=", job.job_id), ("trigger_type", "=", TriggerType.FILE_ARRIVAL)],
            newest_first="requested_at",
            limit=20,
        )
        latest = recent[0] if recent else None
        seen = latest is not None and latest.request_key.partition("@")[0] == prefix
        if seen and not self._again_after_failures(lh, job, recent, prefix, now):
            return []  # this situation had its run; it is not repeated while nothing changes
        # the key names the request it follows: a situation seen before, then left, is new again
        key = f"{prefix}@{latest.run_id if latest else 'first'}"
        detail = f"{len(waiting)} file(s) to read"
        return self._start(tenant, job, TriggerType.FILE_ARRIVAL, key, detail)

    @staticmethod
    def _again_after_failures(
        lh: Lakehouse, job: JobDef, recent: list[RunRequestRow], prefix: str, now: datetime
    ) -> bool:
        """Whether a situation whose runs failed is due another: its failures (a run the
        service stopped before it started, a lease lost to a race, a crash) have a cause the
        listing cannot see, so it is tried again after a backoff that doubles each time."""
        failed: list[datetime] = []  # when each ended, newest first
        for request in recent:
            if request.request_key.partition("@")[0] != prefix:
                break
            run = lh.reader.runs.job_run(request.run_id)
            if run is None or run.status != EventStatus.FAILED:
                break  # completed or blocked (an outcome), or not ended yet
            failed.append(run.end_time or request.requested_at)
        if not failed:
            return False
        base = job.retry_delay_seconds or FILE_RETRY_SECONDS
        wait = backoff(len(failed), base, random.Random(recent[0].run_id))
        return now >= failed[0] + timedelta(seconds=wait)

    def _upstream(self, tenant: str, lh: Lakehouse, job: JobDef) -> list[Fired]:
        registry = lh.reader.definitions.registry()
        own = {t.dataset_id for t in job.tasks}
        for task in job.tasks:
            dataset = registry.dataset(task.dataset_id)
            consumed = lh.reader.versions.approved(dataset.dataset_id)
            refs = consumed.upstream_refs if consumed else {}
            for parent in dataset.parents:
                if parent in own:
                    continue  # written by this job itself
                latest = lh.reader.versions.approved(parent)
                if latest is not None and latest.version > refs.get(parent, 0):
                    key = f"upstream:{job.job_id}:{parent}@{latest.version}"
                    detail = f"{parent} v{latest.version} approved"
                    return self._start(tenant, job, TriggerType.UPSTREAM, key, detail)
        return []

    def _start(
        self, tenant: str, job: JobDef, trigger: TriggerType, key: str, detail: str
    ) -> list[Fired]:
        try:
            accepted = self.runs.submit(
                tenant, job.job_id, trigger_type=trigger, triggered_by=detail, request_key=key
            )
        except (WriteConflict, TooManyRuns):
            return []  # the job is running, or the tenant is full: the next pass sees again
        if not accepted.new:
            return []
        return [Fired(tenant, job.job_id, trigger, accepted.run_id, detail)]

    def loop(self, every: float = 5.0) -> None:
        """Run a pass every `every` seconds until `stop` (inside `laketx serve`)."""
        while not self._stop.wait(every):
            try:
                for fired in self.tick():
                    _log.info("scheduler: %s %s: %s", fired.job_id, fired.trigger, fired.detail)
            except Exception as exc:  # the next pass tries again
                _log.error("scheduler pass failed: %s", describe(exc))

    def stop(self) -> None:
        self._stop.set()
