"""Reads of job runs and their dataset attempts, steps, runs in flight and leases."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from lakeguard.reads.base import ReaderBase
from lakeguard.records.runs.coordination import RunRequestRow
from lakeguard.records.runs.records import InFlightRun, JobRunRecord, Lease
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow, StepLogRow
from lakeguard.store import joins, leases
from lakeguard.words.vocabulary import IN_FLIGHT, EventStatus


class RunReads(ReaderBase):
    """Job runs, whatever their state, and what each is doing."""

    def run_started(self, run_id: str) -> list[datetime]:
        """When the job run of dataset attempt `run_id` started, then when the attempt did
        (the times its definitions were read around); empty when neither is recorded."""
        attempt = self._store.read(RunHistoryRow, filters=[("run_id", "=", run_id)])
        if not attempt:
            return []
        job = self._store.rows(
            "pipeline_runs",
            filters=[("pipeline_logging_id", "=", attempt[0].pipeline_logging_id)],
            columns=["start_time"],
        )
        return [r["start_time"] for r in job] + [attempt[0].start_time]

    def job_runs(self, limit: int = 20, offset: int = 0) -> list[JobRunRecord]:
        """The newest job runs: those accepted or in flight first (with their current step),
        then ended ones, newest first. DataFusion sorts and limits the ended ones: the cost
        does not grow with the history."""
        return self._memo("job_runs", lambda: tuple(self._job_runs(limit, offset)), limit, offset)

    def _job_runs(self, limit: int, offset: int) -> list[JobRunRecord]:
        flying = sorted(self.in_flight(), key=lambda r: r.event_time, reverse=True)
        runs = [r for r in flying if r.dataset_id is None]
        steps = self._current_steps([r.run_id for r in runs]) if runs else {}
        live = [JobRunRecord.in_flight(r, steps.get(r.run_id)) for r in runs]
        ended_offset = max(0, offset - len(live))
        ended = self._store.read(
            PipelineRunRow,
            newest_first="start_time",
            limit=max(0, limit - max(0, len(live) - offset)),
            offset=ended_offset,
        )
        return self._requested((live[offset:] + [JobRunRecord.from_row(r) for r in ended])[:limit])

    def job_run(self, run_id: str) -> JobRunRecord | None:
        """One job run, whatever its state (None: no such run of this tenant)."""
        ended = self._store.read(PipelineRunRow, filters=[("pipeline_logging_id", "=", run_id)])
        if ended:
            return self._requested([JobRunRecord.from_row(ended[0])])[0]
        flying = [r for r in self.in_flight() if r.run_id == run_id and r.dataset_id is None]
        if not flying:
            return None
        run = JobRunRecord.in_flight(flying[0], self._current_steps([run_id]).get(run_id))
        return self._requested([run])[0]

    def _requested(self, runs: list[JobRunRecord]) -> list[JobRunRecord]:
        """The runs with what their run requests say (a retry's run, a tick's time)."""
        if not runs:
            return runs
        requests = self._store.read(
            RunRequestRow, filters=[("run_id", "in", [r.pipeline_logging_id for r in runs])]
        )
        first: dict[str, RunRequestRow] = {}
        for request in sorted(requests, key=lambda r: r.requested_at, reverse=True):
            first[request.run_id] = request
        return [
            replace(run, retry_of=found.retry_of, scheduled_for=found.scheduled_for)
            if (found := first.get(run.pipeline_logging_id)) is not None
            else run
            for run in runs
        ]

    def _current_steps(self, run_ids: list[str]) -> dict[str, str]:
        """The dataset each run in flight is working on (its newest RUNNING attempt)."""
        events = self._store.rows(
            "run_events",
            filters=[
                ("event_date", ">=", self._store.since(2)),
                ("pipeline_logging_id", "in", run_ids),
            ],
            columns=["pipeline_logging_id", "dataset_id", "status", "event_time"],
        )
        found: dict[str, tuple[Any, str]] = {}
        for e in events:
            if e["dataset_id"] and e["status"] == EventStatus.RUNNING:
                seen = found.get(e["pipeline_logging_id"])
                if seen is None or e["event_time"] > seen[0]:
                    found[e["pipeline_logging_id"]] = (e["event_time"], e["dataset_id"])
        return {run: dataset for run, (_, dataset) in found.items()}

    def attempts(self, run_id: str) -> list[RunHistoryRow]:
        """The dataset attempts of a job run, oldest first."""
        rows = self._store.read(RunHistoryRow, filters=[("pipeline_logging_id", "=", run_id)])
        return sorted(rows, key=lambda r: r.start_time)

    def steps(self, run_id: str) -> list[StepLogRow]:
        """The logged phases of a job run, in order."""
        rows = self._store.read(StepLogRow, filters=[("pipeline_logging_id", "=", run_id)])
        return sorted(rows, key=lambda r: (r.start_time, r.step_index))

    def in_flight(self, window_days: int = 30) -> list[InFlightRun]:
        """Runs accepted (PENDING) or started (RUNNING) in the last `window_days` without a
        terminal row.

        The window keeps the scan to recent partitions; any reaper pass inside the window (every
        run starts one) has already settled older runs.
        """
        # DataFusion drops the events of runs that ended: only runs in flight cross into Python
        since = self._store.since(window_days)
        events = joins.unfinished_events(self._store, since, sorted(IN_FLIGHT))
        finished = {e.run_id for e in events if e.status not in IN_FLIGHT}
        latest: dict[str, RunEventRow] = {}
        for e in sorted(events, key=lambda e: e.event_time):
            if e.status in IN_FLIGHT and e.run_id not in finished:
                first = latest.get(e.run_id)
                # the run's state is its newest event; its start and trigger, its first one
                latest[e.run_id] = replace(
                    e,
                    event_time=first.event_time if first else e.event_time,
                    trigger_type=(first or e).trigger_type or e.trigger_type,
                    triggered_by=(first or e).triggered_by or e.triggered_by,
                )
        return [
            InFlightRun(
                run_id=e.run_id,
                pipeline_logging_id=e.pipeline_logging_id,
                pipeline_id=e.pipeline_id,
                dataset_id=e.dataset_id,
                worker_instance=e.worker_instance,
                event_time=e.event_time,
                status=e.status,
                trigger_type=e.trigger_type,
                triggered_by=e.triggered_by,
            )
            for e in latest.values()
        ]

    def lease(self, dataset_id: str) -> Lease | None:
        """Who holds the dataset now (None when it is free)."""
        return leases.current(self._store, dataset_id)
