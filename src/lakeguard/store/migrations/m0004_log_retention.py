"""4: the runtime tables keep their commit files for an hour past a checkpoint
(`compaction.LOG_RETENTION`), and the ones already expired go now.

Nothing removed a metadata table's old commit files, and delta-rs lists the whole log
directory on every commit to a local table: at 10,000 recorded runs a one-row append to
`trust_scores` took 18.7 ms with its 647 commit files against 8.7 ms with those before its
checkpoint gone, and a step makes a dozen such appends (bench/README.md, `history_growth.py`).
The definition tables keep every commit: `laketx changes` and `replay` read them as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store import compaction, deltars
from lakeguard.store.definitions import load_table_defs
from lakeguard.store.migrations.base import Migration, each_table
from lakeguard.store.migrations.m0001_pin_table_properties import pin

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

VERSION = 4
NAME = "runtime tables with a log retention"


def _apply(store: MetadataStore) -> list[str]:
    def retain(name: str) -> str | None:
        said = pin(store, name)
        dt = deltars.load_if_exists(name, store.location(name))
        if dt is None:
            return said
        dt.create_checkpoint()  # the commits before it are what expires
        compaction.clean_log(dt)
        return said

    runtime = sorted(name for name, table in load_table_defs().items() if table.append_only)
    return [said for said in each_table(retain, runtime) if said]


MIGRATION = Migration(
    version=VERSION,
    name=NAME,
    why="a metadata table's log grew by a commit file with every append and nothing removed "
    "them, so appends grew slower with the history recorded",
    apply=_apply,
)
