"""How a staged batch meets its table in a MERGE, and the columns the catch-up fold hands the
MERGE (`catchup.py` computes them, `strategies.py` reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, SupportsInt

from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import DELETED_AT, SCD2_COLUMNS, DeleteMissing, LoadType

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ROW_HASH = "_laketx_row_hash"
IS_CURRENT = SCD2_COLUMNS[2]

APPLY = "__laketx_apply"  # merge: the key's row replaces the table's (else it only stays)
ACTION = "__laketx_action"  # scd2: what happens to the key's rows in the table
CLOSE_AT = "__laketx_close_at"
# scd2 actions on a key's rows in the table
CLOSE, CLOSE_DELETED, DELETE = "close", "close_deleted", "delete"


def _count(value: object) -> int:
    """A count as a query answers it: a number, or null (a sum over no rows)."""
    if value is None:
        return 0
    if not isinstance(value, SupportsInt):
        raise TypeError(f"a count is a number, not {value!r}")
    return int(value)


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

    @property
    def history(self) -> MergePlan:
        """The plan by which an scd2 row closes its key's current version: this one, missing
        keys aside (a version that came back after a soft delete is a new version anyway)."""
        return MergePlan(load_type=self.load_type, keys=self.keys, sequence_by=self.sequence_by)

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

    def counts(self, found: Mapping[str, object]) -> dict[str, int]:
        """What a MERGE would insert, update and delete, from a count of the batch's rows
        with no table row (`inserted`), that change theirs (`updated`) and of the table's
        live keys the batch lacks (`missing`: deleted only where missing keys are)."""
        missing = _count(found["missing"]) if self.delete_missing != DeleteMissing.NONE else 0
        return {
            "inserted": _count(found["inserted"]),
            "updated": _count(found["updated"]),
            "deleted": missing,
        }

    def current(self, table: DataFrame) -> DataFrame:
        """The table's live rows: current versions (scd2), not soft-deleted."""
        # start-up time: pyspark loads on first use, never in metadata-only commands
        from pyspark.sql import functions as F

        if self.scd2:
            table = table.where(F.col(IS_CURRENT))
        if DELETED_AT in table.columns:
            table = table.where(F.col(quote(DELETED_AT)).isNull())
        return table
