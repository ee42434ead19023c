"""1: every metadata table carries the properties the store pins (`deltars.pinned_properties`),
tables created before they were pinned included."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.records.table_defs import table_def
from lakeguard.store import deltars
from lakeguard.store.migrations.base import Migration, each_table

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore


def _apply(store: MetadataStore) -> list[str]:
    def pin(name: str) -> str | None:
        location = store.location(name)
        with deltars.kept(name, location) as dt:
            if dt is None:
                return None
            wanted = deltars.pinned_properties(table_def(name))
            have = dt.metadata().configuration
            missing = {k: v for k, v in wanted.items() if have.get(k) != v}
            if not missing:
                return None
            deltars.set_properties(name, location, missing, base=dt)
        return f"{name}: set {', '.join(f'{k}={v}' for k, v in sorted(missing.items()))}"

    return [said for said in each_table(pin, store.tables()) if said]


MIGRATION = Migration(
    version=1,
    name="pin table properties",
    why="tables keep the properties that keep them append-only where they must be and "
    "writable by delta-rs, whoever else writes to them",
    apply=_apply,
)
