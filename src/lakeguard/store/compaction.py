"""Compaction of the metadata tables: delta-rs ignores `delta.autoOptimize.autoCompact`, so
the store compacts a table itself as it appends to it (`after_append`), and on `laketx
optimize` (`compact` with Z-order columns).

Each pass ends with a checkpoint, and on a table that sets a log retention (the runtime
tables) with the removal of the commit files the checkpoint made useless once they are older
than it: delta-rs lists the whole log directory on every commit to a local table, so a log
nobody cleans makes every append pay for every commit the table ever had (a one-row append
18.7 ms with 647 commit files, 8.7 ms with those before the checkpoint gone; bench/README.md,
`history_growth.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from deltalake import DeltaTable
from deltalake.exceptions import CommitFailedError, DeltaError


class Tier(NamedTuple):
    """Every `every` commits, the files smaller than `target` bytes merge (bigger ones stay)."""

    every: int
    target: int


KIB = 1024
# Tiered like a log-structured merge, so that neither reads nor appends grow with history:
# - a read opens every file of a table, ~1.3 ms each (DataFusion on this machine; a 14-file
#   table read in 22 ms, the same rows in one file in 5), and a step reads its tables many
#   times, so the small files an append leaves merge often (a one-row step: ~0.1 s less with
#   5 commits between passes than with 25);
# - a pass rewrites only files below its target: without a bound, a table of 7.6 MiB (10,000
#   recorded runs) was rewritten whole, 0.36 s inside one step, so the bigger files merge in
#   rarer, wider passes.
TIERS = (Tier(5, 256 * KIB), Tier(25, 1024 * KIB), Tier(250, 8 * 1024 * KIB))
COMPACT_TARGET = TIERS[-1].target
LOG_RETENTION_PROPERTY = "delta.logRetentionDuration"
# A runtime table's rows are its history and no reader travels back in it, so its commit
# files need to outlive a checkpoint only as long as a reader that listed the log just before
# the checkpoint may still open them; an hour also leaves the last hour to time travel by hand.
LOG_RETENTION = "interval 1 hours"


def due(version: int) -> Tier | None:
    """The widest tier whose pass is due at commit `version`, if any."""
    passes = [tier for tier in TIERS if version % tier.every == 0]
    return max(passes, key=lambda tier: tier.target) if passes else None


def after_append(dt: DeltaTable, version: int) -> None:
    """Compact the table an append just committed `version` to, when a tier's pass is due."""
    tier = due(version)
    if tier is not None:
        compact(dt, target_size=tier.target)


def compact(
    dt: DeltaTable, zorder: Sequence[str] = (), *, target_size: int = COMPACT_TARGET
) -> None:
    """Best-effort compaction of the files smaller than `target_size` (with `zorder`, every
    file, clustered by those columns); a checkpoint follows, then the removal of the expired
    commit files before it where the table sets a log retention. A concurrent compaction or
    writer winning the race is fine."""
    try:
        if zorder:
            dt.optimize.z_order(list(zorder))
        else:
            dt.optimize.compact(target_size=target_size)
        dt.create_checkpoint()
    except CommitFailedError:
        return
    if LOG_RETENTION_PROPERTY in dt.metadata().configuration:
        _clean_log(dt)


def _clean_log(dt: DeltaTable) -> None:
    """Remove the table's commit files that are older than its log retention and than its
    newest checkpoint. Best effort: two processes cleaning at once race to delete the same
    files, and whatever is left the next pass removes."""
    try:
        dt.cleanup_metadata()
    except (DeltaError, OSError):
        return
