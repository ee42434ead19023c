"""Reads of the store's tables: a tenant's rows, plain or typed, filtered, projected, as of a
time or a version, the newest per key; kept while a table's snapshot stays the newest."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from lakeguard.records.table_defs import table_def
from lakeguard.records.trust import Lineage
from lakeguard.store import deltars, joins
from lakeguard.store.arrow import to_rows
from lakeguard.store.metastore.base import D, Filter, R, StoreBase
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.shapes import StoredRow


def _frozen(filters: Sequence[Filter]) -> tuple[tuple[str, str, Any], ...]:
    """Filters as a hashable cache key (an `in` filter's values as a tuple)."""
    return tuple(
        (c, op, tuple(v) if isinstance(v, list | tuple | set | frozenset) else v)
        for c, op, v in filters
    )


class TableReads(StoreBase):
    """This tenant's rows of any table, through delta-rs and DataFusion."""

    def rows(
        self,
        table: str,
        *,
        filters: Sequence[Filter] = (),
        columns: Sequence[str] | None = None,
        all_tenants: bool = False,
        as_of: datetime | None = None,
        version: int | None = None,
        newest_first: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        per: str | None = None,
    ) -> list[StoredRow]:
        """This tenant's rows of a table (optionally filtered, optionally as they were at time
        `as_of` or at table version `version`), as plain dicts: what delta-rs reads, and all a
        projection (`columns`) can be (`read` types a runtime row, `definitions` a definition
        row).

        Filters are (column, op, value) triples; on a partition column they prune files.
        With `per` (a column), `newest_first` and `limit` pick the newest `limit` rows of each
        of its values (each dataset's latest version, say), chosen by DataFusion.
        """
        table_def(table)
        location, where = self.location(table), self._filters(filters, all_tenants)
        if as_of is not None or version is not None:
            return to_rows(
                deltars.read(
                    table,
                    location,
                    filters=where,
                    columns=columns,
                    as_of=as_of,
                    version=version,
                    newest_first=newest_first,
                    limit=limit,
                    offset=offset,
                    per=per,
                )
            )
        query = (_frozen(where), tuple(columns or ()), newest_first, limit, offset, per)
        with deltars.guarded(table, location, "read it"):
            return SNAPSHOTS.read(
                location,
                query,
                lambda snapshot: deltars.scan(
                    snapshot,
                    filters=where,
                    columns=columns,
                    newest_first=newest_first,
                    limit=limit,
                    offset=offset,
                    per=per,
                ),
            )

    def lineage(self, dataset_ids: Sequence[str]) -> dict[str, Lineage]:
        """Per dataset id: its approved versions, how many of them an allowed decision with
        evidence backs and when the newest was promoted. DataFusion joins data_versions to
        promotion_status and counts, so what crosses into Python is one row per dataset however
        long the history."""
        only = deltars.where_sql(self._filters([("dataset_id", "in", list(dataset_ids))]))
        sql = (
            "SELECT v.dataset_id AS dataset_id, COUNT(*) AS approved, "
            "COUNT(b.run_id) AS backed, MAX(v.promoted_at) AS latest "
            f"FROM (SELECT dataset_id, run_id, promoted_at FROM data_versions{only}) v "
            "LEFT JOIN (SELECT DISTINCT run_id FROM promotion_status"
            f"{only} AND allowed AND evidence <> '') b ON v.run_id = b.run_id "
            "GROUP BY v.dataset_id"
        )
        return {
            r["dataset_id"]: Lineage(r["approved"], r["backed"], r["latest"])
            for r in joins.run(self, ("data_versions", "promotion_status"), sql)
        }

    def read(
        self,
        row_type: type[R],
        *,
        filters: Sequence[Filter] = (),
        newest_first: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        per: str | None = None,
    ) -> list[R]:
        """This tenant's rows of a runtime table (every column), as its row class."""
        rows = self.rows(
            row_type.TABLE.name,
            filters=filters,
            newest_first=newest_first,
            limit=limit,
            offset=offset,
            per=per,
        )
        return [row_type.from_row(r) for r in rows]

    def definitions(
        self,
        row_type: type[D],
        filters: Sequence[Filter] = (),
        *,
        as_of: datetime | None = None,
        version: int | None = None,
        active_only: bool = True,
    ) -> list[D]:
        """This tenant's definition rows of a table, as its row class (only the active ones
        unless `active_only` is false; as they were at time `as_of` or table version
        `version`)."""
        where = [*filters, ("active", "=", True)] if active_only else list(filters)
        found = self.rows(row_type.TABLE.name, filters=where, as_of=as_of, version=version)
        return [row_type.from_row(r) for r in found]
