"""The data tables' newest state, kept open per thread.

A step opens its data tables several times: the engine to stage, publish and merge, LakeGuard
to read what a table has published (`commits.py`). Opening afresh reads the log from the last
checkpoint (up to a hundred commits: 10 ms at a dozen here), so the newest state of a local
table is kept per thread and brought up to date from the commits since (~2 ms). A kept table
whose last commit file changed or went (the folder deleted, a table made anew there) is opened
afresh: the same check as the metadata tables' (`store.kept.KeptTable`). Each thread keeps
its own: a DeltaTable is not shared between threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from deltalake import DeltaTable

from lakeguard.records.kept import KeptTable
from lakeguard.records.objectstore import is_remote, storage_options

KEPT_TABLES = 32  # newest data tables each thread keeps open
_KEPT = threading.local()


def exists(location: str) -> bool:
    """Whether a Delta table exists at `location` (local or on an object store)."""
    return bool(DeltaTable.is_deltatable(location, storage_options=storage_options(location)))


def delta_table(location: str, version: int | None = None) -> DeltaTable:
    """A data table opened by delta-rs (at `version`, or its newest: kept, see above).
    Versions asked for, and tables on an object store, are opened afresh."""
    if version is not None or is_remote(location):
        return DeltaTable(location, version=version, storage_options=storage_options(location))
    kept: OrderedDict[str, KeptTable] | None = getattr(_KEPT, "tables", None)
    if kept is None:
        kept = _KEPT.tables = OrderedDict()
    found = kept.pop(location, None) or KeptTable(location)
    kept[location] = found
    while len(kept) > KEPT_TABLES:
        kept.popitem(last=False)  # the least recently used goes first
    # the metadata cache's check: the kept commit file is the same file, and no next one
    with found.lock:  # this thread's own: never contended, kept for the class's contract
        return found.newest()
