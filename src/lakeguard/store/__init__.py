"""The LakeGuard metadata store: table definitions (data files), delta-rs I/O, typed reader and
writers. Nothing in this package starts Spark."""

from lakeguard.store.definitions import TableDef, TableKind, load_table_defs, table_def
from lakeguard.store.reader import StoreReader
from lakeguard.store.store import MetadataStore
from lakeguard.store.writer import RunWriter

__all__ = [
    "MetadataStore",
    "RunWriter",
    "StoreReader",
    "TableDef",
    "TableKind",
    "load_table_defs",
    "table_def",
]
