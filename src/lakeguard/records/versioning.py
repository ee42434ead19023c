"""The version of the store's own schema, and the error a store of another version gets.

Each metadata table carries the store version it was created at, or last migrated to, as the
table property `laketx.store_version` (a table created before versions existed has none: 0).
Additive changes (a new table, a new nullable column) need no version: `ensure` makes them.
Anything else — a rename, a type change, a new partitioning, a table property every table must
carry — is a numbered migration (`lakeguard/store/migrations`), run by `laketx migrate`.
"""

from __future__ import annotations

from collections.abc import Mapping

from lakeguard.words.errors import MetadataStoreError

# The version this code writes and needs; the number of the latest migration.
STORE_VERSION = 4
VERSION_PROPERTY = "laketx.store_version"
# A table being rewritten by a migration (`rewrite.py`) names the migration in this property
# until the rewrite is done; the store does not open meanwhile.
MIGRATING_PROPERTY = "laketx.migrating"
# The keys a migration's commits carry in their commitInfo: the migration, and the step.
MARK_MIGRATION = "laketx.migration"
MARK_STEP = "laketx.migration_step"
# Where an older laketx kept a table's old self while it swapped in the rewritten one.
MIGRATING_SUFFIX = ".pre-migration"


class StoreVersionError(MetadataStoreError):
    """The store's tables are at another version than this code's."""


def table_version(configuration: Mapping[str, str | None]) -> int:
    """The store version a table's properties say (0: created before versions existed)."""
    found = configuration.get(VERSION_PROPERTY)
    return int(found) if found and found.isdigit() else 0


def check_versions(root: str, versions: dict[str, int]) -> None:
    """Refuse a store whose tables are older (or newer) than this code, saying what to run."""
    oldest, newest = min(versions.values()), max(versions.values())
    if oldest < STORE_VERSION:
        behind = sorted(t for t, v in versions.items() if v < STORE_VERSION)
        raise StoreVersionError(
            f"the metadata store at {root} is at version {oldest}; this laketx needs version "
            f"{STORE_VERSION} ({len(behind)} table(s) to migrate, e.g. {behind[0]})",
            where=root,
            fix="run `laketx migrate` (it keeps every row; `laketx migrate --plan` lists the "
            "steps first)",
            details={"store_version": oldest, "code_version": STORE_VERSION, "tables": behind},
        )
    if newest > STORE_VERSION:
        raise StoreVersionError(
            f"the metadata store at {root} is at version {newest}, newer than this laketx "
            f"({STORE_VERSION})",
            where=root,
            fix="upgrade laketx to the version that migrated the store",
            details={"store_version": newest, "code_version": STORE_VERSION},
        )
