"""The trust score of a dataset: how far the approved version read today can be trusted, as one
number from 0 to 100 and the components behind it (pure).

| component | weight | from |
|---|---|---|
| quality | 40 | each rule's failing share against its threshold and severity (below) |
| freshness | 20 | 1 within the SLA of the latest approved version, 0 at 7 x the SLA |
| stability | 20 | 1 / (1 + unsettled schema changes + FAILED attempts not held), last 10 |
| lineage | 20 | share of approved versions with an allowed decision with evidence |

Quality and the schema changes read the last 10 *promoted* batches; the failed attempts are
counted among the last 10 attempts that were not held.

Quality: each rule of a promoted batch earns a credit, then the batch the mean of its rules'
credits, FAIL rules weighing 2 and WARN rules 1 (a FAIL rule guards the version more), and
quality is the mean over the batches (1 when none was promoted):

- no failing row, or its failing rows were set aside (`fail_behavior: drop`): 1;
- a failing share s within the rule's threshold t (as it judged: lakeguard.records.judged): 1 - s,
  the rows that fail it are in the version, but the rule tolerates them;
- s beyond t (a WARN rule lets such a batch through): (1 - s) x 0.5, the rule's tolerance is
  broken;
- threshold unknown (a result recorded before thresholds were, no history): 1 - s.

So a promoted batch with every rule under 1 % failing, within tolerance, scores quality
above 0.99, where counting a rule as passed only when no row fails gave it 0.

A held (blocked) batch changes nothing in the version read today, so it changes nothing in the
score: it is not one of the batches quality and stability read, and the failed attempts are
counted among the attempts that were not held (it only lets the version age, and freshness
fall). The SLA is the tightest `hours_since_approved <= N` bound of the SLA policies covering
the dataset's layer, else 24 hours (so, by default, down to 0 at 7 days).

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

from lakeguard.records.schema.drift import DriftDecision

if TYPE_CHECKING:  # the store's reader imports this module: rows are types here, not imports
    from lakeguard.records.checks.result_rows import SchemaChangeRow


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
SEVERITY_WEIGHT = {"FAIL": 2.0, "WARN": 1.0}  # a FAIL rule guards the version more
BREACHED = 0.5  # a rule beyond its threshold keeps half the credit of its passing rows


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleJudgment:
    """What quality reads of one rule's result on a promoted batch."""

    failed_rows: int
    rows_evaluated: int
    severity: str
    threshold: float | None  # as it judged (None: unknown)
    dropped: bool = False  # its failing rows were set aside, not promoted

    def credit(self) -> float:
        """0..1: how far the version can be trusted on this rule (module docstring)."""
        if self.dropped or self.failed_rows <= 0 or self.rows_evaluated <= 0:
            return 1.0
        share = min(1.0, self.failed_rows / self.rows_evaluated)
        if self.threshold is not None and share > self.threshold:
            return (1 - share) * BREACHED
        return 1 - share


@dataclass(frozen=True, kw_only=True, slots=True)
class PromotedBatch:
    """A promoted batch as quality and stability read it: its attempt and its rules."""

    run_id: str
    evaluated_at: datetime
    rules: tuple[RuleJudgment, ...] = ()

    def quality(self) -> float:
        weights = [SEVERITY_WEIGHT.get(r.severity, 1.0) for r in self.rules]
        if not weights:
            return 1.0
        return sum(w * r.credit() for w, r in zip(weights, self.rules, strict=True)) / sum(weights)


MEASURES = {  # what each component measures, as the dataset page and docs say it
    "quality": "each rule's failing share against its threshold and severity, weighed FAIL 2 "
    "and WARN 1, over the last 10 promoted batches",
    "freshness": "1 within the SLA of the latest approved version, falling to 0 at 7 x the SLA",
    "stability": "1 / (1 + unsettled schema changes of the last 10 promoted batches + FAILED "
    "attempts among the last 10 not held)",
    "lineage": "the share of approved versions backed by an allowed decision with evidence",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class TrustPart:
    name: str
    weight: int  # of 100
    value: float  # 0..1
    points: float  # weight x value: what it adds to the score
    measures: str


@dataclass(frozen=True, kw_only=True)
class TrustScore:
    dataset_id: str
    score: int  # 0..100
    quality: float
    freshness: float
    stability: float
    lineage: float
    sla_hours: float = FRESH_HOURS  # what freshness was measured against

    def parts(self) -> list[TrustPart]:
        """Each component with its weight, its value, what it adds and what it measures (the
        dataset page's formula)."""
        return [
            TrustPart(
                name=name,
                weight=round(weight * 100),
                value=getattr(self, name),
                points=100 * weight * getattr(self, name),
                measures=MEASURES[name],
            )
            for name, weight in WEIGHTS.items()
        ]

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
    promoted: Iterable[PromotedBatch],
    changes: Iterable[SchemaChangeRow],
    versions: Iterable[Promoted] = (),
    decisions: Iterable[Decided] = (),
    lineage: Lineage | None = None,
    now: datetime,
    sla_hours: float | None = None,
    failed: int = 0,
) -> TrustScore:
    """The score of one dataset from its promoted batches (with their rule results), its
    rows in schema_change_log, data_versions and promotion_status (the last two as counted in
    `lineage`, when given); `failed`: how many of its last RECENT attempts not held FAILED."""
    recent = sorted(promoted, key=lambda b: b.evaluated_at, reverse=True)[:RECENT]
    qualities = [b.quality() for b in recent]
    quality = sum(qualities) / len(qualities) if qualities else 1.0
    runs = {b.run_id for b in recent}
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
