"""Holding a dataset's lease for the length of one attempt, renewed in the background.

The lease is taken before the attempt reads anything and given back when it ends, whatever
happens. A heartbeat renews it every third of its time to live; if a renewal finds the lease
lost (it expired while the process stalled), the attempt refuses to publish.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from types import TracebackType

from lakeguard.errors import WriteConflict
from lakeguard.store import RunWriter
from lakeguard.store.records import Lease


class LeaseHold:
    """`with LeaseHold(...)`: the dataset is this attempt's until the block ends."""

    def __init__(
        self,
        writer: RunWriter,
        dataset_id: str,
        run_id: str,
        *,
        ttl: timedelta,
        wait: timedelta = timedelta(0),
    ) -> None:
        self._writer = writer
        self._dataset_id = dataset_id
        self._run_id = run_id
        self._ttl = ttl
        self._wait = wait
        self._stop = threading.Event()
        self._lost: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.lease: Lease | None = None

    def __enter__(self) -> LeaseHold:
        self.lease = self._writer.acquire_lease(
            self._dataset_id, self._run_id, ttl=self._ttl, wait=self._wait
        )
        self._thread = threading.Thread(
            target=self._heartbeat, name=f"lease-{self._dataset_id}", daemon=True
        )
        self._thread.start()
        return self

    def _heartbeat(self) -> None:
        interval = self._ttl.total_seconds() / 3
        while not self._stop.wait(interval):
            assert self.lease is not None
            try:
                self.lease = self._writer.renew_lease(self.lease, self._ttl)
            except WriteConflict as exc:
                self._lost = exc
                return
            except Exception:  # a failed renewal is retried at the next beat
                continue

    def check(self) -> None:
        """Raise if the lease was lost or ran out: publishing now could race another run.

        (Even then the publish commit's application transaction refuses a duplicate version;
        this check stops the attempt before it gets that far.)
        """
        expired = self.lease is not None and self.lease.expires_at <= self._writer.now()
        if self._lost is not None or expired:
            raise WriteConflict(
                f"the lease on {self._dataset_id} was lost before publishing",
                where=f"dataset_leases[{self._dataset_id}]",
                fix="retry the run; raise LAKETX_LEASE_TTL if renewals cannot keep up",
            ) from self._lost

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.lease is not None and self._lost is None:
            self._writer.release_lease(self.lease)
