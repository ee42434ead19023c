"""Reads of the definition tables: the run's definitions snapshot, the datasets, the
stored definition rows as they are."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from lakeguard.reads.base import ReaderBase
from lakeguard.reads.registry import REGISTRY_TABLES, Registry
from lakeguard.records.definitions.datasets import DatasetRow
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.definitions.sets import DOCUMENT_TABLES, DefinitionSet
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.errors import NotRegisteredError


class DefinitionReads(ReaderBase):
    """The definitions in force (or stored), read from the definition tables."""

    def registry(self, as_of: datetime | None = None) -> Registry:
        """Every active definition a run needs, read concurrently, as one snapshot (of the
        definitions in force at time `as_of`: Delta time travel on the definition tables).

        The newest is kept while none of its tables changes: every call checks each table
        (as every read does), so a run never loads an older one, and a page that asks for it
        again does not rebuild and recheck every definition."""
        store = self._store
        if as_of is not None:
            return self._registry(as_of)
        key = (store.root, store.tenant, "registry", store.reach)
        locations = [store.location(t) for t in REGISTRY_TABLES]
        return SNAPSHOTS.memo(key, locations, self._registry, window=0.0)

    def _registry(self, as_of: datetime | None = None) -> Registry:
        rows = self._definitions(REGISTRY_TABLES, as_of=as_of, active_only=True)
        return Registry.from_rows(rows, reach=self._store.reach)

    def datasets(self) -> list[DatasetDef]:
        return [DatasetDef.from_row(r) for r in self._store.definitions(DatasetRow)]

    def dataset(self, dataset_id: str) -> DatasetDef:
        rows = self._store.definitions(DatasetRow, [("dataset_id", "=", dataset_id)])
        if not rows:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} is not registered",
                where="dataset_registry",
                fix="apply a metadata document that declares it",
            )
        return DatasetDef.from_row(rows[0])

    def stored_definitions(self, tables: Sequence[str] | None = None) -> DefinitionSet:
        """This tenant's stored definition rows (active or not) of `tables` (default: every
        table a document makes), as their row classes: what `export` writes back into a
        document, `recheck` checks and `plan` compares a document with."""
        return self._definitions(tables or tuple(DOCUMENT_TABLES), active_only=False)

    def _definitions(
        self, tables: Sequence[str], *, as_of: datetime | None = None, active_only: bool
    ) -> DefinitionSet:
        def read(table: str) -> list[DefinitionRow]:
            return list(
                self._store.definitions(
                    DOCUMENT_TABLES[table], as_of=as_of, active_only=active_only
                )
            )

        with ThreadPoolExecutor(max_workers=4) as pool:
            found = dict(zip(tables, pool.map(read, tables), strict=True))
        return DefinitionSet.of(row for table in tables for row in found[table])
