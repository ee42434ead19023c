"""Rewriting a metadata table into its current definition, keeping every row (what a
non-additive migration does: a rename, a type change, a new partitioning).

One code path for a local folder and an object store, with no rename: the table's own Delta
log is the switch. Three commits, each marked in its commitInfo with the migration and the step
(`laketx.migration`, `laketx.migration_step`):

1. begin: the table property `laketx.migrating` names the migration, and the append-only lock
   is lifted (`delta.appendOnly=false`; it refuses the replacing commit otherwise);
2. replace: the new rows, built in memory from the snapshot read and counted, replace every
   file, the schema and the partitioning in one overwrite commit on top of exactly the begin
   commit (a commit of anyone else in between fails it, so no row can be lost);
3. end: the property is cleared and the table's own `delta.appendOnly` is back.

While the property is set, `ensure` refuses to open the store. Interrupted anywhere, the next
`laketx migrate` first calls `resume`: after the replace it does the end step (the rewrite is
finished); before it, it undoes the begin step and the migration runs again from the start.
The replaced files stay in the folder until a VACUUM, and the history keeps the old rows
readable by version.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from deltalake import DeltaTable

from lakeguard.records.objectstore import is_remote
from lakeguard.records.table_defs import table_def
from lakeguard.records.versioning import (
    MARK_MIGRATION,
    MARK_STEP,
    MIGRATING_PROPERTY,
    MIGRATING_SUFFIX,
)
from lakeguard.store import deltars, table_replace
from lakeguard.store.arrow import to_arrow, to_rows, whole_table
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.shapes import StoredRow

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

# Between a begin commit and now only the rewrite's own commits land (the store refuses to
# open meanwhile), so its begin is among the newest few.
HISTORY_WINDOW = 50
# Where an older laketx (whose rewrite swapped two folders by renaming) built the new table.
STAGING_SUFFIX = ".migrating"


def _marker(migration: str, step: str) -> dict[str, str]:
    return {MARK_MIGRATION: migration, MARK_STEP: step}


def in_progress(configuration: Mapping[str, str | None]) -> str | None:
    """The migration rewriting a table, from its properties (None: none)."""
    return configuration.get(MIGRATING_PROPERTY) or None


def begin(table: str, location: str, migration: str, *, base: DeltaTable) -> None:
    """Mark the table as being rewritten and lift its append-only lock, in one commit on top
    of `base` (which moves to it)."""
    deltars.set_properties(
        table,
        location,
        {MIGRATING_PROPERTY: migration, "delta.appendOnly": "false"},
        marker=_marker(migration, "begin"),
        base=base,
    )


def end(
    table: str,
    location: str,
    migration: str,
    *,
    undo: bool = False,
    base: DeltaTable | None = None,
) -> None:
    """Clear the mark and put the definition's append-only lock back, in one commit (on top
    of `base` when the caller has the table at hand)."""
    append_only = str(table_def(table).append_only).lower()
    deltars.set_properties(
        table,
        location,
        {MIGRATING_PROPERTY: "", "delta.appendOnly": append_only},
        marker=_marker(migration, "undo" if undo else "end"),
        base=base,
    )


def replaced(table: str, location: str, migration: str) -> bool:
    """Whether the replacing commit of `migration` landed after its latest begin commit."""
    for commit in deltars.history(table, location, HISTORY_WINDOW):
        if commit.get(MARK_MIGRATION) == migration:
            if commit.get(MARK_STEP) == "replace":
                return True
            if commit.get(MARK_STEP) == "begin":
                return False
    return False


def _resume_renamed(location: str) -> None:
    """A rewrite by an older laketx, interrupted between its two renames (local folders only)."""
    backup = location + MIGRATING_SUFFIX
    if is_remote(location) or not os.path.exists(backup):
        return
    if deltars.is_table(location):
        shutil.rmtree(backup)  # the new table is in place: only the clean-up was left
    else:
        os.rename(backup, location)  # the old table goes back; the rewrite starts again
    shutil.rmtree(location + STAGING_SUFFIX, ignore_errors=True)


def resume(table: str, location: str) -> str | None:
    """Finish or undo a rewrite of `table` interrupted part-way; what was done (None: there
    was nothing to resume)."""
    _resume_renamed(location)
    dt = deltars.load_if_exists(table, location)
    if dt is None:
        return None
    migration = in_progress(dt.metadata().configuration)
    if migration is None:
        return None
    if replaced(table, location, migration):
        end(table, location, migration, base=dt)
        return f"{table}: finished the rewrite an interrupted run of {migration!r} left"
    end(table, location, migration, undo=True, base=dt)
    return f"{table}: undid the start of a rewrite an interrupted run of {migration!r} left"


def resumed(table: str, location: str) -> DeltaTable | None:
    """The table at `location` (None: there is none), a rewrite an interrupted run left in it
    finished or undone first (`resume`), as a migration run on its own needs.

    It is read once when no rewrite was left (under `laketx migrate`, which resumes every
    table first, always): `resume` then a read of its own was a second read of each table."""
    if not is_remote(location) and os.path.exists(location + MIGRATING_SUFFIX):
        resume(table, location)  # an older laketx's rename, cut short
    dt = deltars.load_if_exists(table, location)
    if dt is None or in_progress(dt.metadata().configuration) is None:
        return dt
    resume(table, location)
    return deltars.load(table, location)


def rewrite_table(
    store: MetadataStore,
    table: str,
    transform: Callable[[StoredRow], StoredRow],
    *,
    migration: str,
    read_at: DeltaTable | None = None,
) -> int:
    """Rewrite `table` (every tenant's rows) into its current definition, each row passed
    through `transform` (generated columns keep their values); returns the rows kept.
    `migration` names the rewrite in the table's history; `read_at` is the table as the
    caller has just read it through `resumed` (default: read it so)."""
    location = store.location(table)
    if read_at is None:
        read_at = resumed(table, location) or deltars.load(table, location)  # (missing: says so)
    tdef = table_def(table)
    generated = [c.name for c in tdef.columns if c.generated]
    read_version = read_at.version()
    old = to_rows(deltars.scan(read_at))
    # built and validated before anything is committed: a bad row leaves the table untouched
    rows = [transform({k: v for k, v in r.items() if k not in generated}) for r in old]
    data = whole_table(
        tdef, to_arrow(tdef, rows), {name: [r.get(name) for r in old] for name in generated}
    )
    if data.num_rows != len(old):
        raise MetadataStoreError(
            f"rewriting {table} built {data.num_rows} of {len(old)} rows; nothing was changed",
            where=location,
            fix="report this; the store is unchanged and still at its old version",
        )
    base = read_at
    begin(table, location, migration, base=base)  # (`base` is now at the begin commit)
    if base.version() != read_version + 1:  # someone else committed since the read
        end(table, location, migration, undo=True, base=base)
        raise _written_meanwhile(table, location)
    before = base.version()  # `base` moves to the new version once the replace is written
    try:
        version = table_replace.replace_all(
            table,
            location,
            data,
            base=base,
            partition_by=tdef.partitioned_by,
            marker=_marker(migration, "replace"),
        )
    except deltars.CasLost:
        end(table, location, migration, undo=True)
        raise _written_meanwhile(table, location) from None
    first = tdef.columns[0].name
    kept = deltars.read(table, location, columns=[first], version=version).num_rows
    if kept != len(old):
        table_replace.restore(table, location, before, _marker(migration, "restore"))
        end(table, location, migration, undo=True)
        raise MetadataStoreError(
            f"rewriting {table} kept {kept} of {len(old)} rows; the table was restored",
            where=location,
            fix="report this; the store is back at its old version",
        )
    end(table, location, migration, base=base)  # (`base` is at the replacing commit)
    return kept


def _written_meanwhile(table: str, location: str) -> MetadataStoreError:
    return MetadataStoreError(
        f"another process wrote to metadata table {table} while a migration rewrote it; "
        "nothing was changed",
        where=location,
        fix="stop every laketx process that uses this store, then run `laketx migrate` again",
    )
