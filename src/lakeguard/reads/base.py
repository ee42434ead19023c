"""What every read of the store shares: the store itself and the kept answers
(`_memo`) of the reads a service asks again and again."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from lakeguard.records.reach import Reach
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.store.store import MetadataStore

T = TypeVar("T")


class ReaderBase:
    """One tenant's store, and answers kept while its tables stay unchanged."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store

    @property
    def tenant(self) -> str:
        return self._store.tenant

    def tenant_reach(self) -> Reach:
        """What the tenant's definitions may reach (`MetadataStore.tenant_reach`)."""
        return self._store.tenant_reach()

    def _memo(self, name: str, compute: Callable[[], tuple[T, ...]], *args: Hashable) -> list[T]:
        """`compute()`, kept until any table of this store changes or the minute turns (what
        `status` shows ages with the clock); a service asks the same again and again."""
        store = self._store
        minute = store.now().replace(second=0, microsecond=0)
        key = (store.root, store.tenant, name, args, minute)
        return list(SNAPSHOTS.memo(key, store.locations(), compute))
