"""The metadata store: every table of docs/design.md §3, as Delta tables written by delta-rs.

Tables are created (or checked and evolved additively) from the shipped definitions on
`ensure()`. Runtime tables are append-only: this class offers no update or delete for them, and
each carries `delta.appendOnly=true`, so even a raw writer cannot change their rows. Nothing here
starts Spark: the tables are registered by name in Spark sessions elsewhere, for reading only.

Rows come and go as their typed row classes: runtime rows (`append_rows`, `append_if`, `read`)
and definition rows (`upsert`, `definitions`). The table-name-and-dict methods (`append`,
`rows`, `set_columns`) are the boundary with delta-rs, whose rows are values by column name:
projections of a few columns, a few bookkeeping columns set, and the checks of what a
malformed row is told.

Each concern is a mixin of `lakeguard.store.metastore`, composed here.
"""

from __future__ import annotations

from lakeguard.store.metastore.appends import Appends
from lakeguard.store.metastore.base import utcnow
from lakeguard.store.metastore.definition_writes import DefinitionWrites
from lakeguard.store.metastore.lifecycle import StoreLifecycle

# `utcnow` is named here too: the service, the tests and the benchmarks take the store's clock
# from this module
__all__ = ["MetadataStore", "utcnow"]


class MetadataStore(StoreLifecycle, Appends, DefinitionWrites):
    """Reads and writes the metadata tables of one namespace for one tenant."""
