"""The trust score of a dataset: one number from 0 to 100, and the components behind it (pure).

| component | weight | from |
|---|---|---|
| quality | 40 | mean share of rules passed over the last 10 evaluated batches |
| freshness | 20 | 1 within the SLA of the latest approved version, 0 at 7 times the SLA |
| stability | 20 | 1 / (1 + unsettled schema changes, last 10 batches + FAILED attempts, last 10) |
| lineage | 20 | share of approved versions with an allowed decision that carries evidence |

The SLA is the tightest `hours_since_approved <= N` bound of the SLA policies covering the
dataset's layer, else 24 hours (so, by default, down to 0 at 7 days).

A dataset with no approved version scores its quality and stability only (freshness and
lineage 0): trust is earned by promotions. A dataset whose attempts keep failing loses it: each
failed attempt among its last 10 counts against stability like an unsettled schema change (its
approved version grows stale meanwhile, and freshness falls too).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from lakeguard.schema.drift import DriftDecision

if TYPE_CHECKING:  # the store's reader imports this module: rows are types here, not imports
    from lakeguard.store.runtime_rows import DqResultRow, SchemaChangeRow


class Promoted(Protocol):
    """What the score reads of an approved version (a `DataVersionRow`, or its projection)."""

    @property
    def run_id(self) -> str: ...

    @property
    def promoted_at(self) -> datetime: ...


class Decided(Protocol):
    """What the score reads of a decision (a `DecisionRow`, or its projection)."""

    @property
    def run_id(self) -> str: ...

    @property
    def backed(self) -> bool: ...


@dataclass(frozen=True)
class Lineage:
    """A dataset's approved versions, how many an allowed decision with evidence backs, and
    when the newest was promoted: all the score needs of its whole history."""

    approved: int = 0
    backed: int = 0
    latest: datetime | None = None

    @classmethod
    def of(cls, versions: Iterable[Promoted], decisions: Iterable[Decided]) -> Lineage:
        """Counted from the rows (the store counts it in DataFusion: `MetadataStore.lineage`)."""
        approved = list(versions)
        backed = {d.run_id for d in decisions if d.backed}
        return cls(
            approved=len(approved),
            backed=sum(1 for v in approved if v.run_id in backed),
            latest=max((v.promoted_at for v in approved), default=None),
        )


WEIGHTS = {"quality": 0.4, "freshness": 0.2, "stability": 0.2, "lineage": 0.2}
RECENT = 10
FRESH_HOURS = 24.0
STALE_FACTOR = 7  # freshness reaches 0 at this many times the SLA


@dataclass(frozen=True, kw_only=True)
class TrustScore:
    dataset_id: str
    score: int  # 0..100
    quality: float
    freshness: float
    stability: float
    lineage: float
    sla_hours: float = FRESH_HOURS  # what freshness was measured against

    def explain(self) -> str:
        parts = ", ".join(
            f"{name} {getattr(self, name):.2f} x {int(weight * 100)}"
            for name, weight in WEIGHTS.items()
        )
        return f"{self.score}/100 = {parts} (freshness SLA {self.sla_hours:g} h)"


def _freshness(promoted_at: datetime | None, now: datetime, sla_hours: float) -> float:
    if promoted_at is None:
        return 0.0
    age = (now - promoted_at).total_seconds() / 3600
    if age <= sla_hours:
        return 1.0
    stale = STALE_FACTOR * sla_hours
    return max(0.0, 1 - (age - sla_hours) / (stale - sla_hours))


def trust_score(
    dataset_id: str,
    *,
    dq: Iterable[DqResultRow],
    changes: Iterable[SchemaChangeRow],
    versions: Iterable[Promoted] = (),
    decisions: Iterable[Decided] = (),
    lineage: Lineage | None = None,
    now: datetime,
    sla_hours: float | None = None,
    failed: int = 0,
) -> TrustScore:
    """The score of one dataset from its rows in dq_results, schema_change_log,
    data_versions and promotion_status (the last two as counted in `lineage`, when given);
    `failed`: how many of its last RECENT attempts FAILED."""
    recent = sorted(dq, key=lambda r: r.executed_at, reverse=True)[:RECENT]
    shares = [
        r.expectations_passed / max(1, r.expectations_passed + r.expectations_failed)
        for r in recent
    ]
    quality = sum(shares) / len(shares) if shares else 1.0
    runs = {r.run_id for r in recent}
    unsettled = sum(1 for c in changes if c.run_id in runs and c.decision != DriftDecision.ALLOW)
    stability = 1 / (1 + unsettled + min(max(failed, 0), RECENT))
    counted = lineage if lineage is not None else Lineage.of(versions, decisions)
    backed_share = counted.backed / counted.approved if counted.approved else 0.0
    sla = sla_hours if sla_hours and sla_hours > 0 else FRESH_HOURS
    freshness = _freshness(counted.latest, now, sla)
    parts = {
        "quality": quality,
        "freshness": freshness,
        "stability": stability,
        "lineage": backed_share,
    }
    score = round(100 * sum(WEIGHTS[k] * v for k, v in parts.items()))
    return TrustScore(dataset_id=dataset_id, score=score, sla_hours=sla, **parts)
