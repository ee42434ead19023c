"""The metrics a dataset's policies are evaluated over, gathered for one batch."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from lakeguard.gate import Check
from lakeguard.policy.evaluate import (
    applicable,
    checks,
    profile_metrics_none,
    schema_metrics,
    sla_metrics,
    volume_metrics,
)
from lakeguard.policy.pii import registered_raw_pii
from lakeguard.schema.drift import ChangeKind
from lakeguard.store import StoreReader
from lakeguard.store.records import ApprovedVersion, DatasetDef, PolicyDef
from lakeguard.store.registry import Registry


def policy_checks(
    registry: Registry,
    reader: StoreReader,
    dataset: DatasetDef,
    *,
    rows: int,
    own_latest: ApprovedVersion | None,
    drift_kinds: Iterable[ChangeKind],
    now: datetime,
    profile_drift: dict[str, float] | None = None,
) -> list[Check]:
    """A check per policy covering the dataset's layer (none: no policy applies)."""
    policies = applicable(registry.policies, dataset.layer)
    if not policies:
        return []
    raw = sorted(registered_raw_pii(registry).get(dataset.dataset_id, set()))
    kinds = list(drift_kinds)

    def metrics(policy: PolicyDef) -> dict[str, float]:
        if policy.policy_type == "PII":
            return {"raw_pii_columns": float(len(raw))}
        if policy.policy_type == "SCHEMA":
            return schema_metrics(kinds)
        if policy.policy_type == "PROFILE":
            return profile_drift or profile_metrics_none()
        if policy.policy_type == "SLA":
            parents = {p: reader.approved(p) for p in dataset.parents}
            return sla_metrics(own_latest, parents, now)
        window = int(policy.parameters.get("window", 5))
        history = [v.rows_written or 0 for v in reader.versions(dataset.dataset_id)][-window:]
        return volume_metrics(rows, history)

    found = checks(policies, metrics)
    return [
        Check(c.name, c.passed, c.blocking, f"{c.detail}; raw pii: {', '.join(raw)}")
        if raw and not c.passed and c.detail.startswith("PII")
        else c
        for c in found
    ]
