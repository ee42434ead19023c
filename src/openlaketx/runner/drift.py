"""Schema drift of a batch, decided by its profile before anything is published.

A source's drift is found by the source reader (a CSV header, a Parquet footer, a table's
columns); a derived dataset's by comparing its batch with the schema of its last approved
version, both as its table holds them (every column nullable: what Spark infers of a query,
such as `count(*)` never null, is no drift). Each change gets its profile's decision. A type
change of a column the dataset's table already holds is blocked whatever the profile says: the
engine does not rewrite tables, and Delta's type widening is a feature the metadata writer
(delta-rs) cannot write.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lakeguard.reads.registry import Registry
from lakeguard.records.checks.result_rows import SchemaChangeRow
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.evidence import Check, CheckKind
from lakeguard.records.schema.delta_json import DeltaField
from lakeguard.records.schema.drift import (
    Change,
    ChangeKind,
    DecidedChange,
    DriftDecision,
    decide_drift,
    derived_changes,
)
from lakeguard.records.schema.fingerprint import SchemaColumn, as_table_holds, capture, from_fields
from lakeguard.words.vocabulary import Layer, is_data_column
from openlaketx.runner.batch import InputBatch

_RETYPED = (ChangeKind.TYPE_WIDENED, ChangeKind.TYPE_NARROWED, ChangeKind.TYPE_CHANGED)


@dataclass(frozen=True)
class DriftOutcome:
    """The decided changes of one source object (or of a derived dataset's batch)."""

    profile: str
    decided: list[DecidedChange]
    source_object_id: str | None = None
    live: list[SchemaColumn] | None = None

    @property
    def blocked(self) -> bool:
        return any(d.decision == DriftDecision.BLOCK for d in self.decided)

    @property
    def evolves(self) -> bool:
        """Whether the approved schema changes with this promotion."""
        return bool(self.decided) and not self.blocked


def decide(
    changes: list[Change],
    rules: dict[ChangeKind, DriftDecision],
    profile: str,
    table_types: dict[str, str] | None,
    *,
    source_object_id: str | None = None,
    live: list[SchemaColumn] | None = None,
) -> DriftOutcome:
    decided = []
    for d in decide_drift(changes, rules):
        held = (table_types or {}).get((d.change.column or "").lower())
        if d.change.kind in _RETYPED and held is not None and held != d.change.new_type:
            detail = (
                f"{d.change.detail}; " if d.change.detail else ""
            ) + f"the table holds {d.change.column} as {held}: retyping it needs a migration"
            change = Change(
                d.change.kind, d.change.column, d.change.old_type, d.change.new_type, detail
            )
            decided.append(DecidedChange(change, DriftDecision.BLOCK))
        else:
            decided.append(d)
    return DriftOutcome(profile, decided, source_object_id, live)


def checks(outcomes: list[DriftOutcome]) -> list[Check]:
    """One gate check per change: ALLOW passes, ALERT is logged, BLOCK blocks."""
    return [
        Check(
            name=f"schema:{d.change.kind.value}:{d.change.column or '*'}",
            passed=d.decision == DriftDecision.ALLOW,
            blocking=d.decision == DriftDecision.BLOCK,
            detail=f"{d.change.describe()} ({o.profile}: {d.decision.value})",
            kind=CheckKind.SCHEMA,
        )
        for o in outcomes
        for d in o.decided
    ]


def log_rows(
    outcomes: list[DriftOutcome], *, tenant: str, dataset_id: str, run_id: str, now: datetime
) -> list[SchemaChangeRow]:
    """`schema_change_log` rows: one per detected change, with its decision."""
    return [
        SchemaChangeRow(
            run_id=run_id,
            tenant_id=tenant,
            dataset_id=dataset_id,
            column_name=d.change.column,
            change_kind=d.change.kind,
            old_type=d.change.old_type,
            new_type=d.change.new_type,
            profile=o.profile,
            decision=d.decision,
            detected_at=now,
        )
        for o in outcomes
        for d in o.decided
    ]


def batch_drift(
    registry: Registry,
    dataset: DatasetDef,
    batch: InputBatch,
    approved: list[SchemaColumn] | None,
    table_fields: list[DeltaField] | None,
) -> list[DriftOutcome]:
    """The batch's schema drift, each change decided by its source's or dataset's profile
    (`approved`: the schema of the dataset's latest approved version, for a derived one;
    `table_fields`: the dataset table's schema, None when it has no table yet)."""
    table = _table_types(table_fields)
    if dataset.layer == Layer.BRONZE:
        objects = {o.source_object_id: o for o in registry.source_objects(dataset.dataset_id)}
        return [
            decide(
                s.drift,
                registry.profile(objects[s.source_object_id].schema_profile),
                objects[s.source_object_id].schema_profile,
                table,
                source_object_id=s.source_object_id,
                live=s.live,
            )
            for s in batch.sources
            if s.drift
        ]
    if approved is None or batch.frame is None:
        return []
    live = as_table_holds([c for c in capture(batch.frame.schema) if is_data_column(c.name)])
    changes = derived_changes([c for c in approved if is_data_column(c.name)], live)
    if not changes:
        return []
    profile = dataset.transform.schema_profile
    return [decide(changes, registry.profile(profile), profile, table, live=live)]


def _table_types(fields: list[DeltaField] | None) -> dict[str, str] | None:
    """The dataset table's column types by lower-case name (None: no table yet)."""
    if fields is None:
        return None
    return {c.name.lower(): c.type for c in from_fields(fields)}
