"""Run lifecycle logging: live events while a run is in flight, exactly one terminal row after.

Nothing here updates a row. A run announces itself in `run_events` (RUNNING), and on its end
writes its terminal row (`pipeline_runs` for a job run, `run_history` for a dataset attempt)
together with its `step_logs` and a terminal event. A run whose process died keeps only the
RUNNING event; the reaper turns it into FAILED (see reaper.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypedDict

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.runs.rows import PipelineRunRow, RunEventRow, RunHistoryRow, StepLogRow
from lakeguard.store import RunWriter
from lakeguard.words.errors import describe
from lakeguard.words.hashing import to_json
from lakeguard.words.liveness import worker_instance
from lakeguard.words.vocabulary import (
    AttemptStatus,
    EventStatus,
    JobStatus,
    LoadType,
    Outcome,
    SourceLoad,
    StepStatus,
)
from openlaketx.runner.deadline import RunDeadline


def _ms(start: datetime, end: datetime) -> int:
    return int((end - start).total_seconds() * 1000)


class StepNotes(TypedDict, total=False):
    """What a phase says of itself beyond its status and rows (`step_logs.metadata`): each
    phase sets the keys of its own."""

    note: str | None  # stage, read, write: why it wrote nothing
    spark: bool  # read: False when the run never started Spark
    fingerprint: str  # read: the batch's
    swept: int  # read: staged folders of dead runs it removed
    sources: dict[str, SourceLoad]  # read: each source object's load type
    rejected: list[str]  # read: the files it put aside as unreadable (their marks' keys)
    staged: str  # validate: the staged batch's folder
    files: int
    outcomes: dict[str, Outcome]  # validate: each rule's
    allowed: bool  # gate
    reason: str
    load_type: LoadType  # write
    delta_version: int
    set_aside: int  # write: rows quarantined
    version: int  # record version: the data version recorded
    released: int  # recovery: the data version whose empty commit it released
    recovered_commits: list[int]  # recovery: the commits it found already made


@dataclass
class StepLog:
    """One phase of a dataset attempt in progress; it becomes a `step_logs` row when it ends.

    The phase sets `status`, `rows` and `metadata` as it learns them.
    """

    name: str
    step_type: str
    index: int
    start: datetime
    status: StepStatus = StepStatus.COMPLETED
    rows: int | None = None
    metadata: StepNotes = field(default_factory=lambda: StepNotes())
    started: float = field(default_factory=time.perf_counter)


class JobRun:
    """One execution of a job (or of a single dataset): one `pipeline_runs` row at the end."""

    def __init__(
        self,
        writer: RunWriter,
        pipeline_id: str,
        *,
        trigger_type: str,
        triggered_by: str,
        parameters: Mapping[str, str],
        config_version: str,
        run_id: str | None = None,
    ) -> None:
        self.writer = writer
        self.pipeline_id = pipeline_id
        self.run_id = run_id or new_id()  # an accepted run keeps the id it was given
        self.trigger_type = trigger_type
        self.triggered_by = triggered_by
        self.parameters = parameters
        self.config_version = config_version
        self.start_time = writer.now()
        self.finished = False
        self.pending_events: list[RunEventRow] = []

    def event(
        self,
        status: EventStatus,
        message: str | None = None,
        *,
        run_id: str | None = None,
        dataset_id: str | None = None,
    ) -> RunEventRow:
        return RunEventRow(
            run_id=run_id or self.run_id,
            pipeline_logging_id=self.run_id,
            pipeline_id=self.pipeline_id,
            dataset_id=dataset_id,
            tenant_id=self.writer.tenant,
            status=status,
            worker_instance=worker_instance(),
            message=message,
            event_time=self.writer.now(),
            trigger_type=self.trigger_type,
            triggered_by=self.triggered_by,
        )

    def start(self) -> None:
        """Announce the run; the event is committed with the first attempt's (one commit)."""
        self.pending_events.append(self.event(EventStatus.RUNNING, f"trigger={self.trigger_type}"))

    def take_pending_events(self) -> list[RunEventRow]:
        events, self.pending_events = self.pending_events, []
        return events

    def finish(
        self, status: JobStatus, error: str | None = None, with_rows: Sequence[RuntimeRow] = ()
    ) -> PipelineRunRow:
        """Write the terminal `pipeline_runs` row (once), `with_rows` (the leases given back)
        in the same commit round."""
        if self.finished:
            raise RuntimeError("a job run finishes once")
        end = self.writer.now()
        row = PipelineRunRow(
            pipeline_logging_id=self.run_id,
            pipeline_id=self.pipeline_id,
            tenant_id=self.writer.tenant,
            status=status,
            trigger_type=self.trigger_type,
            trigger_by=self.triggered_by,
            start_time=self.start_time,
            end_time=end,
            duration_ms=_ms(self.start_time, end),
            config_version=self.config_version,
            worker_instance=worker_instance(),
            error_message=error,
            parameters=to_json(self.parameters),
        )
        events = [*self.take_pending_events(), self.event(EventStatus(status), error)]
        self.writer.append([row, *events, *with_rows])
        self.finished = True
        return row


