"""Compaction of the metadata tables: delta-rs ignores `delta.autoOptimize.autoCompact`, so
the store compacts a table itself as it appends to it (`after_append`), and on `laketx
optimize` (`compact` with Z-order columns)."""

from __future__ import annotations

from collections.abc import Sequence

from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError

COMPACT_EVERY = 25
# Compaction merges files smaller than its target, and leaves bigger ones alone: the tables
# have no date partition, so without a bound it would rewrite a whole table, a cost growing
# with history. Tiered, so that no append pays for rewriting megabytes: every COMPACT_EVERY
# commits the small files merge into files of up to COMPACT_SMALL (the new rows, a few KiB a
# commit, and at most one file below it), every COMPACT_WIDE_EVERY those merge into files of
# up to COMPACT_TARGET. With one tier of 8 MiB, a table of 7.6 MiB (10,000 recorded runs) was
# rewritten whole every 25 commits: 0.36 s inside one step, where the small tier takes 0.04 s.
COMPACT_SMALL = 1024 * 1024
COMPACT_TARGET = 8 * 1024 * 1024
COMPACT_WIDE_EVERY = 10 * COMPACT_EVERY


def after_append(dt: DeltaTable, version: int) -> None:
    """Compact the table an append just committed `version` to, when that version's tier is
    due (see above)."""
    if version % COMPACT_EVERY == 0:
        wide = version % COMPACT_WIDE_EVERY == 0
        compact(dt, target_size=COMPACT_TARGET if wide else COMPACT_SMALL)


def compact(
    dt: DeltaTable, zorder: Sequence[str] = (), *, target_size: int = COMPACT_TARGET
) -> None:
    """Best-effort compaction of the files smaller than `target_size` (with `zorder`, every
    file, clustered by those columns); a checkpoint follows. A concurrent compaction or
    writer winning the race is fine."""
    try:
        if zorder:
            dt.optimize.z_order(list(zorder))
        else:
            dt.optimize.compact(target_size=target_size)
        dt.create_checkpoint()
    except CommitFailedError:
        return
