"""How a staged batch meets its table in a MERGE, and the columns the catch-up fold hands the
MERGE (`catchup.py` computes them, `strategies.py` reads them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.store.ddl import quote
from lakeguard.vocabulary import DELETED_AT, SCD2_COLUMNS, DeleteMissing, LoadType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ROW_HASH = "_laketx_row_hash"
IS_CURRENT = SCD2_COLUMNS[2]

APPLY = "__laketx_apply"  # merge: the key's row replaces the table's (else it only stays)
ACTION = "__laketx_action"  # scd2: what happens to the key's rows in the table
CLOSE_AT = "__laketx_close_at"
# scd2 actions on a key's rows in the table
CLOSE, CLOSE_DELETED, DELETE = "close", "close_deleted", "delete"


@dataclass(frozen=True, kw_only=True)
class MergePlan:
    """How a staged batch meets its table: keys, history, late rows, missing keys."""

    load_type: LoadType  # MERGE or SCD2
    keys: list[str]
    sequence_by: str | None = None
    delete_missing: DeleteMissing = DeleteMissing.NONE
    # the parent versions a catch-up batch spans, oldest first (see catchup.py)
    versions: tuple[int, ...] = ()

    @property
    def scd2(self) -> bool:
        return self.load_type == LoadType.SCD2

    @property
    def marks(self) -> list[str]:
        """Columns of an scd2 MERGE source that carry a row's keys when it acts on the table's
        rows of that key, and are null on a row to insert (so that it matches nothing)."""
        return [f"__laketx_key_{i}" for i in range(len(self.keys))]

    def on(self, source_keys: list[str] | None = None) -> str:
        source_keys = source_keys or self.keys
        return " AND ".join(
            f"t.{quote(k)} <=> s.{quote(s)}" for k, s in zip(self.keys, source_keys, strict=True)
        )

    def changed(self) -> str:
        """Target row t differs from source row s (and s is not older, with sequence_by)."""
        text = f"t.{ROW_HASH} IS DISTINCT FROM s.{ROW_HASH}"
        if self.sequence_by:
            seq = quote(self.sequence_by)
            text += f" AND (t.{seq} IS NULL OR s.{seq} >= t.{seq})"
        if self.delete_missing == DeleteMissing.SOFT:
            text = f"({text}) OR t.{quote(DELETED_AT)} IS NOT NULL"  # a deleted key came back
        return text

    def current(self, table: DataFrame) -> DataFrame:
        """The table's live rows: current versions (scd2), not soft-deleted."""
        # start-up time: pyspark loads on first use, never in metadata-only commands
        from pyspark.sql import functions as F

        if self.scd2:
            table = table.where(F.col(IS_CURRENT))
        if DELETED_AT in table.columns:
            table = table.where(F.col(quote(DELETED_AT)).isNull())
        return table
