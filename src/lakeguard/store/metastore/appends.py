"""Appends to the runtime tables: rows by table name, typed rows, idempotent (`txn`) and
compare-and-set appends; the gate's tables refuse every other writer."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.table_defs import table_def
from lakeguard.store import deltars
from lakeguard.store.arrow import to_arrow, to_rows
from lakeguard.store.metastore.base import CAS_ATTEMPTS, Filter, R, StoreBase
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.errors import MetadataStoreError, StoreContended
from lakeguard.words.shapes import StoredRow

# Decisions and approved versions: only lakeguard.actors.gate writes these (docs/design.md §2
# contract).
GATE_TABLES = frozenset({"promotion_status", "data_versions"})


class Appends(StoreBase):
    """Append-only writes: new rows, never a change to a stored one."""

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
                fix="ask lakeguard.actors.gate.Gate to record decisions and versions",
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
            try:
                # the snapshot this process keeps, brought up to date (not the whole log read
                # again); the table is this thread's from the read to the commit
                with (
                    deltars.guarded(table, location, "read it"),
                    SNAPSHOTS.writing(location) as snapshot,
                ):
                    current = to_rows(deltars.scan(snapshot, filters=self._filters(filters)))
                    rows = decide([row_type.from_row(r) for r in current])
                    if rows is None:
                        return None
                    data = to_arrow(tdef, [r.as_row() for r in rows])
                    deltars.append(table, location, data, base=snapshot)
            except deltars.CasLost:
                continue
            return rows
        raise StoreContended(
            f"{table} changed under {CAS_ATTEMPTS} attempts in a row",
            where=location,
            fix="too many concurrent writers; retry later",
        )
