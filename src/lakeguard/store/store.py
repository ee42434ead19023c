"""The LakeGuard metadata store: every table of DESIGN.md §3, as Delta tables in one namespace.

Tables are created (or registered by location, and evolved additively) from the shipped
definitions on `ensure()`. Runtime tables are append-only: this class offers no update or delete
for them, and each carries `delta.appendOnly=true`, so even raw SQL cannot change their rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lakeguard.errors import AppendOnlyViolation, MetadataStoreError
from lakeguard.store import ddl
from lakeguard.store.definitions import TableDef, load_table_defs, table_def
from lakeguard.store.registration import forget_if_elsewhere, register_table
from lakeguard.store.rows import normalize_rows

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType


# Decisions and approved versions: only lakeguard.gate writes these (DESIGN.md §2 contract).
GATE_TABLES = frozenset({"promotion_status", "data_versions"})


def utcnow() -> datetime:
    """Timestamps in metadata are naive UTC (the session time zone is UTC)."""
    return datetime.now(UTC).replace(tzinfo=None)


def struct_type(table: TableDef) -> StructType:
    from pyspark.sql import types as T

    spark_types: dict[str, T.DataType] = {
        "string": T.StringType(),
        "boolean": T.BooleanType(),
        "int": T.IntegerType(),
        "long": T.LongType(),
        "double": T.DoubleType(),
        "date": T.DateType(),
        "timestamp": T.TimestampType(),
        "array<string>": T.ArrayType(T.StringType()),
    }
    return T.StructType(
        [T.StructField(c.name, spark_types[c.type], c.nullable) for c in table.writable_columns]
    )


def delta_table_exists(spark: SparkSession, location: str) -> bool:
    from delta.tables import DeltaTable

    return bool(DeltaTable.isDeltaTable(spark, location))


class MetadataStore:
    """Reads and writes the metadata tables of one namespace for one tenant."""

    def __init__(self, spark: SparkSession, namespace: str, root: str, tenant: str) -> None:
        self.spark = spark
        self.namespace = namespace
        self.root = root.rstrip("/")
        self.tenant = tenant
        self._ready = False

    # -- naming ---------------------------------------------------------------------------
    def qualified(self, table: str) -> str:
        return f"{ddl.quote(self.namespace)}.{ddl.quote(table)}"

    def location(self, table: str) -> str:
        return f"{self.root}/{table}"

    # -- lifecycle ------------------------------------------------------------------------
    def ensure(self) -> list[str]:
        """Create missing tables, register existing ones by name, add new columns.

        Idempotent and safe to run from several processes at once: creation goes through
        Delta's optimistic commit, and registration only touches this session's catalog.
        Returns a human-readable list of the changes it made.
        """
        changes: list[str] = []
        self.spark.sql(
            f"CREATE DATABASE IF NOT EXISTS {ddl.quote(self.namespace)} "
            f"LOCATION {ddl.sql_string(self.root)}"
        )
        # Each table costs a Delta log read; several at once keep a cold start short.
        with ThreadPoolExecutor(max_workers=6) as pool:
            for result in pool.map(self._ensure_table, load_table_defs().values()):
                changes += result
        self._ready = True
        return changes

    def _ensure_table(self, table: TableDef) -> list[str]:
        name, location = self.qualified(table.name), self.location(table.name)
        if not delta_table_exists(self.spark, location):
            forget_if_elsewhere(self.spark, self.namespace, table.name, location)
            try:
                self.spark.sql(ddl.create_table_sql(table, name, location))
                return [f"created {self.namespace}.{table.name}"]
            except Exception as exc:  # another process may have created it a moment ago
                if not delta_table_exists(self.spark, location):
                    raise MetadataStoreError(
                        f"cannot create metadata table {table.name}: {exc}",
                        where=location,
                        fix="check that LAKETX_HOME is writable",
                    ) from exc
        register_table(self.spark, self.namespace, table.name, location)
        existing = [
            ddl.ExistingColumn(f.name, f.dataType.simpleString(), f.nullable)
            for f in self.spark.table(name).schema.fields
        ]
        added = ddl.plan_additive_evolution(table, existing)
        if added:
            self.spark.sql(ddl.add_columns_sql(name, added))
            return [f"added {', '.join(c.name for c in added)} to {self.namespace}.{table.name}"]
        return []

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

        `txn` = (app id, version) makes the commit idempotent: Delta skips it when that app id
        already committed that version. Decisions and versions are written by the gate only.
        """
        self._require_ready()
        tdef = table_def(table)
        if table in GATE_TABLES and not _by_gate:
            raise MetadataStoreError(
                f"{table} is written by the LakeGuard gate only",
                where=f"metadata table {table}",
                fix="ask lakeguard.gate.Gate to record decisions and versions",
            )
        data = normalize_rows(tdef, rows)
        if not data:
            return 0
        frame = self.spark.createDataFrame(data, struct_type(tdef))
        writer = frame.write.format("delta").mode("append")
        if txn is not None:
            writer = writer.option("txnAppId", txn[0]).option("txnVersion", str(txn[1]))
        writer.save(self.location(table))
        return len(data)

    def append_many(
        self, batches: Mapping[str, Iterable[Mapping[str, Any]]], *, _by_gate: bool = False
    ) -> None:
        """Append to several tables at once; each table still gets exactly one commit.

        The commits run concurrently (Spark accepts jobs from several threads), which keeps the
        cost of recording a run close to that of its slowest single append.
        """
        todo = {t: list(r) for t, r in batches.items() if r}
        if len(todo) <= 1:
            for table, rows in todo.items():
                self.append(table, rows, _by_gate=_by_gate)
            return
        with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
            futures = [pool.submit(self.append, t, r, _by_gate=_by_gate) for t, r in todo.items()]
            for f in futures:
                f.result()

    def upsert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert or update definition rows by their keys; unchanged rows are not touched.

        A row counts as changed when its `definition_hash` differs from the stored one, so
        applying the same definitions twice makes no commit at all. Returns rows changed.
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
        stored = {
            tuple(r[k] for k in tdef.keys): r["definition_hash"]
            for r in self.read(table)
            .where(f"tenant_id = {ddl.sql_string(self.tenant)}")
            .select(*tdef.keys, "definition_hash")
            .collect()
        }
        changed = [
            r
            for r in incoming
            if stored.get(tuple(r[k] for k in tdef.keys)) != r["definition_hash"]
        ]
        if not changed:
            return 0
        from delta.tables import DeltaTable

        source = self.spark.createDataFrame(normalize_rows(tdef, changed), struct_type(tdef))
        cond = " AND ".join(f"t.{ddl.quote(k)} = s.{ddl.quote(k)}" for k in tdef.keys)
        updates: dict[str, str | Column] = {
            ddl.quote(c.name): f"s.{ddl.quote(c.name)}"
            for c in tdef.writable_columns
            if c.name not in (*tdef.keys, "created_at")
        }
        (
            DeltaTable.forPath(self.spark, self.location(table))
            .alias("t")
            .merge(source.alias("s"), cond)
            .whenMatchedUpdate(set=updates)
            .whenNotMatchedInsertAll()
            .execute()
        )
        return len(changed)

    def update(self, table: str, *_: Any, **__: Any) -> None:
        """Only definitions change, through `upsert`/`deactivate`; runtime rows never do."""
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
        """Compact runtime tables and co-locate rows by their usual filters (`cluster_by`).

        OPTIMIZE rewrites files without changing data (allowed on append-only tables).
        """
        self._require_ready()
        done = []
        for name in tables or [n for n, t in load_table_defs().items() if t.append_only]:
            tdef = table_def(name)
            zorder = [c for c in tdef.cluster_by if c not in tdef.partitioned_by]
            sql = f"OPTIMIZE {self.qualified(name)}"
            if zorder:
                sql += f" ZORDER BY ({', '.join(ddl.quote(c) for c in zorder)})"
            self.spark.sql(sql)
            done.append(name)
        return done

    # -- reads ----------------------------------------------------------------------------
    def read(self, table: str) -> DataFrame:
        """The whole table (all tenants) as a DataFrame."""
        table_def(table)
        return self.spark.table(self.qualified(table))

    def tenant_rows(self, table: str, where: str | None = None) -> DataFrame:
        """This tenant's rows, optionally filtered by a trusted, internally built predicate."""
        frame = self.read(table).where(f"tenant_id = {ddl.sql_string(self.tenant)}")
        if where:
            frame = frame.where(where)
        return frame

    def active_definitions(self, table: str, where: str | None = None) -> list[dict[str, Any]]:
        """This tenant's active definition rows, as plain dicts."""
        frame = self.tenant_rows(table, where).where("active")
        return [r.asDict(recursive=True) for r in frame.collect()]

    def now(self) -> datetime:
        return utcnow()
