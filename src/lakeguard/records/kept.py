"""A Delta table kept open while it stays the newest, and the one check that says so.

The check on a local table is two `stat` calls: the commit file of the kept version is still
the same file (a table deleted and created again is not mistaken for the old one) and the next
commit file does not exist yet. Delta commits are atomic, sequential files, so this sees every
commit of any process. A table elsewhere (a URI) is brought up to date through delta-rs.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field

from deltalake import DeltaTable

from lakeguard.records.objectstore import storage_options

# a commit file's inode, modification time and size: a file written again in place within one
# clock tick keeps the first two
Identity = tuple[int, int, int]


def local_path(location: str) -> str | None:
    """The local folder of `location`, or None for a table elsewhere (a URI)."""
    if location.startswith("file://"):
        return location[len("file://") :]
    return None if "://" in location else location


def _commit_file(path: str, version: int) -> str:
    return os.path.join(path, "_delta_log", f"{version:020d}.json")


def commit_identity(path: str, version: int) -> Identity | None:
    """The identity of commit `version`'s file of the local table at `path` (None: gone)."""
    try:
        found = os.stat(_commit_file(path, version))
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


@dataclass
class KeptTable:
    """One Delta table's newest snapshot as this process last saw it: the one freshness check
    of every table kept open (the metadata tables of `store.snapshots`, the data tables of
    `lakeguard.records.data_tables`)."""

    location: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    snapshot: DeltaTable | None = None
    version: int = -1
    identity: Identity | None = None
    checked_at: float = -math.inf  # monotonic time of the last check that found it newest

    def newest(self) -> DeltaTable:
        """The table at its newest version (call with `lock` held)."""
        path = local_path(self.location)
        if self.snapshot is not None and path is not None:
            if commit_identity(path, self.version) != self.identity:
                self.snapshot = None  # deleted, or deleted and created again: not the same table
            elif not os.path.exists(_commit_file(path, self.version + 1)):
                self.checked_at = time.monotonic()
                return self.snapshot
        if self.snapshot is None:
            self.snapshot = DeltaTable(
                self.location, storage_options=storage_options(self.location)
            )
        else:
            self.snapshot.update_incremental()
        self.version = int(self.snapshot.version())
        self.identity = commit_identity(path, self.version) if path is not None else None
        self.checked_at = time.monotonic()
        return self.snapshot
