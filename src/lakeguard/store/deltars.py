"""The metadata store's engine: delta-rs operations on one metadata table (the I/O edge).

Every metadata read and write goes through here, in milliseconds and without a JVM. Spark only
reads these tables (registered by name in its sessions); it never writes them, so each table
has exactly one writer engine. delta-rs ignores `delta.autoOptimize.autoCompact`, so the store
compacts its own tables as it appends (`compaction.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import pyarrow as pa
from deltalake import (
    CommitProperties,
    DeltaTable,
    Field,
    QueryBuilder,
    Schema,
    Transaction,
    write_deltalake,
)
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from lakeguard.records.features import unwritable_features
from lakeguard.records.objectstore import is_remote, storage_options
from lakeguard.records.table_defs import ColumnDef, TableDef
from lakeguard.records.versioning import STORE_VERSION, VERSION_PROPERTY
from lakeguard.store import compaction
from lakeguard.store.arrow import delta_field, delta_schema_json, type_text
from lakeguard.store.filters import Filter, where_sql
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.errors import LakeTxError, MetadataStoreError, WriteConflict, first_line
from lakeguard.words.shapes import StoredRow

OBJECT_STORE_FIX = (
    "check the object store's endpoint, region and credentials (LAKETX_S3_*, "
    "docs/object-store.md) and that the bucket exists"
)


class CasLost(Exception):
    """Another commit landed on the table since the snapshot a compare-and-set append read."""


@contextmanager
def guarded(table: str, location: str, action: str) -> Iterator[None]:
    """Turn delta-rs failures into store errors that name the table and say how to fix."""
    try:
        yield
    except LakeTxError:
        raise
    except CasLost:
        raise
    except TableNotFoundError as exc:
        raise MetadataStoreError(
            f"metadata table {table} is missing (while trying to {action})",
            where=location,
            fix="run `laketx init` to create it; restore the folder from a backup to keep its rows",
        ) from exc
    except CommitFailedError as exc:
        raise WriteConflict(
            f"a concurrent commit to metadata table {table} won the race ({action})",
            where=location,
            fix="retry; the other writer's commit is intact",
            details={"cause": first_line(exc, 500)},
        ) from exc
    except OSError as exc:
        if not is_remote(location):
            raise _unreadable(table, location, action, exc) from exc
        # on an object store this is the network or the server, not a corrupt table
        raise MetadataStoreError(
            f"the object store refused or did not answer for metadata table {table} "
            f"({action}): {first_line(exc, 500)}",
            where=location,
            fix=OBJECT_STORE_FIX,
        ) from exc
    except (DeltaError, ValueError, pa.ArrowException) as exc:
        raise _unreadable(table, location, action, exc) from exc


def _unreadable(table: str, location: str, action: str, exc: Exception) -> MetadataStoreError:
    return MetadataStoreError(
        f"metadata table {table} cannot be read or written ({action}): {first_line(exc, 500)}",
        where=location,
        fix="the table's Delta log or files may be corrupt: restore the folder from a backup, "
        "or move it away and run `laketx init` to start it empty",
    )


def open_table(location: str) -> DeltaTable:
    """The table at its newest version, local or on an object store."""
    return DeltaTable(location, storage_options=storage_options(location))


def is_table(location: str) -> bool:
    try:
        return bool(DeltaTable.is_deltatable(location, storage_options=storage_options(location)))
    except OSError as exc:  # an object store that refuses us (keys, endpoint, bucket)
        raise MetadataStoreError(
            f"cannot reach the metadata table: {first_line(exc, 500)}",
            where=location,
            fix=OBJECT_STORE_FIX,
        ) from exc


def pinned_properties(table: TableDef) -> dict[str, str]:
    """The table properties every metadata table carries (set at creation, and by the store
    migrations that pin them on tables created before). Deletion vectors stay off, so a Spark
    UPDATE or DELETE (a direct edit of a definition) rewrites files and leaves the protocol
    delta-rs writes. A runtime table keeps its commit files for `compaction.LOG_RETENTION`
    only (its rows are its history); a definition table keeps all of them (`laketx changes`
    and `replay` read it as it was)."""
    pinned = {
        "laketx.kind": table.kind.value,
        "delta.appendOnly": str(table.append_only).lower(),
        "delta.enableDeletionVectors": "false",
    }
    if table.append_only:
        pinned[compaction.LOG_RETENTION_PROPERTY] = compaction.LOG_RETENTION
    return pinned


def create(table: TableDef, location: str) -> bool:
    """Create the table if it does not exist; True when this call created it."""
    if is_table(location):
        return False
    configuration: dict[str, str | None] = {
        **pinned_properties(table),
        VERSION_PROPERTY: str(STORE_VERSION),
    }
    try:
        DeltaTable.create(
            location,
            Schema.from_json(delta_schema_json(table)),
            mode="ignore",
            partition_by=list(table.partitioned_by) or None,
            name=table.name,
            description=table.comment,
            configuration=configuration,
            raise_if_key_not_exists=False,
            storage_options=storage_options(location),
        )
    except (CommitFailedError, DeltaError) as exc:
        if is_table(location):  # another process created it a moment ago
            return False
        raise MetadataStoreError(
            f"cannot create metadata table {table.name}: {first_line(exc, 500)}",
            where=location,
            fix="check that LAKETX_HOME is writable",
        ) from exc
    return True


def load(table: str, location: str, version: int | None = None) -> DeltaTable:
    with guarded(table, location, "open it"):
        return DeltaTable(location, version=version, storage_options=storage_options(location))


def load_if_exists(table: str, location: str) -> DeltaTable | None:
    """The table at its newest version, None when there is none: one read, where `is_table`
    then `load` was two (on an object store each is a listing and a round trip or more)."""
    with guarded(table, location, "open it"):
        try:
            return DeltaTable(location, storage_options=storage_options(location))
        except TableNotFoundError:
            return None


@contextmanager
def kept(table: str, location: str) -> Iterator[DeltaTable | None]:
    """The newest snapshot this process keeps of the table (None: there is none), for this
    caller alone while the block runs, to read and commit on top of. Opened once per process,
    then brought up to date, where `load_if_exists` opens it afresh each time (on an object
    store ~20 ms and a listing and reads of the log, against one listing)."""
    with guarded(table, location, "open it"), SNAPSHOTS.held(location) as dt:
        yield dt


def check_writable(table: str, location: str, dt: DeltaTable) -> None:
    """Refuse a table that uses a feature delta-rs cannot write, before anything is written."""
    protocol = dt.protocol()
    schema = json.loads(dt.schema().to_json())
    features = unwritable_features(
        min_writer_version=protocol.min_writer_version,
        writer_features=protocol.writer_features,
        configuration=dt.metadata().configuration,
        field_metadata=[f.get("metadata") or {} for f in schema.get("fields", [])],
    )
    if features:
        raise MetadataStoreError(
            f"metadata table {table} uses {', '.join(features)}, which the store's writer "
            "(delta-rs) cannot write; nothing was written",
            where=location,
            fix="metadata tables must not use identity columns, CLUSTER BY, row tracking or "
            "domain metadata: recreate the table without them (see docs/architecture.md)",
            details={"table": table, "features": features},
        )


def existing_columns(dt: DeltaTable) -> list[tuple[str, str, bool]]:
    """(name, type, nullable) of every column of a table, types spelt like the definitions."""
    fields = json.loads(dt.schema().to_json()).get("fields", [])
    return [(f["name"], type_text(f["type"]), bool(f.get("nullable", True))) for f in fields]


def add_columns(table: str, location: str, dt: DeltaTable, columns: Sequence[ColumnDef]) -> None:
    fields = [Field.from_json(json.dumps(delta_field(c))) for c in columns]
    with guarded(table, location, "add columns"):
        dt.alter.add_columns(fields)
    SNAPSHOTS.touched(location)


def append(
    table: str,
    location: str,
    data: pa.Table,
    *,
    txn: tuple[str, int] | None = None,
    base: DeltaTable | None = None,
) -> int:
    """Append in one commit; returns the commit's table version.

    `txn` = (app id, version) records a Delta application transaction: the append is refused as
    a conflict when that app id already committed that version (or does so concurrently).
    `base` makes the append a compare-and-set: it commits on top of exactly that snapshot, or
    raises `CasLost` when any other commit landed first.
    """
    with guarded(table, location, "append"), _on_top(location, base) as target:
        if txn is not None:
            done = target.transaction_version(txn[0])
            if done is not None and done >= txn[1]:
                raise WriteConflict(
                    f"{txn[0]} already committed version {txn[1]} to {table}",
                    where=location,
                    fix="another run recorded it first; retry to build on top of it",
                )
        props = CommitProperties(
            app_transactions=[Transaction(txn[0], txn[1])] if txn else None,
            max_commit_retries=0 if base is not None else None,
        )
        try:
            write_deltalake(target, data, mode="append", commit_properties=props)
        except CommitFailedError as exc:
            if base is not None:
                raise CasLost(table) from exc
            raise
        version = int(target.version())
        compaction.after_append(target, version)
        SNAPSHOTS.touched(location)
        return version


@contextmanager
def _on_top(location: str, base: DeltaTable | None) -> Iterator[DeltaTable]:
    """What an append commits on top of: `base` (a compare-and-set), else the newest snapshot
    this process keeps of the table (a few new commit files read, not the whole log)."""
    if base is not None:
        yield base
        return
    with SNAPSHOTS.writing(location) as newest:
        yield newest


def merge_upsert(
    table: str, location: str, data: pa.Table, keys: Sequence[str], update: Sequence[str]
) -> None:
    """Insert rows whose keys are new, update the `update` columns of rows whose keys exist
    (merged on the snapshot this process keeps of the table, brought up to date first)."""
    predicate = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    with guarded(table, location, "upsert"), SNAPSHOTS.writing(location) as target:
        (
            target.merge(data, predicate, source_alias="s", target_alias="t")
            .when_matched_update({c: f"s.{c}" for c in update})
            .when_not_matched_insert_all()
            .execute()
        )
    SNAPSHOTS.touched(location)


def merge_update(
    table: str, location: str, data: pa.Table, keys: Sequence[str], update: Sequence[str]
) -> None:
    """Update the `update` columns of rows whose keys exist; insert nothing (on the kept
    snapshot, as `merge_upsert`)."""
    predicate = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    with guarded(table, location, "update"), SNAPSHOTS.writing(location) as target:
        (
            target.merge(data, predicate, source_alias="s", target_alias="t")
            .when_matched_update({c: f"s.{c}" for c in update})
            .execute()
        )
    SNAPSHOTS.touched(location)


def scan(
    dt: DeltaTable,
    *,
    filters: Sequence[Filter] = (),
    columns: Sequence[str] | None = None,
    newest_first: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    per: str | None = None,
) -> pa.Table:
    """Rows of one table snapshot through delta-rs' DataFusion (files pruned by partition);
    optionally the top `limit` by `newest_first` descending, sorted by DataFusion itself, and
    with `per` (a column) the top `limit` of each of its values: DataFusion picks them, so
    what crosses into Python does not grow with the table's history."""
    for name in (newest_first, per):
        if name is not None and not name.replace("_", "").isalnum():
            raise ValueError(f"unsupported order column {name!r}")
    if per is not None:
        if newest_first is None or limit is None:
            raise ValueError("`per` needs `newest_first` and `limit`")
        names = list(columns) if columns else [f.name for f in dt.schema().fields]
        select = ", ".join(f'"{c}"' for c in names)
        sql = (
            f'SELECT {select} FROM (SELECT {select}, ROW_NUMBER() OVER (PARTITION BY "{per}" '
            f'ORDER BY "{newest_first}" DESC NULLS LAST) AS "_laketx_n" FROM t'
            f'{where_sql(filters)}) WHERE "_laketx_n" > {int(offset)} '
            f'AND "_laketx_n" <= {int(offset) + int(limit)}'
        )
        return pa.table(QueryBuilder().register("t", dt).execute(sql).read_all())
    select = ", ".join(f'"{c}"' for c in columns) if columns else "*"
    sql = f"SELECT {select} FROM t{where_sql(filters)}"
    if newest_first is not None:
        sql += f' ORDER BY "{newest_first}" DESC'
    if limit is not None:
        sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
    reader = QueryBuilder().register("t", dt).execute(sql)
    return pa.table(reader.read_all())


