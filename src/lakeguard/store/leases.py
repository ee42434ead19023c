"""Dataset leases: one run per dataset at a time, recorded in `dataset_leases`.

The table is an append-only log of ACQUIRE / RENEW / RELEASE events; `live_leases` folds it
(pure). Taking leases is a compare-and-set append: the decision "every one of these datasets is
free" and the ACQUIRE rows commit on top of the same snapshot, so two runs can never both win,
and a run takes all the datasets it will write at once or none of them. Taking them all in one
commit is the fixed order that rules out a deadlock: no run ever holds some and waits for the
rest. A lease ends when released, when it expires without renewal, or when its holder is known
dead.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from lakeguard.records.runs.coordination import LeaseEventRow
from lakeguard.records.runs.records import Lease
from lakeguard.words.errors import WriteConflict
from lakeguard.words.liveness import known_dead, worker_instance
from lakeguard.words.vocabulary import LeaseAction

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

TABLE = LeaseEventRow.TABLE.name
# Events older than this are never needed to know the live lease (leases last minutes).
LOOKBACK = timedelta(days=1)


@dataclass(kw_only=True)
class _Folded:
    """One lease as its events so far say it is."""

    event: LeaseEventRow  # its first event
    expires_at: datetime | None = None
    released: bool = False


def live_leases(
    events: Iterable[LeaseEventRow],
    now: datetime,
    is_dead: Callable[[str], bool] = known_dead,
) -> dict[str, Lease]:
    """The lease that holds each dataset now (pure fold of their events; free ones absent)."""
    leases: dict[str, _Folded] = {}
    for e in sorted(events, key=lambda e: e.event_time):
        lease = leases.setdefault(e.lease_id, _Folded(event=e))
        if e.action == LeaseAction.RELEASE:
            lease.released = True
        else:
            lease.expires_at = max(lease.expires_at or e.expires_at, e.expires_at)
    live: dict[str, Lease] = {}
    for lease in sorted(leases.values(), key=lambda f: f.event.event_time):
        first = lease.event
        if (
            lease.released
            or lease.expires_at is None
            or lease.expires_at <= now
            or is_dead(first.holder)
        ):
            continue
        live.setdefault(
            first.dataset_id,
            Lease(
                lease_id=first.lease_id,
                dataset_id=first.dataset_id,
                run_id=first.run_id,
                holder=first.holder,
                expires_at=lease.expires_at,
            ),
        )
    return live


def live_lease(
    events: Iterable[LeaseEventRow],
    now: datetime,
    is_dead: Callable[[str], bool] = known_dead,
) -> Lease | None:
    """The lease that holds the (one) dataset of `events` now, if any."""
    held = live_leases(events, now, is_dead)
    return next(iter(held.values()), None)


def _row(store: MetadataStore, lease: Lease, action: LeaseAction, now: datetime) -> LeaseEventRow:
    return LeaseEventRow(
        lease_id=lease.lease_id,
        tenant_id=store.tenant,
        dataset_id=lease.dataset_id,
        run_id=lease.run_id,
        holder=lease.holder,
        action=action,
        expires_at=lease.expires_at,
        event_time=now,
    )


def _events_filter(store: MetadataStore, dataset_ids: Sequence[str]) -> list[tuple[str, str, Any]]:
    return [
        ("event_date", ">=", store.since(LOOKBACK.days)),
        ("dataset_id", "in", sorted(dataset_ids)),
    ]


def current(store: MetadataStore, dataset_id: str) -> Lease | None:
    """Who holds `dataset_id` now (None when it is free)."""
    events = store.read(LeaseEventRow, filters=_events_filter(store, [dataset_id]))
    return live_leases(events, store.now()).get(dataset_id)


def _try_acquire(
    store: MetadataStore, dataset_ids: list[str], run_id: str, holder: str, ttl: timedelta
) -> tuple[list[Lease], Lease | None]:
    """One compare-and-set attempt: (the leases taken, None) or ([], a lease in the way)."""
    held: list[Lease] = []

    def decide(events: list[LeaseEventRow]) -> list[LeaseEventRow] | None:
        now = store.now()
        others = live_leases(events, now)
        in_the_way = [others[d] for d in dataset_ids if d in others]
        if in_the_way:
            held[:] = in_the_way[:1]
            return None
        taken = [
            Lease(
                lease_id=uuid.uuid4().hex,
                dataset_id=d,
                run_id=run_id,
                holder=holder,
                expires_at=now + ttl,
            )
            for d in dataset_ids
        ]
        return [_row(store, lease, LeaseAction.ACQUIRE, now) for lease in taken]

    rows = store.append_if(LeaseEventRow, decide, filters=_events_filter(store, dataset_ids))
    if rows is None:
        return [], held[0]
    return [
        Lease(
            lease_id=row.lease_id,
            dataset_id=row.dataset_id,
            run_id=run_id,
            holder=holder,
            expires_at=row.expires_at,
        )
        for row in rows
    ], None


def acquire_all(
    store: MetadataStore,
    dataset_ids: Iterable[str],
    run_id: str,
    *,
    ttl: timedelta,
    wait: timedelta = timedelta(0),
    poll: float = 1.0,
) -> list[Lease]:
    """Take the leases on all of `dataset_ids` for `run_id` in one commit, waiting up to
    `wait` while any of them is held (all or none: nothing is held while waiting).

    Raises WriteConflict (exit code 9) naming a holder when a dataset stays taken.
    """
    wanted = sorted(set(dataset_ids))
    if not wanted:
        return []
    deadline = time.monotonic() + wait.total_seconds()
    holder = worker_instance()
    while True:
        taken, other = _try_acquire(store, wanted, run_id, holder, ttl)
        if other is None:
            return taken
        if time.monotonic() >= deadline:
            raise WriteConflict(
                f"dataset {other.dataset_id} is being written by run {other.run_id} "
                f"(worker {other.holder}, lease until {other.expires_at:%Y-%m-%d %H:%M:%S} UTC)",
                where=f"{TABLE}[{other.dataset_id}]",
                fix="wait for that run to finish (or use `laketx run --wait SECONDS`); a lease "
                "whose holder died is freed when it expires",
                details={
                    "holder": other.holder,
                    "run_id": other.run_id,
                    "dataset_id": other.dataset_id,
                },
            )
        time.sleep(min(poll, max(0.05, deadline - time.monotonic())))


def acquire(
    store: MetadataStore,
    dataset_id: str,
    run_id: str,
    *,
    ttl: timedelta,
    wait: timedelta = timedelta(0),
    poll: float = 1.0,
) -> Lease:
    """Take the lease on one dataset (see `acquire_all`)."""
    (lease,) = acquire_all(store, [dataset_id], run_id, ttl=ttl, wait=wait, poll=poll)
    return lease


def renew_all(store: MetadataStore, held: Sequence[Lease], ttl: timedelta) -> list[Lease]:
    """Extend leases this run still holds, in one commit; WriteConflict if any was lost."""
    if not held:
        return []
    renewed: list[Lease] = []
    lost: list[Lease] = []

    def decide(events: list[LeaseEventRow]) -> list[LeaseEventRow] | None:
        now = store.now()
        live = live_leases(events, now)
        gone = [h for h in held if getattr(live.get(h.dataset_id), "lease_id", None) != h.lease_id]
        if gone:
            lost[:] = gone
            return None
        renewed[:] = [
            Lease(
                lease_id=h.lease_id,
                dataset_id=h.dataset_id,
                run_id=h.run_id,
                holder=h.holder,
                expires_at=now + ttl,
            )
            for h in held
        ]
        return [_row(store, lease, LeaseAction.RENEW, now) for lease in renewed]

    filters = _events_filter(store, [h.dataset_id for h in held])
    if store.append_if(LeaseEventRow, decide, filters=filters) is None:
        first = lost[0]
        raise WriteConflict(
            f"run {first.run_id} lost its lease on {first.dataset_id} (it expired)",
            where=f"{TABLE}[{first.dataset_id}]",
            fix="retry the run; raise the lease time if steps take longer than it",
        )
    return renewed


def renew(store: MetadataStore, lease: Lease, ttl: timedelta) -> Lease:
    """Extend one lease this run still holds; WriteConflict if it was lost meanwhile."""
    (renewed,) = renew_all(store, [lease], ttl)
    return renewed


def release_rows(store: MetadataStore, held: Sequence[Lease]) -> list[LeaseEventRow]:
    """The rows that give the datasets back, for a caller that commits them with its own."""
    now = store.now()
    return [_row(store, lease, LeaseAction.RELEASE, now) for lease in held]


def release_all(store: MetadataStore, held: Sequence[Lease]) -> None:
    """Give the datasets back (a blind append: releasing twice or late is harmless)."""
    store.append_rows(release_rows(store, held))


def release(store: MetadataStore, lease: Lease) -> None:
    release_all(store, [lease])
