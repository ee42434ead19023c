"""The promotion gate: LakeGuard's decision, and the only writer of decisions and versions.

`decide` is pure: rule outcomes (and other checks) in, a Decision out. `Gate` records decisions
in `promotion_status` and approved versions in `data_versions`; OpenLakeTx asks, never writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.reads.reader import StoreReader
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.evidence import Check, CheckRecord, Evidence
from lakeguard.records.quality.outcome import RuleOutcome
from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.records.sources.rows import SourceColumnRow
from lakeguard.words.errors import MetadataStoreError, WriteConflict
from lakeguard.words.hashing import to_json

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

__all__ = ["Check", "Decision", "Gate", "decide"]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    from_layer: str
    to_layer: str
    evidence: Evidence = field(default_factory=Evidence)


def decide(
    outcomes: list[RuleOutcome],
    *,
    from_layer: str,
    to_layer: str,
    checks: list[Check] | None = None,
    droppable: frozenset[str] = frozenset(),
) -> Decision:
    """Allowed unless a FAIL rule is breached or a blocking check failed. WARN only logs.

    FAIL rules in `droppable` (row rules of a source that drops failing rows) do not block:
    their failing rows are set aside to quarantine and the rest is promoted.
    """
    checks = checks or []
    dropped = [o for o in outcomes if o.outcome == "FAIL" and o.rule_id in droppable]
    failed = [o for o in outcomes if o.outcome == "FAIL" and o.rule_id not in droppable]
    warned = [o for o in outcomes if o.outcome == "WARN"]
    blocking = [c for c in checks if not c.passed and c.blocking]
    alerts = [c for c in checks if not c.passed and not c.blocking]
    evidence = Evidence(
        rules={o.rule_id: o.outcome for o in outcomes},
        checks=tuple(
            CheckRecord(
                name=c.name, kind=c.kind, result=c.result, detail=c.detail, blocking=c.blocking
            )
            for c in checks
        ),
        dropped_rules=tuple(o.rule_id for o in dropped),
    )
    if failed or blocking:
        parts = [f"FAIL rule {o.describe()}" for o in failed]
        parts += [f"check {c.name}: {c.detail}" for c in blocking]
        return Decision(False, "blocked by " + "; ".join(parts), from_layer, to_layer, evidence)
    reason = f"{len(outcomes)} rule(s) evaluated, none breached a FAIL threshold"
    if dropped:
        reason = (
            f"{len(outcomes)} rule(s) evaluated; rows failing "
            + ", ".join(o.describe() for o in dropped)
            + " were dropped to quarantine"
        )
    if warned or alerts:
        notes = [f"WARN {o.describe()}" for o in warned] + [
            f"ALERT {c.name}: {c.detail}" for c in alerts
        ]
        reason += "; logged: " + "; ".join(notes)
    return Decision(True, reason, from_layer, to_layer, evidence)


class Gate:
    """Records decisions and versions for one tenant's store (the only writer of both)."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store
        self.reader = StoreReader(store)

    def decision_row(self, dataset_id: str, run_id: str, decision: Decision) -> DecisionRow:
        """The `promotion_status` row for a decision (recorded with `record`)."""
        return DecisionRow(
            tenant_id=self.store.tenant,
            dataset_id=dataset_id,
            run_id=run_id,
            from_layer=decision.from_layer,
            to_layer=decision.to_layer,
            allowed=decision.allowed,
            reason=decision.reason,
            evidence=to_json(decision.evidence.to_json()),
            evaluated_at=self.store.now(),
        )

    def record(self, decision_row: DecisionRow) -> None:
        """Record a decision (its rule outcomes are in `evidence`) before any write happens.

        The detailed evidence (dq results, profile, schema) is appended by the engine with the
        attempt's terminal rows: one commit round fewer on the critical path.
        """
        self.store.append_rows([decision_row], _by_gate=True)

    def latest(self, dataset_id: str, version: int | None = None) -> ApprovedVersion | None:
        """The latest approved version of a dataset (or approved `version`); None if none."""
        return self.reader.versions.approved(dataset_id, version)

    def evolve_source_schema(self, source_object_id: str, live: list[SchemaColumn]) -> int:
        """Make `live` the approved schema of a source object, after a promotion its profile
        allowed: new columns added, changed ones updated, missing ones deactivated. Returns the
        column definitions changed. (Re-applying an older document reverts it: keep the
        document up to date.)"""
        stored = {
            r.column_name.lower(): r
            for r in self.store.definitions(
                SourceColumnRow, [("source_object_id", "=", source_object_id)]
            )
        }
        rows = []
        for ordinal, col in enumerate(live):
            before = stored.pop(col.name.lower(), None)
            row = SourceColumnRow(
                source_object_id=source_object_id,
                column_name=col.name if before is None else before.column_name,
                data_type=col.type,
                nullable=col.nullable,
                ordinal=ordinal,
            )
            if before is not None:  # what the document said of the column stays
                row = row.replaced(
                    dq_rule_set=before.dq_rule_set,
                    dq_severity=before.dq_severity,
                    is_pii=before.is_pii,
                    pii_tags=before.pii_tags,
                    description=before.description,
                )
            rows.append(row.hashed())
        for gone in stored.values():
            rows.append(gone.replaced(active=False, created_at=None, updated_at=None).hashed())
        return self.store.upsert("source_object_columns", rows)

    def record_version(
        self,
        *,
        dataset_id: str,
        version: int,
        snapshot_ref: str,
        schema_hash: str,
        row_count: int,
        rows_written: int,
        upstream_refs: dict[str, int],
        run_id: str,
        promoted_by: str,
        previous: ApprovedVersion | None,
        content_hash: str | None = None,
        definition_hash: str | None = None,
    ) -> None:
        """Append an approved version; it must be exactly one above `previous` (the latest).

        Two writers racing for the same version are serialised by a Delta application
        transaction (app id = the dataset, txn version = the data version): the store refuses
        the loser's append, before or during its commit, as a transient conflict.
        """
        expected = (previous.version if previous else 0) + 1
        if version != expected:
            raise MetadataStoreError(
                f"version {version} of {dataset_id} is not the next one ({expected})",
                where="data_versions",
                fix="versions are strictly increasing; re-plan the promotion",
            )
        row = DataVersionRow(
            tenant_id=self.store.tenant,
            dataset_id=dataset_id,
            version=version,
            snapshot_ref=snapshot_ref,
            schema_hash=schema_hash,
            row_count=row_count,
            rows_written=rows_written,
            upstream_refs=to_json(upstream_refs),
            content_hash=content_hash,
            definition_hash=definition_hash,
            run_id=run_id,
            promoted_at=self.store.now(),
            promoted_by=promoted_by,
        )
        app_id = f"laketx.data_versions.{self.store.tenant}.{dataset_id}"
        try:
            self.store.append_rows([row], txn=(app_id, version), _by_gate=True)
        except WriteConflict as exc:
            raise WriteConflict(
                f"another run recorded version {version} of {dataset_id} first",
                where="data_versions",
                fix="retry the run; it will promote on top of the newer version",
            ) from exc
