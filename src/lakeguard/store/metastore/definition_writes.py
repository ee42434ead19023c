"""Writes of definition rows: upsert by key (only the rows that changed), set a few
columns; every other change of a row is refused with what to do instead."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.sameness import same_definition
from lakeguard.records.table_defs import table_def
from lakeguard.store import deltars
from lakeguard.store.arrow import to_arrow
from lakeguard.store.metastore.base import CAS_ATTEMPTS, utcnow
from lakeguard.store.metastore.table_reads import TableReads
from lakeguard.words.errors import AppendOnlyViolation, MetadataStoreError, WriteConflict


class DefinitionWrites(TableReads):
    """Definition rows change by key, through `upsert`; runtime rows never change."""

    def upsert(self, table: str, rows: Iterable[DefinitionRow]) -> int:
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
            if row.TABLE.name != table:
                raise MetadataStoreError(
                    f"a {type(row).__name__} is a row of {row.TABLE.name}, not of {table}",
                    where=f"metadata table {table}",
                    fix=f"upsert rows of {table}'s own row class",
                )
            full = {"active": True, **row.as_row(), "tenant_id": self.tenant}
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
