"""Dataset leases: one run per dataset at a time, recorded in `dataset_leases`.

The table is an append-only log of ACQUIRE / RENEW / RELEASE events; `live_lease` folds it
(pure). Taking a lease is a compare-and-set append: the decision "the dataset is free" and the
ACQUIRE row commit on top of the same snapshot, so two runs can never both win. A lease ends
when released, when it expires without renewal, or when its holder is known dead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from lakeguard.errors import WriteConflict
from lakeguard.liveness import known_dead, worker_instance
from lakeguard.store.records import Lease
from lakeguard.vocabulary import LeaseAction

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

TABLE = "dataset_leases"
# Events older than this are never needed to know the live lease (leases last minutes).
LOOKBACK = timedelta(days=1)


def live_lease(
    events: Iterable[Mapping[str, Any]],
    now: datetime,
    is_dead: Callable[[str], bool] = known_dead,
) -> Lease | None:
    """The lease that holds the dataset now, if any (pure fold of its events)."""
    leases: dict[str, dict[str, Any]] = {}
    for e in sorted(events, key=lambda e: e["event_time"]):
        lease = leases.setdefault(
            e["lease_id"],
            {"run_id": e["run_id"], "holder": e["holder"], "dataset_id": e["dataset_id"]},
        )
        lease["acquired"] = lease.get("acquired") or e["event_time"]
        if e["action"] == LeaseAction.RELEASE:
            lease["released"] = True
        else:
            lease["expires_at"] = max(lease.get("expires_at") or e["expires_at"], e["expires_at"])
    live = [
        Lease(
            lease_id=lease_id,
            dataset_id=lease["dataset_id"],
            run_id=lease["run_id"],
            holder=lease["holder"],
            expires_at=lease["expires_at"],
        )
        for lease_id, lease in sorted(leases.items(), key=lambda kv: kv[1]["acquired"])
        if not lease.get("released")
        and lease.get("expires_at") is not None
        and lease["expires_at"] > now
        and not is_dead(lease["holder"])
    ]
    return live[0] if live else None


def _row(store: MetadataStore, lease: Lease, action: LeaseAction, now: datetime) -> dict[str, Any]:
    return {
        "lease_id": lease.lease_id,
        "tenant_id": store.tenant,
        "dataset_id": lease.dataset_id,
        "run_id": lease.run_id,
        "holder": lease.holder,
        "action": action.value,
        "expires_at": lease.expires_at,
        "event_time": now,
    }


def _events_filter(store: MetadataStore, dataset_id: str) -> list[tuple[str, str, Any]]:
    return [
        ("event_date", ">=", store.since(LOOKBACK.days)),
        ("dataset_id", "=", dataset_id),
    ]


def current(store: MetadataStore, dataset_id: str) -> Lease | None:
    """Who holds `dataset_id` now (None when it is free)."""
    events = store.rows(TABLE, filters=_events_filter(store, dataset_id))
    return live_lease(events, store.now())


def _try_acquire(
    store: MetadataStore, dataset_id: str, run_id: str, holder: str, ttl: timedelta
) -> tuple[Lease | None, Lease | None]:
    """One compare-and-set attempt: (the lease taken, None) or (None, the lease in the way)."""
    held: list[Lease] = []

    def decide(events: list[dict[str, Any]]) -> list[Mapping[str, Any]] | None:
        now = store.now()
        other = live_lease(events, now)
        if other is not None:
            held[:] = [other]
            return None
        lease = Lease(
            lease_id=uuid.uuid4().hex,
            dataset_id=dataset_id,
            run_id=run_id,
            holder=holder,
            expires_at=now + ttl,
        )
        return [_row(store, lease, LeaseAction.ACQUIRE, now)]

    rows = store.append_if(TABLE, decide, filters=_events_filter(store, dataset_id))
    if rows is None:
        return None, held[0]
    (row,) = rows
    taken = Lease(
        lease_id=row["lease_id"],
        dataset_id=dataset_id,
        run_id=run_id,
        holder=holder,
        expires_at=row["expires_at"],
    )
    return taken, None


def acquire(
    store: MetadataStore,
    dataset_id: str,
    run_id: str,
    *,
    ttl: timedelta,
    wait: timedelta = timedelta(0),
    poll: float = 1.0,
) -> Lease:
    """Take the lease on `dataset_id` for `run_id`, waiting up to `wait` for its holder.

    Raises WriteConflict (exit code 9) naming the holder when the dataset stays taken.
    """
    deadline = time.monotonic() + wait.total_seconds()
    holder = worker_instance()
    while True:
        taken, other = _try_acquire(store, dataset_id, run_id, holder, ttl)
        if taken is not None:
            return taken
        assert other is not None
        if time.monotonic() >= deadline:
            raise WriteConflict(
                f"dataset {dataset_id} is being written by run {other.run_id} "
                f"(worker {other.holder}, lease until {other.expires_at:%Y-%m-%d %H:%M:%S} UTC)",
                where=f"{TABLE}[{dataset_id}]",
                fix="wait for that run to finish (or use `laketx run --wait SECONDS`); a lease "
                "whose holder died is freed when it expires",
                details={"holder": other.holder, "run_id": other.run_id},
            )
        time.sleep(min(poll, max(0.05, deadline - time.monotonic())))


def renew(store: MetadataStore, lease: Lease, ttl: timedelta) -> Lease:
    """Extend a lease this run still holds; WriteConflict if it was lost meanwhile."""
    renewed: list[Lease] = []

    def decide(events: list[dict[str, Any]]) -> list[Mapping[str, Any]] | None:
        now = store.now()
        live = live_lease(events, now)
        if live is None or live.lease_id != lease.lease_id:
            return None
        renewed[:] = [
            Lease(
                lease_id=lease.lease_id,
                dataset_id=lease.dataset_id,
                run_id=lease.run_id,
                holder=lease.holder,
                expires_at=now + ttl,
            )
        ]
        return [_row(store, renewed[0], LeaseAction.RENEW, now)]

    if store.append_if(TABLE, decide, filters=_events_filter(store, lease.dataset_id)) is None:
        raise WriteConflict(
            f"run {lease.run_id} lost its lease on {lease.dataset_id} (it expired)",
            where=f"{TABLE}[{lease.dataset_id}]",
            fix="retry the run; raise the lease time if steps take longer than it",
        )
    return renewed[0]


def release(store: MetadataStore, lease: Lease) -> None:
    """Give the dataset back (a blind append: releasing twice or late is harmless)."""
    store.append(TABLE, [_row(store, lease, LeaseAction.RELEASE, store.now())])
