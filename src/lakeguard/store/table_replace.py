"""Whole-table replacement of a metadata table, for a store migration's rewrite (rewrite.py):
every row and the schema in one commit on top of an exact snapshot, and a restore of an
earlier version. Both commits carry the migration's marker in their commitInfo."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError

from lakeguard.store.deltars import CasLost, guarded, open_table
from lakeguard.store.snapshots import SNAPSHOTS


def replace_all(
    table: str,
    location: str,
    data: pa.Table,
    *,
    base: DeltaTable,
    partition_by: Sequence[str],
    marker: dict[str, str],
) -> int:
    """Replace every row and the schema (and partitioning) of a table in one commit on top of
    exactly the snapshot `base` (any other commit landing first makes it fail: `CasLost`);
    `marker` goes into the commit's commitInfo. Returns the commit's table version.

    The schema is `data`'s, field metadata (comments, generation expressions) included."""
    with guarded(table, location, "replace its rows"):
        try:
            write_deltalake(
                base,
                data,
                mode="overwrite",
                schema_mode="overwrite",
                partition_by=list(partition_by),  # empty: no partitioning any more
                commit_properties=CommitProperties(custom_metadata=marker, max_commit_retries=0),
            )
        except CommitFailedError as exc:
            raise CasLost(table) from exc
        SNAPSHOTS.touched(location)
        return int(base.version())


def restore(table: str, location: str, version: int, marker: dict[str, str]) -> None:
    """Bring the table back to its rows and schema at `version`, in one commit."""
    with guarded(table, location, "restore an earlier version"):
        open_table(location).restore(
            version, commit_properties=CommitProperties(custom_metadata=marker)
        )
    SNAPSHOTS.touched(location)
