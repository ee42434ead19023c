"""The LakeGuard metadata store: table declarations (row classes), delta-rs I/O, typed reader
and writers. Nothing in this package starts Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store.definitions import TableDef, TableKind, load_table_defs, table_def

if TYPE_CHECKING:
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


def __getattr__(name: str) -> object:
    """`StoreReader`, `MetadataStore` and `RunWriter`, loaded on first use (PEP 562)."""
    # not at the top: the reader (through the registry's recheck) sits above the catalog,
    # quality and policy packages, which import this package's lower modules (ddl, records,
    # row classes); every such import runs this file first, and must not load the catalog, nor
    # the store and its records (the alert channels, below them, import the row classes)
    if name == "StoreReader":
        from lakeguard.store.reader import StoreReader  # start-up time: see above

        return StoreReader
    if name == "MetadataStore":
        from lakeguard.store.store import MetadataStore  # start-up time: see above

        return MetadataStore
    if name == "RunWriter":
        from lakeguard.store.writer import RunWriter  # start-up time: see above

        return RunWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
