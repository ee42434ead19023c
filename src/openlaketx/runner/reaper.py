"""Find runs whose process died in flight and record them FAILED (invariant 4).

A run in flight has a RUNNING event and no terminal row. It is abandoned when its worker ran on
this host and that process is gone, or when it has been running longer than `stale_after`
(a worker on another host cannot be checked). Reaping appends the missing terminal rows.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta
from typing import Any

from lakeguard.store import MetadataStore
from lakeguard.store.ddl import sql_string
from openlaketx.runner.lifecycle import new_id, worker_instance


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_abandoned(worker: str | None, age: timedelta, stale_after: timedelta) -> bool:
    """Pure test of one in-flight run: is its worker known dead, or has it run too long?"""
    if age > stale_after:
        return True
    host, _, pid = (worker or "").rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        return int(pid) != os.getpid() and not _process_alive(int(pid))
    return False


def in_flight(store: MetadataStore, window_days: int = 30) -> list[dict[str, Any]]:
    """RUNNING events of the last `window_days` without a terminal row.

    The window keeps the scan to recent partitions; any reaper pass inside the window (every
    run starts one) has already settled older runs.
    """
    tenant = sql_string(store.tenant)
    q = store.qualified
    since = f"date_sub(current_date(), {int(window_days)})"
    sql = f"""
        SELECT e.* FROM {q("run_events")} e
        WHERE e.tenant_id = {tenant} AND e.status = 'RUNNING' AND e.event_date >= {since}
          AND NOT EXISTS (SELECT 1 FROM {q("run_events")} t
                          WHERE t.event_date >= {since} AND t.run_id = e.run_id
                            AND t.status <> 'RUNNING')
          AND NOT EXISTS (SELECT 1 FROM {q("run_history")} h
                          WHERE h.run_date >= {since} AND h.run_id = e.run_id)
          AND NOT EXISTS (SELECT 1 FROM {q("pipeline_runs")} p
                          WHERE p.run_date >= {since} AND p.pipeline_logging_id = e.run_id)
    """
    return [r.asDict() for r in store.spark.sql(sql).collect()]


def reap(store: MetadataStore, stale_after: timedelta = timedelta(hours=12)) -> list[str]:
    """Record every abandoned run FAILED; returns the run ids reaped."""
    now = store.now()
    runs = [
        r
        for r in in_flight(store)
        if is_abandoned(r["worker_instance"], now - r["event_time"], stale_after)
    ]
    if not runs:
        return []
    layers = {d["dataset_id"]: d["layer"] for d in store.active_definitions("dataset_registry")}
    history, pipelines, events = [], [], []
    for r in runs:
        message = (
            f"abandoned: worker {r['worker_instance']} stopped without finishing "
            f"(found by {worker_instance()})"
        )
        if r["dataset_id"]:
            history.append(
                {
                    "run_id": r["run_id"],
                    "pipeline_logging_id": r["pipeline_logging_id"],
                    "tenant_id": store.tenant,
                    "dataset_id": r["dataset_id"],
                    "layer": layers.get(r["dataset_id"], "unknown"),
                    "status": "FAILED",
                    "start_time": r["event_time"],
                    "end_time": now,
                    "error_message": message,
                    "triggered_by": "reaper",
                }
            )
        else:
            pipelines.append(
                {
                    "pipeline_logging_id": r["run_id"],
                    "pipeline_id": r["pipeline_id"],
                    "tenant_id": store.tenant,
                    "status": "FAILED",
                    "trigger_type": "unknown",
                    "triggered_by": "reaper",
                    "start_time": r["event_time"],
                    "end_time": now,
                    "duration_ms": int((now - r["event_time"]).total_seconds() * 1000),
                    "worker_instance": r["worker_instance"],
                    "error_message": message,
                }
            )
        events.append(
            {
                **{
                    k: r[k]
                    for k in (
                        "run_id",
                        "pipeline_logging_id",
                        "pipeline_id",
                        "dataset_id",
                        "tenant_id",
                    )
                },
                "event_id": new_id(),
                "status": "FAILED",
                "worker_instance": worker_instance(),
                "message": message,
                "event_time": now,
            }
        )
    store.append_many({"run_history": history, "pipeline_runs": pipelines, "run_events": events})
    return [r["run_id"] for r in runs]
