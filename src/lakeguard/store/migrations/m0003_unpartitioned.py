"""3: the runtime tables lose their date partition (every row kept; the date column stays, a
generated column that date filters still read).

Partitioned by day, a table holds at least one file per day of its history, and every read
that is not a date window opens every one of them: at 10,000 recorded runs over 70 days a
dataset's newest version took ~0.1 s to find in 85 files, ~0.01 s in one file of the same
rows. Unpartitioned, compaction keeps a table to a few files whatever the days it spans
(bench/README.md, `history_growth.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.records.table_defs import load_table_defs
from lakeguard.store.migrations.base import Migration, each_table
from lakeguard.store.rewrite import resumed, rewrite_table

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

VERSION = 3
NAME = "runtime tables without a date partition"


def _apply(store: MetadataStore) -> list[str]:
    def unpartition(name: str) -> str | None:
        dt = resumed(name, store.location(name))
        if dt is None or not dt.metadata().partition_columns:
            return None  # created, or rewritten by an earlier migration, without one
        kept = rewrite_table(store, name, dict, migration=f"{VERSION} {NAME}", read_at=dt)
        return f"{name}: rewritten without its date partition ({kept} rows kept)"

    runtime = sorted(name for name, table in load_table_defs().items() if table.append_only)
    return [said for said in each_table(unpartition, runtime) if said]


MIGRATION = Migration(
    version=VERSION,
    name=NAME,
    why="a date partition makes every read open one file per day of history: reads that "
    "are not date windows grew with the days recorded",
    apply=_apply,
)
