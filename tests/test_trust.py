"""The trust score and its components (pure), and where it shows (Spark)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lakeguard.policy.sla import sla_hours
from lakeguard.schema.drift import ChangeKind, DriftDecision
from lakeguard.store import MetadataStore, StoreReader
from lakeguard.store.records import PolicyDef
from lakeguard.store.runtime_rows import DataVersionRow, DecisionRow, DqResultRow, SchemaChangeRow
from lakeguard.trust import RECENT, trust_score
from lakeguard.vocabulary import DqStatus
from tests.conftest import Project

NOW = datetime(2026, 11, 26, 12)


def dq(run: str, passed: int, failed: int, hours_ago: int = 1) -> DqResultRow:
    return DqResultRow(
        pipeline_logging_id="j",
        run_id=run,
        tenant_id="t",
        dataset_id="d",
        target_table="bronze.d",
        dq_config_id="c",
        executed_at=NOW - timedelta(hours=hours_ago),
        rows_evaluated=10,
        expectations_passed=passed,
        expectations_failed=failed,
        overall_status=DqStatus.PASS,
    )


def version(promoted_at: datetime) -> DataVersionRow:
    return DataVersionRow(
        tenant_id="t",
        dataset_id="d",
        version=1,
        snapshot_ref="0",
        schema_hash="h",
        row_count=1,
        run_id="r1",
        promoted_at=promoted_at,
        promoted_by="job",
    )


def decision() -> DecisionRow:
    return DecisionRow(
        tenant_id="t",
        dataset_id="d",
        run_id="r1",
        from_layer="source",
        to_layer="bronze",
        allowed=True,
        reason="ok",
        evaluated_at=NOW,
        evidence="{...}",
    )


def change(run: str, decision: DriftDecision) -> SchemaChangeRow:
    return SchemaChangeRow(
        run_id=run,
        tenant_id="t",
        dataset_id="d",
        change_kind=ChangeKind.COLUMN_ADDED,
        decision=decision,
        detected_at=NOW,
    )


def test_components_and_weights() -> None:
    versions = [version(NOW - timedelta(hours=2))]
    decisions = [decision()]
    perfect = trust_score(
        "d", dq=[dq("r1", 4, 0)], changes=[], versions=versions, decisions=decisions, now=NOW
    )
    assert perfect.score == 100 and perfect.explain().startswith("100/100 = quality 1.00 x 40")
    shaky = trust_score(
        "d",
        dq=[dq("r1", 4, 0), dq("r2", 2, 2, hours_ago=0)],
        changes=[change("r2", DriftDecision.BLOCK)],
        versions=versions,
        decisions=decisions,
        now=NOW + timedelta(days=4),
    )
    assert shaky.quality == 0.75 and shaky.stability == 0.5
    assert 0 < shaky.freshness < 1 and shaky.lineage == 1.0
    assert shaky.score == round(100 * (0.4 * 0.75 + 0.2 * shaky.freshness + 0.2 * 0.5 + 0.2))
    unbacked = trust_score("d", dq=[], changes=[], versions=versions, decisions=[], now=NOW)
    assert unbacked.lineage == 0.0
    never = trust_score("d", dq=[], changes=[], versions=[], decisions=[], now=NOW)
    assert never.freshness == 0.0 and never.score == 60  # quality and stability only


def sla(policy_id: str, expression: str | None, layers: tuple[str, ...] = ("silver",)) -> PolicyDef:
    return PolicyDef(
        policy_id=policy_id,
        policy_type="SLA",
        layers=layers,
        expression=expression,
        enforcement="BLOCK",
    )


def test_freshness_is_measured_against_the_dataset_sla() -> None:
    policies = [
        sla("loose", "hours_since_approved <= 12 AND stalest_parent_hours < 48"),
        sla("tight", "6 >= hours_since_approved"),
        sla("gold_only", "hours_since_approved < 1", layers=("gold",)),
        sla("parents", None),  # the default bounds parents only
    ]
    assert sla_hours(policies, "silver") == 6.0
    assert sla_hours(policies, "gold") == 1.0
    assert sla_hours(policies, "bronze") is None
    versions = [version(NOW - timedelta(hours=9))]
    decisions = [decision()]

    def freshness(hours: float | None) -> float:
        return trust_score(
            "d", dq=[], changes=[], versions=versions, decisions=decisions, now=NOW, sla_hours=hours
        ).freshness

    assert freshness(None) == 1.0  # 9 h old, within the default 24 h
    assert freshness(6.0) == pytest.approx(1 - 3 / 36)  # 3 h past a 6 h SLA; 0 at 42 h
    assert freshness(1.0) == pytest.approx(0.0)  # 9 h > 7 x 1 h
    shown = trust_score(
        "d", dq=[], changes=[], versions=versions, decisions=decisions, now=NOW, sla_hours=6.0
    )
    assert shown.explain().endswith("(freshness SLA 6 h)")


@pytest.mark.spark
def test_status_explain_and_a_table_show_the_score(shared_lakehouse: Any, project: Project) -> None:
    lh, p = shared_lakehouse, project
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.5,100", "UMTS,2,20.5,100"])  # UMTS breaks a WARN rule
    assert lh.run(p.job).status == "COMPLETED"
    status = {s.dataset_id: s.trust for s in lh.status()}
    assert status[p.silver] == 100 and 0 < status[p.bronze] < 100
    trust = lh.explain(p.bronze).trust
    assert trust is not None
    assert trust.score == status[p.bronze] and "quality" in trust.explain()
    rows = lh.store.rows("trust_scores", filters=[("dataset_id", "=", p.bronze)])
    assert [r["score"] for r in rows] == [status[p.bronze]]


def test_a_score_of_pending_rows_is_the_score_once_they_are_committed(tmp_path: Path) -> None:
    """The governed step scores its attempt before its evidence is committed (the score goes
    in the same commit round): pending dq and schema-change rows count exactly as stored."""
    store = MetadataStore("lg", str(tmp_path / "meta"), "t")
    store.ensure()
    now = store.now()
    older = [dq(f"r{i}", passed=3, failed=i % 2, hours_ago=0) for i in range(RECENT + 2)]
    older = [replace(r, executed_at=now - timedelta(minutes=30 + i)) for i, r in enumerate(older)]
    store.append_rows(older)
    pending = [
        replace(dq("new", passed=1, failed=3, hours_ago=0), executed_at=now),
        change("new", DriftDecision.ALERT),
        change("r1", DriftDecision.BLOCK),
    ]
    ahead = StoreReader(store).trust(["d"], pending=pending)["d"]
    before = StoreReader(store).trust(["d"])["d"]
    assert ahead.quality < before.quality and ahead.stability < before.stability  # they count
    store.append_rows(pending)
    stored = StoreReader(store).trust(["d"])["d"]
    assert (ahead.score, ahead.quality, ahead.stability, ahead.lineage) == (
        stored.score,
        stored.quality,
        stored.stability,
        stored.lineage,
    )


def failed_attempt(run: str, minutes_ago: int) -> Any:
    from lakeguard.store.runtime_rows import RunHistoryRow
    from lakeguard.vocabulary import AttemptStatus

    at = NOW - timedelta(minutes=minutes_ago)
    return RunHistoryRow(
        run_id=run,
        pipeline_logging_id="j",
        tenant_id="t",
        dataset_id="d",
        layer="bronze",
        status=AttemptStatus.FAILED,
        start_time=at,
        end_time=at,
        error_message="no files match",
        triggered_by="cli",
    )


def test_a_dataset_whose_attempts_keep_failing_loses_trust(tmp_path: Path) -> None:
    """Promoted once, then failing every attempt: its trust falls with each failure (it kept
    100 before), and the failures are read from run_history like the other components."""
    versions, decisions = [version(NOW - timedelta(hours=2))], [decision()]
    scores = [
        trust_score(
            "d",
            dq=[dq("r1", 4, 0)],
            changes=[],
            versions=versions,
            decisions=decisions,
            now=NOW,
            failed=n,
        )
        for n in range(4)
    ]
    assert scores[0].score == 100
    assert [s.score for s in scores] == sorted((s.score for s in scores), reverse=True)
    assert scores[3].stability == 0.25 and scores[3].score < 100
    store = MetadataStore("lg", str(tmp_path / "meta"), "t")
    store.ensure()
    store.append_rows([failed_attempt(f"f{i}", i) for i in range(3)])
    assert StoreReader(store).trust(["d"])["d"].stability == 0.25