class DatasetAttempt:
    """One attempt at one dataset inside a job run: one `run_history` row at the end."""

    def __init__(
        self,
        job: JobRun,
        dataset_id: str,
        layer: str,
        progress: Callable[[str], None] = lambda _: None,
        deadline: RunDeadline | None = None,
    ) -> None:
        self.job = job
        self.writer = job.writer
        self.dataset_id = dataset_id
        self.layer = layer
        self.progress = progress
        self.deadline = deadline or RunDeadline()
        self.run_id = new_id()
        self.start_time = self.writer.now()
        self.steps: list[StepLogRow] = []
        # the decision's evidence rows, appended with the terminal row (one commit round)
        self.evidence: list[RuntimeRow] = []
        # files the read put aside (`rejected_files`), appended with the terminal row whatever
        # the attempt's end: a crash before it loses them, and the next read finds them again
        self.rejected: list[RuntimeRow] = []
        self.rows_read: int | None = None  # once the batch is evaluated (a failure reports it)
        self.finished = False

    def start(self) -> None:
        event = self.job.event(
            EventStatus.RUNNING, None, run_id=self.run_id, dataset_id=self.dataset_id
        )
        self.writer.append([*self.job.take_pending_events(), event])

    @contextmanager
    def phase(self, name: str, step_type: str) -> Iterator[StepLog]:
        """Time one phase; it is logged COMPLETED (or its own status), or FAILED if it raises.
        It does not begin past the run's time limit (and a failure past it is the limit's)."""
        log = StepLog(name, step_type, len(self.steps), self.writer.now())
        self.progress(f"{self.dataset_id}: {name}")
        try:
            self.deadline.check()
            yield log
        except BaseException as exc:
            self._log(log, StepStatus.FAILED, describe(self.deadline.explain(exc)))
            raise
        self._log(log, log.status, None)

    def _log(self, log: StepLog, status: StepStatus, error: str | None) -> None:
        self.steps.append(
            StepLogRow(
                pipeline_logging_id=self.job.run_id,
                tenant_id=self.writer.tenant,
                step_name=f"{self.dataset_id}.{log.name}",
                step_type=log.step_type,
                step_index=log.index,
                dataset_id=self.dataset_id,
                status=status,
                start_time=log.start,
                end_time=self.writer.now(),
                duration_ms=int((time.perf_counter() - log.started) * 1000),
                rows_processed=log.rows,
                error_message=error,
                metadata=to_json(log.metadata),
            )
        )

    def finish(
        self,
        status: AttemptStatus,
        *,
        rows_read: int | None = None,
        rows_written: int | None = None,
        data_version: int | None = None,
        error: str | None = None,
        with_rows: Sequence[RuntimeRow] = (),
    ) -> RunHistoryRow:
        """Write the terminal `run_history` row with step logs, evidence, the files put aside
        and `with_rows` (the trust score) in one commit round (once)."""
        if self.finished:
            raise RuntimeError("a dataset attempt finishes once")
        row = RunHistoryRow(
            run_id=self.run_id,
            pipeline_logging_id=self.job.run_id,
            tenant_id=self.writer.tenant,
            dataset_id=self.dataset_id,
            layer=self.layer,
            status=status,
            start_time=self.start_time,
            end_time=self.writer.now(),
            rows_read=rows_read,
            rows_written=rows_written,
            data_version=data_version,
            error_message=error,
            triggered_by=self.job.triggered_by,
        )
        event = self.job.event(
            EventStatus(status), error, run_id=self.run_id, dataset_id=self.dataset_id
        )
        self.writer.append([row, *self.steps, event, *self.evidence, *self.rejected, *with_rows])
        self.finished = True
        return row
