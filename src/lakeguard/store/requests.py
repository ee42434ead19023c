"""Runs accepted before they start, claimed once per request key (no Spark).

The API accepts a run (and answers with its id) before a worker starts it; the scheduler does
the same for each tick of a job's schedule. Each request has a key — the client's
Idempotency-Key, the tick (`job@time`), or the run id itself — and claiming it is a
compare-and-set append to `run_requests`: two clients sending the same key, or two schedulers
firing the same tick, get the one run that was recorded first.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from lakeguard.records.runs.coordination import RunRequestRow

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

TABLE = RunRequestRow.TABLE.name
# How long a request key is remembered: a retry of the same request within it is the same run.
REMEMBERED = timedelta(days=7)


def _filters(store: MetadataStore, key: str) -> list[tuple[str, str, Any]]:
    return [
        ("requested_date", ">=", store.since(REMEMBERED.days)),
        ("request_key", "=", key),
    ]


def claim(store: MetadataStore, request: RunRequestRow) -> tuple[RunRequestRow, bool]:
    """(the request recorded under `request.request_key`, whether it is this one)."""
    earlier: list[RunRequestRow] = []

    def decide(rows: list[RunRequestRow]) -> list[RunRequestRow] | None:
        if rows:
            earlier[:] = sorted(rows, key=lambda r: r.requested_at)[:1]
            return None
        return [request]

    if store.append_if(RunRequestRow, decide, filters=_filters(store, request.request_key)) is None:
        return earlier[0], False
    return request, True


def recorded(store: MetadataStore, key: str) -> RunRequestRow | None:
    """The request claimed under `key` (within REMEMBERED), if any."""
    rows = store.read(RunRequestRow, filters=_filters(store, key))
    return min(rows, key=lambda r: r.requested_at) if rows else None


def find(store: MetadataStore, run_id: str) -> RunRequestRow | None:
    """The request a run was accepted under, if it was accepted (not started at a terminal)."""
    rows = store.read(RunRequestRow, filters=[("run_id", "=", run_id)])
    return min(rows, key=lambda r: r.requested_at) if rows else None
