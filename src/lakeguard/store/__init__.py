"""The LakeGuard metadata store: delta-rs I/O, the tables' DDL, writes, leases, migrations
(the layer above the records, below the rules). Nothing in this package starts Spark."""

from __future__ import annotations

from lakeguard.store.store import MetadataStore
from lakeguard.store.writer import RunWriter

__all__ = ["MetadataStore", "RunWriter"]
