"""What the dashboard shows beyond the run and dataset records, as typed answers the API gives
too: each rule's failing share over a dataset's last batches (each with the rule's severity,
threshold and expression as it judged that batch, never today's), the schema
change log, freshness against the SLA, and a decision's diff. (The quarantine's view is
`quarantine_view.py`.)

All of it is read by delta-rs from the metadata tables: no Spark.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from lakeguard.records.checks.result_rows import SchemaChangeRow
from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.judged import JudgedAs, changed
from lakeguard.rules.decision_diff import DecisionDiff, compared_with, diff_decisions
from lakeguard.words.vocabulary import AttemptStatus
from openlaketx.lakehouse import Lakehouse
from openlaketx.outcomes import word_of


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrendPoint(_Model):
    """One batch a rule judged, with the rule as it was then (lakeguard.records.judged)."""

    run_id: str
    evaluated_at: datetime
    failed_rows: int
    rows_evaluated: int
    failed_share: float
    outcome: str
    severity: str
    threshold: float | None  # the failing share it tolerated then (None: unknown)
    asks: str | None
    expression: str | None
    known: str  # recorded (with the judgment), history (the rule's, at the time) or unknown
    changed: list[str]  # how its definition differs from the batch before ("threshold 10% → 50%")


class RuleTrend(_Model):
    rule_id: str
    rule_type: str
    severity: str  # as it judged the newest batch
    threshold: float | None  # as it judged the newest batch (None: unknown)
    asks: str | None
    points: list[TrendPoint]


class RuleTrends(_Model):
    dataset_id: str
    batches: int
    rules: list[RuleTrend]


class SchemaChangeEntry(_Model):
    run_id: str
    detected_at: datetime
    change_kind: str
    column_name: str | None
    old_type: str | None
    new_type: str | None
    decision: str


class Freshness(_Model):
    dataset_id: str
    promoted_at: datetime | None
    age_hours: float | None  # since the latest approved version (None: never promoted)
    sla_hours: float
    fresh: bool


def rule_trends(lh: Lakehouse, dataset_id: str, batches: int) -> RuleTrends:
    """Each rule's failing share on the dataset's last `batches` judged batches, oldest first,
    each with the rule as it judged that batch."""
    lh.dataset(dataset_id)  # NotRegisteredError (404) when it is not this tenant's
    decisions = recent_decisions(lh, dataset_id, batches)
    return RuleTrends(dataset_id=dataset_id, batches=batches, rules=trends_of(decisions))


def trends_of(decisions: list[DecisionRecord]) -> list[RuleTrend]:
    """Each rule's points over `decisions` (oldest first), each point with the definition it
    was judged under, and where that definition changed from the point before."""
    trends: dict[str, RuleTrend] = {}
    last: dict[str, JudgedAs] = {}
    for decision in decisions:
        for result in decision.rules:
            judged = result.judged
            trend = trends.setdefault(
                result.rule_id,
                RuleTrend(
                    rule_id=result.rule_id,
                    rule_type=result.rule_type,
                    severity=str(result.severity),
                    threshold=None,
                    asks=None,
                    points=[],
                ),
            )
            before = last.get(result.rule_id)
            trend.points.append(
                TrendPoint(
                    run_id=decision.run_id,
                    evaluated_at=decision.evaluated_at,
                    failed_rows=result.failed_rows,
                    rows_evaluated=result.rows_evaluated,
                    failed_share=result.failed_share,
                    outcome=str(result.outcome),
                    severity=str(result.severity),
                    threshold=judged.threshold,
                    asks=judged.asks,
                    expression=judged.expression,
                    known=str(judged.known),
                    changed=[] if before is None else [c.text() for c in changed(before, judged)],
                )
            )
            # the caption says the rule as it judged the newest batch
            trend.severity, trend.threshold = str(result.severity), judged.threshold
            trend.asks, trend.rule_type = judged.asks, result.rule_type
            last[result.rule_id] = judged
    return list(trends.values())


def recent_decisions(lh: Lakehouse, dataset_id: str, count: int) -> list[DecisionRecord]:
    """The dataset's newest `count` gate decisions, oldest first, with their rule results."""
    return lh.reader.decisions.decisions(dataset_id=dataset_id, last=count)


def counterpart(lh: Lakehouse, record: DecisionRecord) -> DecisionRecord | None:
    """The decision `record` is compared with (`decision_diff.compared_with`: the hold a
    promotion follows, else the last promoted one before it), as `explain` gives it (with its
    schema changes and the version it made); None when there is none."""
    found = compared_with(record, lh.reader.decisions.decisions(dataset_id=record.dataset_id))
    return lh.explain(record.dataset_id, found.run_id) if found is not None else None


def decision_diff(lh: Lakehouse, dataset_id: str, run_id: str) -> DecisionDiff:
    """Attempt `run_id`'s decision against the one it is compared with: why not promoted this
    time, or why promoted now."""
    record = lh.explain(dataset_id, run_id)
    return diff_decisions(record, counterpart(lh, record))


def schema_changes(lh: Lakehouse, dataset_id: str) -> list[SchemaChangeEntry]:
    """The dataset's schema change log, newest first."""
    lh.dataset(dataset_id)
    rows = lh.store.read(SchemaChangeRow, filters=[("dataset_id", "=", dataset_id)])
    return [
        SchemaChangeEntry(
            run_id=r.run_id,
            detected_at=r.detected_at,
            change_kind=str(r.change_kind),
            column_name=r.column_name,
            old_type=r.old_type,
            new_type=r.new_type,
            decision=str(r.decision),
        )
        for r in sorted(rows, key=lambda r: r.detected_at, reverse=True)
    ]


def freshness(lh: Lakehouse) -> list[Freshness]:
    """Every dataset's age since its latest approved version, against its freshness SLA."""
    statuses = lh.status()
    trust = lh.reader.status.trust_all()  # what status() computed: kept, not computed again
    now = lh.store.now()
    found = []
    for status in statuses:
        sla = trust[status.dataset_id].sla_hours
        age = (
            None
            if status.promoted_at is None
            else (now - status.promoted_at).total_seconds() / 3600
        )
        found.append(
            Freshness(
                dataset_id=status.dataset_id,
                promoted_at=status.promoted_at,
                age_hours=age,
                sla_hours=sla,
                fresh=age is not None and age <= sla,
            )
        )
    return found


def last_outcome(status: AttemptStatus | str | None) -> str | None:
    """The word shown for an attempt's end: PROMOTED, HELD (the gate blocked it; the data is
    safe) or FAILED (an error), from the one vocabulary (`openlaketx.outcomes`)."""
    return word_of(status)
