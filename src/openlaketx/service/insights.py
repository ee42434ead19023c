"""What the dashboard shows beyond the run and dataset records, as typed answers the API gives
too: each rule's failing share over a dataset's last batches (with its threshold), the schema
change log, freshness against the SLA, and the quarantine's size with a sample.

All of it is read by delta-rs from the metadata tables (and the quarantine table): no Spark.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pyarrow as pa
from deltalake import QueryBuilder
from pydantic import BaseModel, ConfigDict

from lakeguard.decision_diff import DecisionDiff, diff_decisions
from lakeguard.errors import LakeTxError
from lakeguard.quality.evaluate import FAILED_RULES
from lakeguard.quality.kinds import stored_rule
from lakeguard.store.definition_rows import QualityRuleRow
from lakeguard.store.records import DecisionRecord, RuleDef
from lakeguard.store.runtime_rows import SchemaChangeRow
from lakeguard.vocabulary import ENGINE_PREFIX, AttemptStatus
from openlaketx import storage
from openlaketx.lakehouse import Lakehouse
from openlaketx.tables import dataset_location, quarantine_name

QUARANTINE_SAMPLE = 20


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TrendPoint(_Model):
    run_id: str
    evaluated_at: datetime
    failed_rows: int
    rows_evaluated: int
    failed_share: float
    outcome: str


class RuleTrend(_Model):
    rule_id: str
    rule_type: str
    severity: str
    threshold: float | None  # the failing share the rule tolerates (None: rule gone)
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


class QuarantinedRow(_Model):
    """One quarantined row: the rules it broke, and its own columns (the engine's left out;
    an unparseable line keeps its text in `_corrupt_record`)."""

    broken_rules: list[str]
    values: dict[str, object]


class QuarantineSample(_Model):
    dataset_id: str
    rows: int
    sample: list[QuarantinedRow]


def rule_trends(lh: Lakehouse, dataset_id: str, batches: int) -> RuleTrends:
    """Each rule's failing share on the dataset's last `batches` judged batches, oldest first."""
    lh.dataset(dataset_id)  # NotRegisteredError (404) when it is not this tenant's
    with ThreadPoolExecutor(max_workers=2) as pool:  # two independent scans
        defined_f = pool.submit(_rule_defs, lh, dataset_id)
        decisions = recent_decisions(lh, dataset_id, batches)
        defined = defined_f.result()
    trends: dict[str, RuleTrend] = {}
    for decision in decisions:
        for result in decision.rules:
            trend = trends.get(result.rule_id)
            if trend is None:
                threshold, asks = defined.get(result.rule_id, (None, None))
                trend = RuleTrend(
                    rule_id=result.rule_id,
                    rule_type=result.rule_type,
                    severity=str(result.severity),
                    threshold=threshold,
                    asks=asks,
                    points=[],
                )
                trends[result.rule_id] = trend
            evaluated = result.rows_evaluated
            trend.points.append(
                TrendPoint(
                    run_id=decision.run_id,
                    evaluated_at=decision.evaluated_at,
                    failed_rows=result.failed_rows,
                    rows_evaluated=evaluated,
                    failed_share=result.failed_rows / evaluated if evaluated else 0.0,
                    outcome=str(result.outcome),
                )
            )
    return RuleTrends(dataset_id=dataset_id, batches=batches, rules=list(trends.values()))


def recent_decisions(lh: Lakehouse, dataset_id: str, count: int) -> list[DecisionRecord]:
    """The dataset's newest `count` gate decisions, oldest first, with their rule results."""
    return lh.reader.decisions(dataset_id=dataset_id, last=count)


def last_promoted_before(lh: Lakehouse, record: DecisionRecord) -> DecisionRecord | None:
    """The dataset's last promoted decision before `record`, as `explain` gives it (with its
    schema changes and the version it made); None when none promoted before it."""
    earlier = [
        d
        for d in lh.reader.decisions(dataset_id=record.dataset_id)
        if d.allowed and d.evaluated_at < record.evaluated_at
    ]
    return lh.explain(record.dataset_id, earlier[-1].run_id) if earlier else None


def decision_diff(lh: Lakehouse, dataset_id: str, run_id: str) -> DecisionDiff:
    """Attempt `run_id`'s decision against the dataset's last promoted one before it: why not
    promoted this time."""
    record = lh.explain(dataset_id, run_id)
    return diff_decisions(record, last_promoted_before(lh, record))


def _rule_defs(lh: Lakehouse, dataset_id: str) -> dict[str, tuple[float, str]]:
    rows = lh.store.definitions(QualityRuleRow, [("dataset_id", "=", dataset_id)])
    found = {}
    for row in rows:
        try:
            rule = stored_rule(RuleDef.from_row(row))
        except LakeTxError:  # a rule that no longer parses is reported where it compiles
            continue
        found[rule.id] = (float(rule.threshold), rule.explain())
    return found


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
    trust = lh.reader.trust_all()  # what status() computed: kept, not computed again
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


def quarantine(lh: Lakehouse, dataset_id: str, limit: int = QUARANTINE_SAMPLE) -> QuarantineSample:
    """How many rows the dataset's quarantine holds, and the newest `limit` of them."""
    lh.dataset(dataset_id)
    location = dataset_location(lh.warehouse, quarantine_name(dataset_id))
    if not storage.is_delta_table(location):
        return QuarantineSample(dataset_id=dataset_id, rows=0, sample=[])
    table = storage.delta_table(location)
    files = pa.table(table.get_add_actions(flatten=True))
    rows = sum(int(n or 0) for n in files.column("num_records").to_pylist())
    query = QueryBuilder().register("q", table)
    sample = pa.table(query.execute(f"SELECT * FROM q LIMIT {int(limit)}").read_all())
    return QuarantineSample(
        dataset_id=dataset_id,
        rows=rows,
        sample=[
            QuarantinedRow(
                broken_rules=[str(r) for r in row.get(FAILED_RULES) or []],
                values={k: _text(v) for k, v in row.items() if not k.startswith(ENGINE_PREFIX)},
            )
            for row in sample.to_pylist()
        ],
    )


def last_outcome(status: AttemptStatus | str | None) -> str | None:
    """The dashboard's word for an attempt's end: PROMOTED, HELD (the gate blocked it; the
    data is safe) or FAILED (an error)."""
    return {"SUCCESS": "PROMOTED", "COMPLETED": "PROMOTED", "BLOCKED": "HELD"}.get(
        str(status), None if status is None else str(status)
    )


def _text(value: object) -> object:
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)
