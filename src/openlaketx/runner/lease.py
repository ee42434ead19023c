"""Holding the leases of every dataset a run writes, for the whole run, renewed in the background.

A job run takes the leases of all the datasets it will write in one commit before it writes
anything (a single-dataset run, just its own), and gives them back when it ends, whatever
happens. A heartbeat renews them all every third of their time to live; if a renewal finds a
lease lost (it expired while the process stalled), the run refuses to publish that dataset.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import timedelta
from types import TracebackType
from typing import TypeVar

from lakeguard.records.runs.coordination import LeaseEventRow
from lakeguard.records.runs.records import Lease
from lakeguard.store import RunWriter
from lakeguard.words.errors import WriteConflict

T = TypeVar("T")


class LeaseHold:
    """`with LeaseHold(...)`: the datasets are this run's until the block ends."""

    def __init__(
        self,
        writer: RunWriter,
        dataset_ids: Iterable[str],
        run_id: str,
        *,
        ttl: timedelta,
        wait: timedelta = timedelta(0),
    ) -> None:
        self._writer = writer
        self.dataset_ids = sorted(set(dataset_ids))
        self._run_id = run_id
        self._ttl = ttl
        self._wait = wait
        self._stop = threading.Event()
        self._lost: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._given_back = False
        self.leases: dict[str, Lease] = {}

    def take(self) -> None:
        """Take every lease at once (WriteConflict when one stays held) and start renewing."""
        taken = self._writer.acquire_leases(
            self.dataset_ids, self._run_id, ttl=self._ttl, wait=self._wait
        )
        self.leases = {lease.dataset_id: lease for lease in taken}
        self._thread = threading.Thread(
            target=self._heartbeat, name=f"leases-{self._run_id}", daemon=True
        )
        self._thread.start()

    def __enter__(self) -> LeaseHold:
        if self._thread is None:
            self.take()
        return self

    def _heartbeat(self) -> None:
        interval = self._ttl.total_seconds() / 3
        while not self._stop.wait(interval):
            try:
                renewed = self._writer.renew_leases(list(self.leases.values()), self._ttl)
            except WriteConflict as exc:
                self._lost = exc
                return
            except Exception:  # a failed renewal is retried at the next beat
                continue
            self.leases = {lease.dataset_id: lease for lease in renewed}

    def check(self, dataset_id: str) -> None:
        """Raise if the lease on `dataset_id` was lost, ran out or was never taken:
        publishing now could race another run.

        (Even then the publish commit's application transaction refuses a duplicate version;
        this check stops the attempt before it gets that far.)
        """
        lease = self.leases.get(dataset_id)
        expired = lease is None or lease.expires_at <= self._writer.now()
        if self._lost is not None or expired:
            raise WriteConflict(
                f"the lease on {dataset_id} was lost (or never taken) before publishing",
                where=f"dataset_leases[{dataset_id}]",
                fix="retry the run; raise LAKETX_LEASE_TTL if renewals cannot keep up",
            ) from self._lost

    def released_with(self, commit: Callable[[list[LeaseEventRow]], T]) -> T:
        """Stop renewing and give every lease back through `commit`, which appends the
        release rows with its own (the run's terminal rows: one commit round). If `commit`
        raises, the block's end still gives them back itself."""
        self._stop_renewing()
        held = list(self.leases.values()) if self._lost is None else []
        done = commit(self._writer.release_rows(held) if held else [])
        self._given_back = True
        return done

    def _stop_renewing(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_renewing()
        if self.leases and self._lost is None and not self._given_back:
            self._writer.release_leases(list(self.leases.values()))
