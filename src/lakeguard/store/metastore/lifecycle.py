"""Bringing the store's tables into being and keeping them fit: create, check and evolve
them additively on `ensure`, refuse a store of another version, compact them."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from deltalake import DeltaTable

from lakeguard.records.objectstore import is_remote
from lakeguard.records.table_defs import TableDef, load_table_defs, table_def
from lakeguard.records.versioning import (
    MIGRATING_PROPERTY,
    MIGRATING_SUFFIX,
    STORE_VERSION,
    StoreVersionError,
    check_versions,
    table_version,
)
from lakeguard.store import compaction, deltars
from lakeguard.store.ddl import ExistingColumn, plan_additive_evolution
from lakeguard.store.metastore.base import StoreBase
from lakeguard.store.snapshots import SNAPSHOTS


@dataclass
class Ensured:
    """What `ensure_for_migrate` found: each table's store version, the changes it made, and
    the tables a rewrite interrupted part-way (left as they were, without a version)."""

    versions: dict[str, int] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)


class StoreLifecycle(StoreBase):
    """Create, check, evolve and compact the store's tables."""

    def ensure(self, *, check_version: bool = True) -> list[str]:
        """Create missing tables, check existing ones, add new columns; refuse a store of
        another version (`versioning.py`) unless `check_version` is off (`laketx migrate`).

        Idempotent and safe from several processes at once (creation is a Delta commit).
        Returns a human-readable list of the changes it made.
        """
        found = self._ensure_tables(load_table_defs().values(), interrupted_ok=False)
        if check_version:
            check_versions(self.root, found.versions)
        self._ready = True
        return found.changes

    def ensure_for_migrate(self, tables: Iterable[str] | None = None) -> Ensured:
        """`ensure(check_version=False)` of `tables` (default: all) for `laketx migrate`:
        each table's version comes back (a second pass over the tables to read them costs a
        round trip or two each on an object store), and a table a rewrite left half done is
        reported instead of refused, for `migrate` to resume it (and ensure again). The
        store takes the migrations' reads and writes once none is left half done."""
        defs = load_table_defs()
        found = self._ensure_tables(
            [defs[t] for t in (tables if tables is not None else defs)], interrupted_ok=True
        )
        self._ready = not found.interrupted
        return found

    def _ensure_tables(self, tables: Iterable[TableDef], *, interrupted_ok: bool) -> Ensured:
        found = Ensured()
        with ThreadPoolExecutor(max_workers=8) as pool:
            for name, version, changes in pool.map(self._ensure_table, tables):
                found.changes += changes
                if version is None:
                    found.interrupted.append(name)
                else:
                    found.versions[name] = version
        if found.interrupted and not interrupted_ok:
            raise _interrupted(found.interrupted[0], self.location(found.interrupted[0]))
        return found

    def store_versions(self) -> dict[str, int]:
        """The store version each existing table is at."""

        def version(table: str) -> int | None:
            with deltars.kept(table, self.location(table)) as dt:
                return None if dt is None else table_version(dt.metadata().configuration)

        with ThreadPoolExecutor(max_workers=8) as pool:  # a round trip or two per table
            found = dict(zip(self.tables(), pool.map(version, self.tables()), strict=True))
        return {t: v for t, v in found.items() if v is not None}

    def _ensure_table(self, table: TableDef) -> tuple[str, int | None, list[str]]:
        """The table's name, its store version (None: a rewrite left it half done, and it was
        left as it is) and what was changed."""
        location = self.location(table.name)
        if not is_remote(location) and os.path.exists(location + MIGRATING_SUFFIX):
            return table.name, None, []
        # the process's kept snapshot: every later read and commit of the table starts from it
        with deltars.kept(table.name, location) as dt:
            if dt is not None:
                return self._check_table(table, location, dt)
            if deltars.create(table, location):
                return table.name, STORE_VERSION, [f"created {self.namespace}.{table.name}"]
        # another process created it meanwhile
        return self._check_table(table, location, deltars.load(table.name, location))

    def _check_table(
        self, table: TableDef, location: str, dt: DeltaTable
    ) -> tuple[str, int | None, list[str]]:
        """`_ensure_table` of a table that exists, `dt` its newest snapshot."""
        if dt.metadata().configuration.get(MIGRATING_PROPERTY):  # a rewrite is half done
            return table.name, None, []
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

    def open_snapshots(self) -> None:
        """Open every table's newest snapshot in this process now (`Snapshots.open`): what a
        long-lived process does before its first read needs them."""
        self._require_ready()
        SNAPSHOTS.open(self.locations())

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
                compaction.compact(deltars.load(name, location), zorder)
            SNAPSHOTS.touched(location)
            done.append(name)
        return done


def _interrupted(table: str, location: str) -> StoreVersionError:
    return StoreVersionError(
        f"a migration of {table} was interrupted",
        where=location,
        fix="run `laketx migrate` again: it finishes or undoes the interrupted step",
    )
