"""4: the runtime tables keep their commit files for an hour past a checkpoint
(`compaction.LOG_RETENTION`); the compaction passes remove them after that.

Nothing removed a metadata table's old commit files, and delta-rs lists the whole log
directory on every commit to a local table: at 10,000 recorded runs a one-row append to
`trust_scores` took 73 ms against 28 ms at 10 runs, and a step makes a dozen such appends
(bench/README.md, `history_growth.py`). The property is pinned like the others
(`deltars.pinned_properties`), so this is migration 1 again for the stores that ran it before
the retention was pinned. A table's next compaction pass (within five commits) removes what
has expired. The definition tables keep every commit: `laketx changes` and `replay` read them
as they were.
"""

from __future__ import annotations

from lakeguard.store.migrations import m0001_pin_table_properties
from lakeguard.store.migrations.base import Migration

MIGRATION = Migration(
    version=4,
    name="runtime tables with a log retention",
    why="a metadata table's log grew by a commit file with every append and nothing removed "
    "them, so appends grew slower with the history recorded",
    apply=m0001_pin_table_properties.MIGRATION.apply,
)
