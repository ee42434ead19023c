"""The store's migrations: numbered, one module each, run in order by `laketx migrate`.

A migration is for what `ensure` cannot do additively. Each one is idempotent (run again, it
finds its work done), and once it has run every table is stamped with its number
(`versioning.py`) and a `store_migrations` row records it. Adding one: a module here with its
`MIGRATION`, its entry in `MIGRATIONS`, and `versioning.STORE_VERSION` set to its number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.errors import MetadataStoreError
from lakeguard.liveness import worker_instance
from lakeguard.store import deltars
from lakeguard.store.migrations import (
    m0001_pin_table_properties,
    m0002_trigger_by,
    m0003_unpartitioned,
)
from lakeguard.store.migrations.base import Migration
from lakeguard.store.rewrite import resume
from lakeguard.store.runtime_rows import StoreMigrationRow
from lakeguard.store.versioning import STORE_VERSION, VERSION_PROPERTY

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

MIGRATIONS: tuple[Migration, ...] = (
    m0001_pin_table_properties.MIGRATION,
    m0002_trigger_by.MIGRATION,
    m0003_unpartitioned.MIGRATION,
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


def pending(store: MetadataStore) -> list[Step]:
    """The migrations the store still needs, in order."""
    versions = store.store_versions()
    return [
        Step(m, sorted(t for t, v in versions.items() if v < m.version))
        for m in MIGRATIONS
        if any(v < m.version for v in versions.values())
    ]


def migrate(store: MetadataStore) -> list[str]:
    """Run every pending migration in order; what each did. The store opens afterwards."""
    done: list[str] = []
    for table in store.tables():  # a rewrite interrupted part-way, finished or undone first
        resumed = resume(table, store.location(table))
        if resumed is not None:
            done.append(resumed)
    store.ensure(check_version=False)
    for step in pending(store):
        said = step.migration.apply(store)
        for table in step.tables:
            location = store.location(table)
            deltars.set_properties(table, location, {VERSION_PROPERTY: str(step.migration.version)})
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
    store.ensure()
    return done
