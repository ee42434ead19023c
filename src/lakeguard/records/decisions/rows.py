"""The gate's own rows: approved data versions and promotion decisions (only the gate
writes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.rows.schema import Comment, RuntimeTable


@dataclass(frozen=True, kw_only=True)
class DataVersionRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="data_versions",
        comment=(
            "Approved versions of datasets: append-only, strictly increasing per dataset (seed "
            "002)."
        ),
        day="promoted_date",
        date_of="promoted_at",
        cluster_by=("tenant_id", "dataset_id"),
    )
    tenant_id: str
    dataset_id: str
    version: int
    snapshot_ref: Annotated[str, Comment("The Delta commit version of the dataset table")]
    schema_hash: str
    row_count: Annotated[int, Comment("Rows in the table at this version")]
    rows_written: Annotated[int | None, Comment("Rows the promoting batch inserted or updated")] = (
        None
    )
    upstream_refs: Annotated[
        str | None, Comment("JSON object: parent dataset id -> parent data version consumed")
    ] = None
    content_hash: Annotated[
        str | None,
        Comment(
            "Order-independent hash of the rows this version wrote (rows:sum of xxhash64 over data"
            " columns); replay compares it"
        ),
    ] = None
    run_id: str
    promoted_at: datetime
    promoted_by: Annotated[str, Comment("Job / pipeline")]
    definition_hash: Annotated[
        str | None,
        Comment("Hash of the dataset's definition, rules and source objects it was made under"),
    ] = None


@dataclass(frozen=True, kw_only=True)
class DecisionRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="promotion_status",
        comment="Gate decisions: how the control plane says yes or no (seed 002).",
        day="evaluated_date",
        date_of="evaluated_at",
        cluster_by=("tenant_id", "dataset_id", "allowed"),
    )
    decision_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    run_id: str
    from_layer: str
    to_layer: str
    allowed: bool
    reason: str
    evidence: Annotated[  # lakeguard.records.evidence.Evidence
        str | None, Comment("JSON: rule outcomes and checks behind the decision")
    ] = None
    evaluated_at: datetime

    @property
    def backed(self) -> bool:
        """An allowed decision that carries evidence (what trust's lineage part counts)."""
        return self.allowed and bool(self.evidence)
