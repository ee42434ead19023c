"""The trust score and its components (pure), and where it shows (Spark)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lakeguard.reads.reader import StoreReader
from lakeguard.records.checks.result_rows import RuleResultRow, SchemaChangeRow
from lakeguard.records.decisions.rows import DataVersionRow, DecisionRow
from lakeguard.records.definitions.records import PolicyDef
from lakeguard.records.runs.rows import RunHistoryRow
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.records.trust import RECENT, WEIGHTS, PromotedBatch, RuleJudgment, trust_score
from lakeguard.rules.policy.sla import sla_hours
from lakeguard.store import MetadataStore
from lakeguard.words.vocabulary import AttemptStatus, Outcome
from tests.support.project import Project

NOW = datetime(2026, 11, 26, 12)


def batch(
    run: str, rules: list[tuple[int, float | None, str]], hours_ago: int = 1
) -> PromotedBatch:
    """A promoted batch of 100 rows: each rule's (failing rows, threshold, severity)."""
    return PromotedBatch(
        run_id=run,
        evaluated_at=NOW - timedelta(hours=hours_ago),
        rules=tuple(
            RuleJudgment(failed_rows=f, rows_evaluated=100, threshold=t, severity=sev)
            for f, t, sev in rules
        ),
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
    clean = batch("r1", [(0, 0.0, "FAIL")] * 4)
    perfect = trust_score(
        "d", promoted=[clean], changes=[], versions=versions, decisions=decisions, now=NOW
    )
    assert perfect.score == 100 and perfect.explain().startswith("100/100 = quality 1.00 x 40")
    # a WARN rule let half its rows fail past its 0 % threshold: half the credit of the rest
    shaky = trust_score(
        "d",
        promoted=[clean, batch("r2", [(0, 0.0, "FAIL"), (50, 0.0, "WARN")], hours_ago=0)],
        changes=[change("r2", DriftDecision.BLOCK)],
        versions=versions,
        decisions=decisions,
        now=NOW + timedelta(days=4),
    )
    r2 = (2 * 1.0 + 1 * 0.5 * 0.5) / 3
    assert shaky.quality == pytest.approx((1.0 + r2) / 2) and shaky.stability == 0.5
    assert 0 < shaky.freshness < 1 and shaky.lineage == 1.0
    assert shaky.score == round(
        100 * (0.4 * shaky.quality + 0.2 * shaky.freshness + 0.2 * 0.5 + 0.2)
    )
    unbacked = trust_score("d", promoted=[], changes=[], versions=versions, decisions=[], now=NOW)
    assert unbacked.lineage == 0.0
    never = trust_score("d", promoted=[], changes=[], versions=[], decisions=[], now=NOW)
    assert never.freshness == 0.0 and never.score == 60  # quality and stability only
    assert [(p.name, p.weight) for p in perfect.parts()] == [
        ("quality", 40),
        ("freshness", 20),
        ("stability", 20),
        ("lineage", 20),
    ]
    assert sum(p.points for p in shaky.parts()) == pytest.approx(
        100 * sum(w * getattr(shaky, n) for n, w in WEIGHTS.items())
    )


def test_quality_weighs_each_rules_share_against_its_threshold_and_severity() -> None:
    """The defect: a promoted bronze with every rule under 1 % failing scored 65: a rule
    counted as passed only when no row failed it."""
    versions, decisions = [version(NOW - timedelta(hours=2))], [decision()]
    under = batch("r1", [(0, 0.05, "FAIL"), (1, 0.05, "FAIL"), (1, 0.02, "WARN")])
    score = trust_score(
        "d", promoted=[under], changes=[], versions=versions, decisions=decisions, now=NOW
    )
    assert score.quality == pytest.approx((2 * 1.0 + 2 * 0.99 + 0.99) / 5) and score.score == 100
    # the same share past a WARN rule's threshold counts half
    past = RuleJudgment(failed_rows=1, rows_evaluated=100, threshold=0.0, severity="WARN")
    assert past.credit() == pytest.approx(0.495)
    assert RuleJudgment(
        failed_rows=1, rows_evaluated=100, threshold=None, severity="WARN"
    ).credit() == (
        pytest.approx(0.99)  # threshold unknown: the passing share alone
    )
    # failing rows set aside (fail_behavior: drop) are not in the version
    dropped = RuleJudgment(
        failed_rows=40, rows_evaluated=100, threshold=0.0, severity="FAIL", dropped=True
    )
    assert dropped.credit() == 1.0


@given(
    st.lists(
        st.tuples(
            st.integers(0, 100),
            st.one_of(st.none(), st.floats(0, 1)),
            st.sampled_from(["FAIL", "WARN"]),
        ),
        max_size=6,
    )
)
def test_a_batch_quality_is_between_0_and_1_and_no_failing_row_is_perfect(
    rules: list[tuple[int, float | None, str]],
) -> None:
    quality = batch("r", rules).quality()
    assert 0.0 <= quality <= 1.0
    if all(f == 0 for f, _, _ in rules):
        assert quality == 1.0


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
            "d",
            promoted=[],
            changes=[],
            versions=versions,
            decisions=decisions,
            now=NOW,
            sla_hours=hours,
        ).freshness

    assert freshness(None) == 1.0  # 9 h old, within the default 24 h
    assert freshness(6.0) == pytest.approx(1 - 3 / 36)  # 3 h past a 6 h SLA; 0 at 42 h
    assert freshness(1.0) == pytest.approx(0.0)  # 9 h > 7 x 1 h
    shown = trust_score(
        "d", promoted=[], changes=[], versions=versions, decisions=decisions, now=NOW, sla_hours=6.0
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


def judged(
    run: str, allowed: bool, failed: list[int], at: datetime, threshold: float = 0.0
) -> list[Any]:
    """A decision of dataset d and its rule results (one rule per count, of 100 rows)."""
    decided = replace(decision(), run_id=run, allowed=allowed, evaluated_at=at)
    results = [
        RuleResultRow(
            run_id=run,
            tenant_id="t",
            dataset_id="d",
            rule_id=f"rule{i}",
            rule_type="RANGE",
            severity="FAIL",
            rows_evaluated=100,
            failed_rows=n,
            outcome=Outcome.PASS
            if n == 0
            else Outcome.FAIL
            if n / 100 > threshold
            else Outcome.WARN,
            executed_at=at,
            threshold=threshold,
        )
        for i, n in enumerate(failed)
    ]
    return [decided, *results]


def attempt(run: str, status: AttemptStatus, at: datetime) -> RunHistoryRow:
    return RunHistoryRow(
        run_id=run,
        pipeline_logging_id="j",
        tenant_id="t",
        dataset_id="d",
        layer="bronze",
        status=status,
        start_time=at,
        end_time=at,
        triggered_by="cli",
    )


def write(store: MetadataStore, rows: list[Any]) -> None:
    store.append_rows([r for r in rows if isinstance(r, DecisionRow)], _by_gate=True)
    store.append_rows([r for r in rows if not isinstance(r, DecisionRow)])


def test_a_held_batch_changes_nothing_in_the_score_of_the_version_it_did_not_replace(
    tmp_path: Path,
) -> None:
    """The defect: quality was the mean over every evaluated batch, so a held batch whose
    rules mostly passed raised the score of a version it never touched."""
    store = MetadataStore("lg", str(tmp_path / "meta"), "t")
    store.ensure()
    now = store.now()
    write(store, judged("p1", True, [5, 5], now - timedelta(minutes=30), threshold=0.1))
    write(store, [attempt("p1", AttemptStatus.SUCCESS, now - timedelta(minutes=30))])
    write(
        store,
        [attempt(f"f{i}", AttemptStatus.FAILED, now - timedelta(minutes=29 - i)) for i in range(2)],
    )
    before = StoreReader(store).status.trust(["d"])["d"]
    assert before.quality == pytest.approx(0.95)
    held = [
        *judged("h1", False, [0, 90], now - timedelta(minutes=10), threshold=0.1),
        change("h1", DriftDecision.BLOCK),
        *(
            attempt(f"h{i}", AttemptStatus.BLOCKED, now - timedelta(minutes=9 - i))
            for i in range(RECENT)
        ),
    ]
    ahead = StoreReader(store).status.trust(["d"], pending=held[1:])["d"]  # as the step scores it
    write(store, held)
    after = StoreReader(store).status.trust(["d"])["d"]
    for score in (ahead, after):
        assert (score.quality, score.stability, score.lineage) == (
            before.quality,
            before.stability,
            before.lineage,
        )
    assert after.stability == pytest.approx(1 / 3)  # the two failures still count


def test_a_score_of_pending_rows_is_the_score_once_they_are_committed(tmp_path: Path) -> None:
    """The governed step scores its attempt before its evidence is committed (the score goes
    in the same commit round; its decision is recorded before): pending rule results and
    schema-change rows count exactly as stored."""
    store = MetadataStore("lg", str(tmp_path / "meta"), "t")
    store.ensure()
    now = store.now()
    for i in range(RECENT + 2):
        write(store, judged(f"r{i}", True, [0, i % 2], now - timedelta(minutes=30 + i), 0.5))
    new = judged("new", True, [30, 40], now, threshold=0.5)
    write(store, new[:1])  # the decision: recorded by the gate before the evidence
    pending = [*new[1:], change("new", DriftDecision.ALERT), change("r1", DriftDecision.BLOCK)]
    ahead = StoreReader(store).status.trust(["d"], pending=pending)["d"]
    before = StoreReader(store).status.trust(["d"])["d"]
    assert ahead.quality < before.quality and ahead.stability < before.stability  # they count
    store.append_rows(pending)
    stored = StoreReader(store).status.trust(["d"])["d"]
    assert (ahead.score, ahead.quality, ahead.stability, ahead.lineage) == (
        stored.score,
        stored.quality,
        stored.stability,
        stored.lineage,
    )


def failed_attempt(run: str, minutes_ago: int) -> Any:
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
            promoted=[batch("r1", [(0, 0.0, "FAIL")] * 4)],
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
    assert StoreReader(store).status.trust(["d"])["d"].stability == 0.25
