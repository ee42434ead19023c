"""The metadata store: every table of docs/design.md §3, as Delta tables written by delta-rs.

Tables are created (or checked and evolved additively) from the shipped definitions on
`ensure()`. Runtime tables are append-only: this class offers no update or delete for them, and
each carries `delta.appendOnly=true`, so even a raw writer cannot change their rows. Nothing here
starts Spark: the tables are registered by name in Spark sessions elsewhere, for reading only.

Runtime rows come and go as their typed row classes (`append_rows`, `append_if`, `read`). The
table-name-and-dict methods (`append`, `upsert`, `rows`) are the boundary with delta-rs, whose
rows are values by column name: definition rows (which have no row class), projections of a
few columns, and the checks of what a malformed row is told.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

from lakeguard.errors import AppendOnlyViolation, MetadataStoreError, WriteConflict
from lakeguard.shapes import StoredRow
from lakeguard.store import deltars, joins
from lakeguard.store.arrow import to_arrow, to_rows
from lakeguard.store.ddl import ExistingColumn, plan_additive_evolution, quote
from lakeguard.store.definitions import TableDef, load_table_defs, table_def
from lakeguard.store.objectstore import is_remote
from lakeguard.store.runtime_rows import RuntimeRow
from lakeguard.store.sameness import same_definition
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.store.versioning import (
    MIGRATING_PROPERTY,
    MIGRATING_SUFFIX,
    STORE_VERSION,
    StoreVersionError,
    check_versions,
    table_version,
)

# Decisions and approved versions: only lakeguard.gate writes these (docs/design.md §2 contract).
GATE_TABLES = frozenset({"promotion_status", "data_versions"})

Filter = deltars.Filter
CAS_ATTEMPTS = 50
R = TypeVar("R", bound=RuntimeRow)


def _frozen(filters: Sequence[Filter]) -> tuple[tuple[str, str, Any], ...]:
    """Filters as a hashable cache key (an `in` filter's values as a tuple)."""
    return tuple(
        (c, op, tuple(v) if isinstance(v, list | tuple | set | frozenset) else v)
        for c, op, v in filters
    )


def utcnow() -> datetime:
    """Timestamps in metadata are naive UTC (the session time zone is UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


class MetadataStore:
    """Reads and writes the metadata tables of one namespace for one tenant."""

    def __init__(self, namespace: str, root: str, tenant: str) -> None:
        self.namespace = namespace
        self.root = root.rstrip("/")
        self.tenant = tenant
        self._ready = False

    def as_tenant(self, tenant: str) -> MetadataStore:
        """The same tables (already ensured) seen as another tenant's: rows written through it
        are that tenant's (the home's control store keeps every tenant's API keys)."""
        other = MetadataStore(self.namespace, self.root, tenant)
        other._ready = self._ready
        return other

    # -- naming ---------------------------------------------------------------------------
    def qualified(self, table: str) -> str:
        """The name Spark sessions know the table by (`lakeguard`.`run_history`)."""
        return f"{quote(self.namespace)}.{quote(table)}"

    def location(self, table: str) -> str:
        return f"{self.root}/{table}"

    def locations(self) -> list[str]:
        """Where each of the store's tables is."""
        return [self.location(t) for t in self.tables()]

    @staticmethod
    def tables() -> list[str]:
        return sorted(load_table_defs())

    # -- lifecycle ------------------------------------------------------------------------
    def ensure(self, *, check_version: bool = True) -> list[str]:
        """Create missing tables, check existing ones, add new columns; refuse a store of
        another version (`versioning.py`) unless `check_version` is off (`laketx migrate`).

        Idempotent and safe from several processes at once (creation is a Delta commit).
        Returns a human-readable list of the changes it made.
        """
        changes: list[str] = []
        versions: dict[str, int] = {}
        with ThreadPoolExecutor(max_workers=8) as pool:
            for name, version, result in pool.map(self._ensure_table, load_table_defs().values()):
                changes += result
                versions[name] = version
        if check_version:
            check_versions(self.root, versions)
        self._ready = True
        return changes

    def store_versions(self) -> dict[str, int]:
        """The store version each existing table is at."""
        return {
            t: table_version(deltars.load(t, self.location(t)).metadata().configuration)
            for t in self.tables()
            if deltars.is_table(self.location(t))
        }

    def _ensure_table(self, table: TableDef) -> tuple[str, int, list[str]]:
        location = self.location(table.name)
        if not is_remote(location) and os.path.exists(location + MIGRATING_SUFFIX):
            raise _interrupted(table.name, location)
        if deltars.create(table, location):
            return table.name, STORE_VERSION, [f"created {self.namespace}.{table.name}"]
        dt = deltars.load(table.name, location)
        if dt.metadata().configuration.get(MIGRATING_PROPERTY):  # a rewrite is half done
            raise _interrupted(table.name, location)
        deltars.check_writable(table.name, location, dt)
        version = table_version(dt.metadata().configuration)
        if version < STORE_VERSION:
            return table.name, version, []  # its migrations, not an additive evolution, come next
        existing = [ExistingColumn(*c) for c in deltars.existing_columns(dt)]
        added = plan_additive_evolution(table, existing)
        if added:
            deltars.add_columns(table.name, location, dt, added)
            names = ", ".join(c.name for c in added)
            return table.name, version, [f"added {names} to {self.namespace}.{table.name}"]
        return table.name, version, []

    def _require_ready(self) -> None:
        if not self._ready:
            raise MetadataStoreError(
                "the metadata store is not initialised",
                fix="call MetadataStore.ensure() (Lakehouse.open does this)",
            )

    # -- writes ---------------------------------------------------------------------------
    def append(
        self,
        table: str,
        rows: Iterable[Mapping[str, Any]],
        *,
        txn: tuple[str, int] | None = None,
        _by_gate: bool = False,
    ) -> int:
        """Append rows in one Delta commit; returns how many were written.

        `txn` = (app id, version) makes the commit idempotent: it is refused as a conflict when
        that app id already committed that version. Decisions and versions: the gate only.
        """
        self._require_ready()
        tdef = table_def(table)
        if table in GATE_TABLES and not _by_gate:
            raise MetadataStoreError(
                f"{table} is written by the LakeGuard gate only",
                where=f"metadata table {table}",
                fix="ask lakeguard.gate.Gate to record decisions and versions",
            )
        if not tdef.append_only:
            raise MetadataStoreError(
                f"{table} holds definitions; they change only through apply (upsert)",
                where=f"metadata table {table}",
                fix="declare the definition in a metadata document and `laketx apply` it",
            )
        data = to_arrow(tdef, rows)
        if data.num_rows == 0:
            return 0
        deltars.append(table, self.location(table), data, txn=txn)
        return int(data.num_rows)

    def append_many(
        self, batches: Mapping[str, Iterable[Mapping[str, Any]]], *, _by_gate: bool = False
    ) -> None:
        """Append to several tables at once; each table gets exactly one commit.

        The commits run concurrently, so recording a run costs about its slowest append.
        """
        todo = {t: list(r) for t, r in batches.items()}
        todo = {t: r for t, r in todo.items() if r}
        if len(todo) <= 1:
            for table, rows in todo.items():
                self.append(table, rows, _by_gate=_by_gate)
            return
        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            futures = [pool.submit(self.append, t, r, _by_gate=_by_gate) for t, r in todo.items()]
            for f in futures:
                f.result()

    def append_rows(
        self,
        rows: Iterable[RuntimeRow],
        *,
        txn: tuple[str, int] | None = None,
        _by_gate: bool = False,
    ) -> None:
        """Append typed runtime rows: one commit per table, the tables' commits concurrent
        (with `txn`, see `append`, they must all be of one table)."""
        by_table: dict[str, list[StoredRow]] = {}
        for row in rows:
            by_table.setdefault(row.TABLE.name, []).append(row.as_row())
        if txn is None:
            self.append_many(by_table, _by_gate=_by_gate)
            return
        if len(by_table) != 1:
            raise MetadataStoreError(
                f"an idempotent append (txn {txn[0]}) is one commit of one table, "
                f"not of {sorted(by_table) or 'none'}",
                fix="append the rows of each table on their own",
            )
        ((table, batch),) = by_table.items()
        self.append(table, batch, txn=txn, _by_gate=_by_gate)

    def append_if(
        self,
        row_type: type[R],
        decide: Callable[[list[R]], Sequence[R] | None],
        *,
        filters: Sequence[Filter] = (),
    ) -> Sequence[R] | None:
        """Compare-and-set append: `decide` sees the filtered rows of one snapshot and returns
        the rows to append (or None to append nothing); they are committed on top of exactly
        that snapshot, and `decide` runs again on a fresh one whenever another commit won.
        """
        self._require_ready()
        table = row_type.TABLE.name
        tdef = table_def(table)
        location = self.location(table)
        for _ in range(CAS_ATTEMPTS):
            snapshot = deltars.load(table, location)
            with deltars.guarded(table, location, "read it"):
                current = to_rows(deltars.scan(snapshot, filters=self._filters(filters)))
            rows = decide([row_type.from_row(r) for r in current])
            if rows is None:
                return None
            try:
                data = to_arrow(tdef, [r.as_row() for r in rows])
                deltars.append(table, location, data, base=snapshot)
            except deltars.CasLost:
                continue
            return rows
        raise MetadataStoreError(
            f"{table} changed under {CAS_ATTEMPTS} attempts in a row",
            where=location,
            fix="too many concurrent writers; retry later",
            transient=True,
        )

    def upsert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert or update definition rows by their keys; unchanged rows are not touched.

        A row counts as changed when its stored content differs (`sameness.py`: a direct SQL
        edit or a soft delete is seen), so applying the same definitions twice makes no commit
        at all. A concurrent commit to the table (another document applied at the same time)
        makes it compare again and retry. Returns rows changed.
        """
        self._require_ready()
        tdef = table_def(table)
        if tdef.append_only:
            self._refuse_change(table, "upsert")
        now = utcnow()
        incoming = []
        for row in rows:
            full = {"active": True, **row, "tenant_id": self.tenant}
            full.setdefault("created_at", now)
            full["updated_at"] = now
            incoming.append(full)
        update = [c.name for c in tdef.writable_columns if c.name not in (*tdef.keys, "created_at")]
        for attempt in range(CAS_ATTEMPTS):
            stored = {tuple(r[k] for k in tdef.keys): r for r in self.rows(table)}
            changed = [
                r
                for r in incoming
                if not same_definition(stored.get(tuple(r[k] for k in tdef.keys)), r)
            ]
            if not changed:
                return 0
            try:
                deltars.merge_upsert(
                    table, self.location(table), to_arrow(tdef, changed), tdef.keys, update
                )
            except WriteConflict:
                if attempt == CAS_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
                continue
            return len(changed)
        return 0  # unreachable: the last attempt returns or raises

    def set_columns(
        self, table: str, rows: Iterable[Mapping[str, Any]], columns: Sequence[str]
    ) -> None:
        """Set `columns` of stored definition rows (found by the table's keys) and nothing
        else: a bookkeeping column such as a key's `last_used_at` is written without writing
        back, from an older read, the columns another writer changed meanwhile."""
        self._require_ready()
        tdef = table_def(table)
        if tdef.append_only:
            self._refuse_change(table, "update")
        wanted = {*tdef.keys, *columns}
        part = tdef.model_copy(
            update={"columns": tuple(c for c in tdef.columns if c.name in wanted)}
        )
        data = to_arrow(part, [{**r, "tenant_id": self.tenant} for r in rows])
        deltars.merge_update(table, self.location(table), data, tdef.keys, columns)

    def update(self, table: str, *_: Any, **__: Any) -> None:
        """Only definitions change, through `upsert`; runtime rows never do."""
        self._refuse_change(table, "update")

    def delete(self, table: str, *_: Any, **__: Any) -> None:
        """Rows are never deleted: definitions are deactivated, runtime rows are kept forever."""
        self._refuse_change(table, "delete")

    def _refuse_change(self, table: str, verb: str) -> None:
        tdef = table_def(table)
        if tdef.append_only:
            raise AppendOnlyViolation(
                f"{table} is append-only: the store never {verb}s its rows",
                where=f"metadata table {table}",
                fix="append a new row that supersedes the old one",
            )
        raise MetadataStoreError(
            f"the store does not {verb} definition rows of {table} directly",
            where=f"metadata table {table}",
            fix="re-apply the definition (upsert), or deactivate it for a soft delete",
        )

    def optimize(self, tables: Iterable[str] | None = None) -> list[str]:
        """Compact tables and co-locate rows by their usual filters (`cluster_by`).

        Compaction rewrites files without changing data (allowed on append-only tables).
        """
        self._require_ready()
        done = []
        for name in tables or self.tables():
            tdef = table_def(name)
            zorder = [c for c in tdef.cluster_by if c not in tdef.partitioned_by]
            location = self.location(name)
            with deltars.guarded(name, location, "optimize it"):
                deltars.compact(name, deltars.load(name, location), zorder)
            SNAPSHOTS.touched(location)
            done.append(name)
        return done

    # -- reads ----------------------------------------------------------------------------
    def _filters(self, filters: Sequence[Filter], all_tenants: bool = False) -> list[Filter]:
        own = [] if all_tenants else [("tenant_id", "=", self.tenant)]
        return [*own, *filters]

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
        projection (`columns`) or a definition row can be (`read` types a runtime row).

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

    def lineage(self, dataset_ids: Sequence[str]) -> list[StoredRow]:
        """Per dataset: its approved versions (`approved`), how many of them an allowed decision
        with evidence backs (`backed`) and when the newest was promoted (`latest`). DataFusion
        joins data_versions to promotion_status and counts, so what crosses into Python is one
        row per dataset however long the history."""
        only = deltars.where_sql(self._filters([("dataset_id", "in", list(dataset_ids))]))
        sql = (
            "SELECT v.dataset_id AS dataset_id, COUNT(*) AS approved, "
            "COUNT(b.run_id) AS backed, MAX(v.promoted_at) AS latest "
            f"FROM (SELECT dataset_id, run_id, promoted_at FROM data_versions{only}) v "
            "LEFT JOIN (SELECT DISTINCT run_id FROM promotion_status"
            f"{only} AND allowed AND evidence <> '') b ON v.run_id = b.run_id "
            "GROUP BY v.dataset_id"
        )
        return joins.run(self, ("data_versions", "promotion_status"), sql)

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

    def active_definitions(
        self, table: str, filters: Sequence[Filter] = (), as_of: datetime | None = None
    ) -> list[StoredRow]:
        """This tenant's active definition rows (as they were at time `as_of`)."""
        return self.rows(table, filters=[*filters, ("active", "=", True)], as_of=as_of)

    def now(self) -> datetime:
        return utcnow()

    @staticmethod
    def since(days: int, now: datetime | None = None) -> date:
        """The first partition date of a look-back window of `days` days."""
        return ((now or utcnow()) - timedelta(days=days)).date()


def _interrupted(table: str, location: str) -> StoreVersionError:
    return StoreVersionError(
        f"a migration of {table} was interrupted",
        where=location,
        fix="run `laketx migrate` again: it finishes or undoes the interrupted step",
    )
