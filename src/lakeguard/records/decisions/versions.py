"""A dataset's approved version as the reader returns it, and a dataset's status (its
latest version and attempt)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lakeguard.records.decisions.rows import DataVersionRow
from lakeguard.records.rows.parsing import json_or
from lakeguard.words.vocabulary import AttemptStatus, Layer


@dataclass(frozen=True, kw_only=True, slots=True)
class ApprovedVersion:
    """One row of `data_versions`: an approved snapshot of a dataset."""

    dataset_id: str
    version: int
    snapshot_ref: str
    run_id: str
    upstream_refs: dict[str, int]
    row_count: int
    schema_hash: str | None = None
    promoted_at: datetime | None = None
    content_hash: str | None = None
    rows_written: int | None = None
    definition_hash: str | None = None  # Registry.definition_hash when it was made

    @classmethod
    def from_row(cls, row: DataVersionRow) -> ApprovedVersion:
        return cls(
            dataset_id=row.dataset_id,
            version=row.version,
            snapshot_ref=row.snapshot_ref,
            run_id=row.run_id,
            upstream_refs={k: int(v) for k, v in json_or(row.upstream_refs, {}).items()},
            row_count=row.row_count,
            schema_hash=row.schema_hash,
            promoted_at=row.promoted_at,
            content_hash=row.content_hash,
            rows_written=row.rows_written,
            definition_hash=row.definition_hash,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class DatasetStatus:
    """A registered dataset with its latest approved version and its latest attempt."""

    dataset_id: str
    layer: Layer
    table_name: str
    version: int | None = None
    snapshot_ref: str | None = None
    row_count: int | None = None
    promoted_at: datetime | None = None
    last_status: AttemptStatus | None = None
    last_run_at: datetime | None = None
    last_error: str | None = None
    trust: int | None = None  # 0..100, see lakeguard.records.trust
    stuck: str | None = None  # blocked again and again on the same input (lakeguard.records.stuck)
