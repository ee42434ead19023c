"""Who may run what, once: dataset lease events and run requests claimed once per key."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.rows.schema import Comment, RuntimeTable
from lakeguard.words.vocabulary import LeaseAction


@dataclass(frozen=True, kw_only=True)
class LeaseEventRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="dataset_leases",
        comment=(
            "Who may publish a dataset now: an append-only log of lease events, folded per dataset"
            " (one run per dataset at a time)."
        ),
        day="event_date",
        date_of="event_time",
        cluster_by=("tenant_id", "dataset_id"),
    )
    lease_id: Annotated[str, Comment("One id per acquisition; renewals and the release repeat it")]
    tenant_id: str
    dataset_id: str
    run_id: Annotated[
        str, Comment("The job run holding the lease (pipeline_runs.pipeline_logging_id)")
    ]
    holder: Annotated[str, Comment("host:pid of the holding process")]
    action: Annotated[LeaseAction, Comment("ACQUIRE, RENEW, RELEASE")]
    expires_at: Annotated[datetime, Comment("The lease is free after this unless renewed")]
    event_time: datetime


@dataclass(frozen=True, kw_only=True)
class RunRequestRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="run_requests",
        comment=(
            "Runs accepted before they start (the API, the scheduler): one row per request key, "
            "claimed by compare-and-set, so the same Idempotency-Key or schedule tick gives the "
            "same run."
        ),
        day="requested_date",
        date_of="requested_at",
        cluster_by=("tenant_id", "request_key"),
    )
    request_key: Annotated[
        str, Comment("An Idempotency-Key, a schedule tick (job@time), or the run id itself")
    ]
    tenant_id: str
    job_id: Annotated[str, Comment("The job or dataset the run runs")]
    run_id: Annotated[str, Comment("The job run it became (pipeline_runs.pipeline_logging_id)")]
    trigger_type: str
    triggered_by: str
    retry_of: Annotated[str | None, Comment("The run a retry retries")] = None
    not_before: Annotated[datetime | None, Comment("A retry's backoff: it starts after this")] = (
        None
    )
    scheduled_for: Annotated[
        datetime | None, Comment("A schedule tick's time (UTC): the tick this run is for")
    ] = None
    requested_at: datetime
    fingerprint: Annotated[
        str | None,
        Comment(
            "An Idempotency-Key's request (sha256 of method, path and body): the same key "
            "with another request is refused"
        ),
    ] = None
