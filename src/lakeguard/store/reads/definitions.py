"""Reads of the definition tables: the run's definitions snapshot, the datasets, the
stored definition rows as they are."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from lakeguard.errors import NotRegisteredError
from lakeguard.shapes import StoredRow
from lakeguard.store.reads.base import ReaderBase
from lakeguard.store.records import DatasetDef
from lakeguard.store.registry import REGISTRY_TABLES, Registry


class DefinitionReads(ReaderBase):
    """The definitions in force (or stored), read from the definition tables."""

    def registry(self, as_of: datetime | None = None) -> Registry:
        """Every active definition a run needs, read concurrently, as one snapshot (of the
        definitions in force at time `as_of`: Delta time travel on the definition tables)."""

        def active(table: str) -> list[StoredRow]:
            return self._store.active_definitions(table, as_of=as_of)

        with ThreadPoolExecutor(max_workers=4) as pool:
            tables = pool.map(active, REGISTRY_TABLES)
            rows = dict(zip(REGISTRY_TABLES, tables, strict=True))
            return Registry.from_rows(rows, reach=self._store.reach)

    def datasets(self) -> list[DatasetDef]:
        return [DatasetDef.from_row(r) for r in self._store.active_definitions("dataset_registry")]

    def dataset(self, dataset_id: str) -> DatasetDef:
        rows = self._store.active_definitions("dataset_registry", [("dataset_id", "=", dataset_id)])
        if not rows:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} is not registered",
                where="dataset_registry",
                fix="apply a metadata document that declares it",
            )
        return DatasetDef.from_row(rows[0])

    def stored_definitions(self, tables: Sequence[str]) -> dict[str, list[StoredRow]]:
        """This tenant's stored definition rows (active or not), without `tenant_id`: plain
        rows, table by table, as `export` writes them back into a document and `recheck`
        checks them (definition tables have no row class)."""

        def read(table: str) -> list[StoredRow]:
            rows = self._store.rows(table)
            for row in rows:
                row.pop("tenant_id", None)
            return rows

        with ThreadPoolExecutor(max_workers=4) as pool:
            return dict(zip(tables, pool.map(read, tables), strict=True))
