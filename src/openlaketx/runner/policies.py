"""The facts a dataset's policies are evaluated over, gathered for one batch."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from lakeguard.actors.gate import Check
from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.schema.drift import ChangeKind
from lakeguard.rules.policy.evaluate import applicable, checks
from lakeguard.rules.policy.kinds import BatchFacts
from lakeguard.rules.policy.pii import Shape, raw_pii


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
    facts = BatchFacts(
        rows=rows,
        now=now,
        own_latest=own_latest,
        raw_pii=tuple(sorted(registered_raw_pii(registry).get(dataset.dataset_id, set()))),
        drift_kinds=tuple(drift_kinds),
        profile_drift=profile_drift,
        parents_latest=lambda: {p: reader.versions.approved(p) for p in dataset.parents},
        rows_written=lambda n: [
            v.rows_written or 0 for v in reader.versions.newest(dataset.dataset_id, n)
        ],
    )
    return checks(policies, facts)


def registered_raw_pii(registry: Registry) -> dict[str, set[str]]:
    """`raw_pii` over the registered datasets and their source objects' pii tags."""
    shapes = {
        d.dataset_id: Shape(
            dataset_id=d.dataset_id,
            parents=d.parents,
            columns=d.transform.columns,
            sql=d.transform.sql,
        )
        for d in registry.datasets.values()
    }
    tagged: dict[str, set[str]] = {}
    for obj in registry.objects:
        tagged.setdefault(obj.dataset_id, set()).update(
            c.column_name.lower() for c in obj.columns if c.is_pii
        )
    return raw_pii(shapes, tagged)
