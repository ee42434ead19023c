"""2: `pipeline_runs.triggered_by` becomes seed 003's `trigger_by` (the table is rewritten,
every row kept)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeguard.store import deltars
from lakeguard.store.migrations.base import Migration
from lakeguard.store.rewrite import resumed, rewrite_table
from lakeguard.words.shapes import StoredRow

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

TABLE = "pipeline_runs"
VERSION = 2
NAME = "pipeline_runs.trigger_by"


def _renamed(row: StoredRow) -> StoredRow:
    out = dict(row)
    out["trigger_by"] = out.pop("triggered_by", None) or out.get("trigger_by") or "unknown"
    return out


def _apply(store: MetadataStore) -> list[str]:
    dt = resumed(TABLE, store.location(TABLE))
    if dt is None or "triggered_by" not in {name for name, _, _ in deltars.existing_columns(dt)}:
        return []
    kept = rewrite_table(store, TABLE, _renamed, migration=f"{VERSION} {NAME}", read_at=dt)
    return [f"{TABLE}: renamed triggered_by to trigger_by ({kept} rows kept)"]


MIGRATION = Migration(
    version=VERSION,
    name=NAME,
    why="seed 003 names the column trigger_by",
    apply=_apply,
)
