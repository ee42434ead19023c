"""The engine's write side of the store: runtime rows and dataset leases (no Spark).

It never writes definitions (only `apply` does) nor decisions and versions (only the gate
does); the store beneath refuses both.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.runs.coordination import LeaseEventRow
from lakeguard.records.runs.records import Lease
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.store import leases
from lakeguard.store.store import MetadataStore


class RunWriter:
    """Appends the rows of runs in flight and finished, and takes and gives back leases."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store

    @property
    def tenant(self) -> str:
        return self._store.tenant

    def now(self) -> datetime:
        return self._store.now()

    def taken(self, dataset_id: str, run_ids: Sequence[str]) -> list[SourceProgressRow]:
        """The progress rows of these attempts: what they read from their sources (for a
        recovering run to finish what the crashed attempts whose versions it records left
        undone)."""
        wanted = set(run_ids)
        if not wanted:
            return []
        rows = self._store.read(SourceProgressRow, filters=[("dataset_id", "=", dataset_id)])
        return [r for r in rows if r.run_id in wanted]

    def append(self, rows: Iterable[RuntimeRow]) -> None:
        """Append typed runtime rows: one commit per table, the tables' commits concurrent."""
        self._store.append_rows(rows)

    def acquire_lease(
        self, dataset_id: str, run_id: str, *, ttl: timedelta, wait: timedelta = timedelta(0)
    ) -> Lease:
        return leases.acquire(self._store, dataset_id, run_id, ttl=ttl, wait=wait)

    def acquire_leases(
        self,
        dataset_ids: Iterable[str],
        run_id: str,
        *,
        ttl: timedelta,
        wait: timedelta = timedelta(0),
    ) -> list[Lease]:
        """All of `dataset_ids` for `run_id` in one commit, or none (see leases.acquire_all)."""
        return leases.acquire_all(self._store, dataset_ids, run_id, ttl=ttl, wait=wait)

    def renew_lease(self, lease: Lease, ttl: timedelta) -> Lease:
        return leases.renew(self._store, lease, ttl)

    def renew_leases(self, held: Sequence[Lease], ttl: timedelta) -> list[Lease]:
        return leases.renew_all(self._store, held, ttl)

    def release_lease(self, lease: Lease) -> None:
        leases.release(self._store, lease)

    def release_leases(self, held: Sequence[Lease]) -> None:
        leases.release_all(self._store, held)

    def release_rows(self, held: Sequence[Lease]) -> list[LeaseEventRow]:
        """The rows that give `held` back, to be appended with other rows (one round)."""
        return leases.release_rows(self._store, held)