def query(tables: dict[str, DeltaTable], sql: str) -> pa.Table:
    """A DataFusion query over several table snapshots, each registered under its name (the
    store builds `sql`; its filters come from `where_sql`)."""
    builder = QueryBuilder()
    for name, dt in tables.items():
        builder = builder.register(name, dt)
    return pa.table(builder.execute(sql).read_all())


def read(
    table: str,
    location: str,
    *,
    filters: Sequence[Filter] = (),
    columns: Sequence[str] | None = None,
    version: int | None = None,
    as_of: datetime | None = None,
    newest_first: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    per: str | None = None,
) -> pa.Table:
    """Rows of a table (at `version`, or as it was at time `as_of`), filtered."""
    with guarded(table, location, "read it"):
        dt = DeltaTable(location, version=version, storage_options=storage_options(location))
        if as_of is not None:
            dt.load_as_version(as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC))
        return scan(
            dt,
            filters=filters,
            columns=columns,
            newest_first=newest_first,
            limit=limit,
            offset=offset,
            per=per,
        )


def history(table: str, location: str, limit: int | None) -> list[StoredRow]:
    with guarded(table, location, "read its history"):
        return open_table(location).history(limit)


def set_properties(
    table: str,
    location: str,
    properties: dict[str, str],
    *,
    marker: dict[str, str] | None = None,
    base: DeltaTable | None = None,
) -> None:
    """Set table properties in one commit (a metadata-only change: no data file is touched);
    `marker` goes into the commit's commitInfo, for whoever reads the history. The commit
    goes on top of `base` when the caller has just read the table (default: read it)."""
    with guarded(table, location, "set its properties"):
        (base or open_table(location)).alter.set_table_properties(
            properties,
            raise_if_not_exists=False,
            commit_properties=CommitProperties(custom_metadata=marker) if marker else None,
        )
    SNAPSHOTS.touched(location)
