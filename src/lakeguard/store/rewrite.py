"""Rewriting a metadata table into its current definition, keeping every row (what a
non-additive migration does: a rename, a type change, a new partitioning).

The new table is built beside the old one, checked to hold as many rows, then swapped in by
two renames. A run interrupted anywhere is finished or undone by running it again: the old
table waits under `<table>.pre-migration` until the new one is in place, and `ensure` refuses
to open a store while it is there. Local file systems only (a rename is not atomic on an
object store).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING

from lakeguard.errors import MetadataStoreError
from lakeguard.shapes import StoredRow
from lakeguard.store import deltars
from lakeguard.store.arrow import to_arrow, to_rows
from lakeguard.store.definitions import table_def
from lakeguard.store.objectstore import is_remote
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.store.versioning import MIGRATING_SUFFIX

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

STAGING_SUFFIX = ".migrating"


def resume(location: str) -> None:
    """Finish or undo a rewrite interrupted at the swap."""
    backup = location + MIGRATING_SUFFIX
    if not os.path.exists(backup):
        return
    if deltars.is_table(location):
        shutil.rmtree(backup)  # the new table is in place: only the clean-up was left
    else:
        os.rename(backup, location)  # the old table goes back; the rewrite starts again


def rewrite_table(
    store: MetadataStore, table: str, transform: Callable[[StoredRow], StoredRow]
) -> int:
    """Rewrite `table` (every tenant's rows) into its current definition, each row passed
    through `transform`; returns the rows kept."""
    location = store.location(table)
    if is_remote(location):
        # the swap below is two renames, and a rename on an object store is a copy
        raise MetadataStoreError(
            f"rewriting metadata table {table} on an object store is not supported yet",
            where=location,
            fix="run this migration on a local copy of the metadata and upload it back, or "
            "wait for the object-store migration (issue 20)",
        )
    resume(location)
    tdef = table_def(table)
    generated = {c.name for c in tdef.columns if c.generated}
    rows = [
        transform({k: v for k, v in row.items() if k not in generated})
        for row in to_rows(deltars.read(table, location))
    ]
    staging = location + STAGING_SUFFIX
    shutil.rmtree(staging, ignore_errors=True)
    deltars.create(tdef, staging)
    if rows:
        deltars.append(table, staging, to_arrow(tdef, rows))
    kept = len(to_rows(deltars.read(table, staging, columns=[tdef.columns[0].name])))
    if kept != len(rows):
        shutil.rmtree(staging)
        raise MetadataStoreError(
            f"rewriting {table} kept {kept} of {len(rows)} rows; the table was left as it was",
            where=location,
            fix="report this; the store is unchanged and still at its old version",
        )
    os.rename(location, location + MIGRATING_SUFFIX)
    os.rename(staging, location)
    shutil.rmtree(location + MIGRATING_SUFFIX)
    SNAPSHOTS.touched(location)
    return kept
