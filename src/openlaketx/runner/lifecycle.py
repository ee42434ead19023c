"""Run lifecycle logging: live events while a run is in flight, exactly one terminal row after.

Nothing here updates a row. A run announces itself in `run_events` (RUNNING), and on its end
writes its terminal row (`pipeline_runs` for a job run, `run_history` for a dataset attempt)
together with its `step_logs` and a terminal event. A run whose process died keeps only the
RUNNING event; the reaper turns it into FAILED (see reaper.py).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lakeguard.store import MetadataStore
from lakeguard.store.rows import to_json


def worker_instance() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def new_id() -> str:
    return uuid.uuid4().hex


def _ms(start: datetime, end: datetime) -> int:
    return int((end - start).total_seconds() * 1000)


@dataclass
class StepTimer:
    """Times one phase of a dataset attempt and becomes a `step_logs` row."""

    name: str
    step_type: str
    index: int
    start: datetime
    started: float = field(default_factory=time.perf_counter)


class JobRun:
    """One execution of a job (or of a single dataset): one `pipeline_runs` row at the end."""

    def __init__(
        self,
        store: MetadataStore,
        pipeline_id: str,
        *,
        trigger_type: str,
        triggered_by: str,
        parameters: dict[str, Any],
        config_version: str,
    ) -> None:
        self.store = store
        self.pipeline_id = pipeline_id
        self.run_id = new_id()
        self.trigger_type = trigger_type
        self.triggered_by = triggered_by
        self.parameters = parameters
        self.config_version = config_version
        self.start_time = store.now()
        self.finished = False
        self.pending_events: list[dict[str, Any]] = []

    def event(
        self,
        status: str,
        message: str | None = None,
        *,
        run_id: str | None = None,
        dataset_id: str | None = None,
    ) -> dict[str, Any]:
        return {
            "event_id": new_id(),
            "run_id": run_id or self.run_id,
            "pipeline_logging_id": self.run_id,
            "pipeline_id": self.pipeline_id,
            "dataset_id": dataset_id,
            "tenant_id": self.store.tenant,
            "status": status,
            "worker_instance": worker_instance(),
            "message": message,
            "event_time": self.store.now(),
        }

    def start(self) -> None:
        """Announce the run; the event is committed with the first attempt's (one commit)."""
        self.pending_events.append(self.event("RUNNING", f"trigger={self.trigger_type}"))

    def take_pending_events(self) -> list[dict[str, Any]]:
        events, self.pending_events = self.pending_events, []
        return events

    def finish(self, status: str, error: str | None = None) -> dict[str, Any]:
        """Write the terminal `pipeline_runs` row (once)."""
        if self.finished:
            raise RuntimeError("a job run finishes once")
        end = self.store.now()
        row = {
            "pipeline_logging_id": self.run_id,
            "pipeline_id": self.pipeline_id,
            "tenant_id": self.store.tenant,
            "status": status,
            "trigger_type": self.trigger_type,
            "triggered_by": self.triggered_by,
            "start_time": self.start_time,
            "end_time": end,
            "duration_ms": _ms(self.start_time, end),
            "config_version": self.config_version,
            "worker_instance": worker_instance(),
            "error_message": error,
            "parameters": to_json(self.parameters),
        }
        events = [*self.take_pending_events(), self.event(status, error)]
        self.store.append_many({"pipeline_runs": [row], "run_events": events})
        self.finished = True
        return row


class DatasetAttempt:
    """One attempt at one dataset inside a job run: one `run_history` row at the end."""

    def __init__(self, job: JobRun, dataset_id: str, layer: str) -> None:
        self.job = job
        self.store = job.store
        self.dataset_id = dataset_id
        self.layer = layer
        self.run_id = new_id()
        self.start_time = self.store.now()
        self.steps: list[dict[str, Any]] = []
        self.evidence: dict[str, list[dict[str, Any]]] = {}
        self.finished = False

    def start(self) -> None:
        event = self.job.event("RUNNING", None, run_id=self.run_id, dataset_id=self.dataset_id)
        self.store.append("run_events", [*self.job.take_pending_events(), event])

    def timer(self, name: str, step_type: str) -> StepTimer:
        return StepTimer(name, step_type, len(self.steps), self.store.now())

    def log_step(
        self,
        timer: StepTimer,
        status: str,
        *,
        rows: int | None = None,
        error: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        end = self.store.now()
        self.steps.append(
            {
                "step_logging_id": new_id(),
                "pipeline_logging_id": self.job.run_id,
                "tenant_id": self.store.tenant,
                "step_name": f"{self.dataset_id}.{timer.name}",
                "step_type": timer.step_type,
                "step_index": timer.index,
                "dataset_id": self.dataset_id,
                "status": status,
                "start_time": timer.start,
                "end_time": end,
                "duration_ms": int((time.perf_counter() - timer.started) * 1000),
                "rows_processed": rows,
                "error_message": error,
                "metadata": to_json(metadata or {}),
            }
        )

    def finish(
        self,
        status: str,
        *,
        rows_read: int | None = None,
        rows_written: int | None = None,
        data_version: int | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """Write the terminal `run_history` row with step logs and evidence (once)."""
        if self.finished:
            raise RuntimeError("a dataset attempt finishes once")
        row = {
            "run_id": self.run_id,
            "pipeline_logging_id": self.job.run_id,
            "tenant_id": self.store.tenant,
            "dataset_id": self.dataset_id,
            "layer": self.layer,
            "status": status,
            "start_time": self.start_time,
            "end_time": self.store.now(),
            "rows_read": rows_read,
            "rows_written": rows_written,
            "data_version": data_version,
            "error_message": error,
            "triggered_by": self.job.triggered_by,
        }
        event = self.job.event(status, error, run_id=self.run_id, dataset_id=self.dataset_id)
        self.store.append_many(
            {"run_history": [row], "step_logs": self.steps, "run_events": [event], **self.evidence}
        )
        self.finished = True
        return row
