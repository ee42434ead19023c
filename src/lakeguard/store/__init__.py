"""The LakeGuard metadata store: table definitions (data files), create/evolve, readers/writers."""

from lakeguard.store.definitions import TableDef, TableKind, load_table_defs, table_def
from lakeguard.store.store import MetadataStore

__all__ = ["MetadataStore", "TableDef", "TableKind", "load_table_defs", "table_def"]
