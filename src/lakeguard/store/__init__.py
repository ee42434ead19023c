"""The LakeGuard metadata store: table definitions (data files), delta-rs I/O, typed reader and
writers. Nothing in this package starts Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store.definitions import TableDef, TableKind, load_table_defs, table_def
from lakeguard.store.store import MetadataStore
from lakeguard.store.writer import RunWriter

if TYPE_CHECKING:
    from lakeguard.store.reader import StoreReader

__all__ = [
    "MetadataStore",
    "RunWriter",
    "StoreReader",
    "TableDef",
    "TableKind",
    "load_table_defs",
    "table_def",
]


def __getattr__(name: str) -> object:
    """`StoreReader`, loaded on first use (PEP 562)."""
    if name == "StoreReader":
        # not at the top: the reader (through the registry's recheck) sits above the catalog,
        # quality and policy packages, which import this package's lower modules (ddl,
        # records); every such import runs this file first, and must not load the catalog
        from lakeguard.store.reader import StoreReader

        return StoreReader
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
