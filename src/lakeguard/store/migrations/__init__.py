"""The store's migrations: numbered, one module each, run in order by `laketx migrate`.

A migration is for what `ensure` cannot do additively. Each one is idempotent (run again, it
finds its work done), and a `store_migrations` row records it once it has run; once every
pending one has, each table is stamped with the store's version (`versioning.py`). Adding
one: a module here with its `MIGRATION`, its entry in `MIGRATIONS`, and
`versioning.STORE_VERSION` set to its number.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.records.upkeep import StoreMigrationRow
from lakeguard.records.versioning import STORE_VERSION, VERSION_PROPERTY
from lakeguard.store import deltars
from lakeguard.store.migrations import (
    m0001_pin_table_properties,
    m0002_trigger_by,
    m0003_unpartitioned,
    m0004_log_retention,
)
from lakeguard.store.migrations.base import Migration, each_table
from lakeguard.store.rewrite import resume
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.liveness import worker_instance

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

MIGRATIONS: tuple[Migration, ...] = (
    m0001_pin_table_properties.MIGRATION,
    m0002_trigger_by.MIGRATION,
    m0003_unpartitioned.MIGRATION,
    m0004_log_retention.MIGRATION,
)


def _check_registry() -> None:
    numbers = [m.version for m in MIGRATIONS]
    if numbers != list(range(1, len(numbers) + 1)) or numbers[-1] != STORE_VERSION:
        raise MetadataStoreError(
            f"migrations are numbered {numbers}; STORE_VERSION is {STORE_VERSION}",
            where="lakeguard/store/migrations/__init__.py",
            fix="number migrations 1, 2, ... in order and set STORE_VERSION to the last",
        )


_check_registry()


@dataclass(frozen=True)
class Step:
    """A migration `laketx migrate` would run, and the tables still before it."""

    migration: Migration
    tables: list[str]


def pending(store: MetadataStore, versions: Mapping[str, int] | None = None) -> list[Step]:
    """The migrations the store still needs, in order; from each table's store `versions`
    when the caller has just read them (default: read them)."""
    if versions is None:
        versions = store.store_versions()
    return [
        Step(m, sorted(t for t, v in versions.items() if v < m.version))
        for m in MIGRATIONS
        if any(v < m.version for v in versions.values())
    ]


def _stamper(store: MetadataStore, version: int) -> Callable[[str], None]:
    """Stamps a table of `store` as migrated to `version`."""
    stamp = {VERSION_PROPERTY: str(version)}

    def stamped(table: str) -> None:
        location = store.location(table)
        with deltars.kept(table, location) as dt:
            deltars.set_properties(table, location, stamp, base=dt)

    return stamped


def migrate(store: MetadataStore) -> list[str]:
    """Run every pending migration in order; what each did. The store opens afterwards."""
    # One pass reads every table (creating the missing ones): its version, and whether a
    # rewrite was interrupted part-way; those are finished or undone before anything else.
    # (A pass each for the resume, the creation and the versions was three reads of every
    # table: on an object store each is a round trip or two.)
    found = store.ensure_for_migrate()
    resumed = each_table(lambda t: resume(t, store.location(t)), found.interrupted)
    done = [r for r in resumed if r is not None]
    if found.interrupted:
        again = store.ensure_for_migrate(found.interrupted)
        if again.interrupted:  # resume ends every rewrite it finds: not expected
            raise MetadataStoreError(
                f"the interrupted rewrite of {again.interrupted[0]} is still marked as running",
                where=store.location(again.interrupted[0]),
                fix="report this; no migration was run, the store is as the last run left it",
            )
        found.versions.update(again.versions)
    recorded = {int(r["version"]) for r in store.rows("store_migrations", columns=["version"])}
    steps = pending(store, found.versions)
    for step in steps:
        said = step.migration.apply(store)
        # recorded once: a process that dies before the stamps below runs the migrations
        # again (each finds its work done) and stamps, without a second row
        if step.migration.version not in recorded:
            row = StoreMigrationRow(
                version=step.migration.version,
                name=step.migration.name,
                tenant_id=store.tenant,
                applied_at=store.now(),
                worker=worker_instance(),
                changes=json.dumps(said),
            )
            store.append_rows([row])
        done += [f"{step.migration.version} {step.migration.name}: {s}" for s in said] or [
            f"{step.migration.version} {step.migration.name}: nothing to change"
        ]
    # one stamp per table, once every migration has run (a commit per table and migration was
    # most of a migrate's commits): until then the store still refuses to open
    behind = sorted({table for step in steps for table in step.tables})
    each_table(_stamper(store, STORE_VERSION), behind)
    store.ensure()
    return done
