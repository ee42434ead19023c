"""Every judgment shows the rule as it was when it judged (lakeguard.records.judged), without Spark:
the definition recorded with each rule result, read back from the rule's history for results
recorded before it was, a rule's chart with each batch's own severity and threshold (a step
line, each change marked), and never today's definition."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lakeguard.reads.reader import StoreReader
from lakeguard.records.checks.result_rows import RuleResultRow
from lakeguard.records.checks.rule_rows import QualityRuleRow
from lakeguard.records.decisions.records import DecisionRecord, RuleResult
from lakeguard.records.definitions.records import DatasetDef, RuleDef
from lakeguard.records.judged import Known, in_force, share_text
from lakeguard.records.quality.outcome import BatchEvaluation, outcome_for
from lakeguard.rules.quality.rules import compile_rule
from lakeguard.store import MetadataStore
from lakeguard.words.vocabulary import Layer, Outcome, Severity
from openlaketx.runner import evidence
from openlaketx.service.dashboard.charts import step_path, trend_chart
from openlaketx.service.insights import trends_of

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)


def range_rule(threshold: float, severity: str = "FAIL") -> RuleDef:
    return RuleDef(
        rule_id="lat_range",
        dataset_id="bronze_x",
        rule_type="RANGE",
        severity=severity,
        rule_expression=json.dumps(
            {"column": "lat", "min": -90, "max": 90, "threshold": threshold}
        ),
    )


def test_a_rule_result_records_the_severity_threshold_and_expression_it_judged_with() -> None:
    rule = compile_rule(range_rule(0.1))
    outcome = outcome_for(rule, 1000, 359, ["91.5"])
    assert outcome.outcome == Outcome.FAIL  # 35.9 % against 10 %
    rows = evidence.rows(
        tenant="t",
        pipeline_logging_id="j",
        run_id="r1",
        decided_at=T0,
        dataset=DatasetDef(
            dataset_id="bronze_x", dataset_name="x", layer=Layer.BRONZE, table_name="bronze.x"
        ),
        result=BatchEvaluation(rows=1000, outcomes=[outcome], profile=[]),
        columns=[],
    )
    (row,) = [r for r in rows if isinstance(r, RuleResultRow)]
    assert (row.severity, row.threshold) == ("FAIL", 0.1)
    assert json.loads(row.rule_expression or "") == {"column": "lat", "max": 90.0, "min": -90.0}
    assert row.asks == "lat in [-90, 90]"
    result = RuleResult.from_row(row)
    assert result.known == Known.RECORDED and result.judged.threshold == 0.1
    # a row recorded before the definition was says nothing of it: unknown until its history
    old = RuleResult.from_row(replace(row, threshold=None, rule_expression=None, asks=None))
    assert old.known == Known.UNKNOWN and old.threshold is None


def result(
    share: float, threshold: float | None, severity: Severity, known: Known = Known.RECORDED
) -> RuleResult:
    failed = round(share * 1000)
    breached = failed / 1000 > (threshold or 0.0)
    return RuleResult(
        rule_id="lat_range",
        rule_type="RANGE",
        severity=severity,
        failed_rows=failed,
        rows_evaluated=1000,
        outcome=(
            Outcome.PASS
            if failed == 0
            else Outcome.FAIL
            if breached and severity == Severity.FAIL
            else Outcome.WARN
        ),
        threshold=threshold,
        expression='{"column":"lat"}' if known != Known.UNKNOWN else None,
        asks="lat in [-90, 90]" if known != Known.UNKNOWN else None,
        known=known,
    )


def decided(n: int, rule: RuleResult) -> DecisionRecord:
    return DecisionRecord(
        decision_id=f"d{n}",
        dataset_id="bronze_x",
        run_id=f"r{n}",
        from_layer="source",
        to_layer="bronze",
        allowed=rule.outcome != Outcome.FAIL,
        reason="",
        evaluated_at=T0 + timedelta(hours=n),
        rules=(rule,),
    )


def test_a_rules_chart_shows_each_batch_as_judged_and_its_caption_the_newest() -> None:
    """The defect: the caption took the oldest batch's severity and today's threshold; a FAIL
    dot at 35.9 % sat under a 50 % line although it was judged against 10 %."""
    decisions = [
        decided(0, result(0.2, 0.5, Severity.WARN)),  # WARN at 50 % then
        decided(1, result(0.359, 0.1, Severity.FAIL)),  # tightened: FAIL at 10 %, held
        decided(2, result(0.359, 0.1, Severity.FAIL)),  # retried: held again
        decided(3, result(0.359, 0.5, Severity.FAIL)),  # loosened again: promoted
    ]
    (trend,) = trends_of(decisions)
    assert [(p.severity, p.threshold, p.outcome) for p in trend.points] == [
        ("WARN", 0.5, "WARN"),
        ("FAIL", 0.1, "FAIL"),
        ("FAIL", 0.1, "FAIL"),
        ("FAIL", 0.5, "WARN"),
    ]
    assert (trend.severity, trend.threshold) == ("FAIL", 0.5)  # the newest judgment's
    assert [p.changed for p in trend.points] == [
        [],
        ["severity WARN → FAIL", "threshold 50% → 10%"],
        [],
        ["threshold 10% → 50%"],
    ]
    chart = trend_chart(trend)
    # each dot says what it was judged against; the line steps at each change
    assert [d.threshold for d in chart.dots] == ["50%", "10%", "10%", "50%"]
    held = chart.dots[1]
    assert "judged as FAIL with threshold 10%" in held.label
    levels = [  # the line's height at each batch: where it starts (M x,y) and steps (V y)
        float(part[1:].split(",")[-1]) for part in chart.threshold_path.split() if part[0] in "MV"
    ]
    assert len(levels) == 4 and levels[1] == levels[2] > levels[0] == levels[3]
    assert held.y < levels[1]  # 35.9 % is drawn above its own 10 % line, not under 50 %
    assert [c.label for c in chart.changes] == [
        "severity WARN → FAIL; threshold 50% → 10%",
        "threshold 10% → 50%",
    ]
    first, second = chart.changes
    assert chart.dots[0].x < first.x < chart.dots[1].x and chart.dots[2].x < second.x
    assert chart.threshold_text == "50%"


def test_an_unknown_threshold_is_said_so_and_breaks_the_line_it_is_never_todays() -> None:
    decisions = [
        decided(0, result(0.01, None, Severity.WARN, Known.UNKNOWN)),
        decided(1, result(0.02, 0.05, Severity.WARN)),
    ]
    (trend,) = trends_of(decisions)
    assert [p.known for p in trend.points] == ["unknown", "recorded"]
    assert trend.points[1].changed == []  # unknown before: no change is claimed
    chart = trend_chart(trend)
    assert chart.dots[0].threshold == "unknown" and "threshold unknown" in chart.dots[0].label
    assert chart.threshold_path.count("M") == 1  # drawn only where it is known
    only_unknown = trend_chart(trends_of(decisions[:1])[0])
    assert only_unknown.threshold_path == "" and only_unknown.threshold_text == "unknown"


@given(st.lists(st.one_of(st.none(), st.floats(0, 100)), min_size=1, max_size=12))
def test_a_step_line_is_level_at_each_known_step_and_broken_at_each_unknown(
    ys: list[float | None],
) -> None:
    steps = [(10.0 + 10 * i, y) for i, y in enumerate(ys)]
    path = step_path(steps, 5.0, (10.0, 10.0 + 10 * (len(ys) - 1)))
    runs = sum(1 for i, y in enumerate(ys) if y is not None and (i == 0 or ys[i - 1] is None))
    assert path.count("M") == runs
    assert path.count("H") == sum(1 for y in ys if y is not None)


def test_share_text_and_the_version_in_force() -> None:
    assert [share_text(s) for s in (0.1, 0.5, 0.005, 0.0, None)] == [
        "10%",
        "50%",
        "0.5%",
        "0%",
        None,
    ]
    ms = int(T0.timestamp() * 1000)
    commits = [(0, ms), (1, ms + 60_000), (2, ms + 120_000)]
    assert in_force(commits, T0 - timedelta(seconds=1)) is None  # before the table
    assert in_force(commits, T0 + timedelta(seconds=90)) == 1
    assert in_force(commits, (T0 + timedelta(hours=1)).replace(tzinfo=None)) == 2  # naive UTC


def test_results_recorded_before_thresholds_read_the_rule_as_it_was_then(tmp_path: Path) -> None:
    """An old store's results carry no threshold: the reader takes it from `quality_rules` as
    it stood when the batch was judged (its Delta history), not from today's definition."""
    store = MetadataStore("lg", str(tmp_path / "meta"), "t")
    store.ensure()

    def define(threshold: float, severity: str) -> None:
        rule = range_rule(threshold, severity)
        store.upsert(
            "quality_rules",
            [
                QualityRuleRow(
                    rule_id=rule.rule_id,
                    dataset_id=rule.dataset_id,
                    layer="bronze",
                    rule_type=rule.rule_type,
                    rule_expression=rule.rule_expression,
                    severity=rule.severity,
                    definition_hash=f"h{threshold}{severity}",
                )
            ],
        )
        time.sleep(0.01)  # commit times in ms: each judgment falls after its definition

    def judged(run_id: str) -> None:
        store.append_rows(
            [
                RuleResultRow(
                    run_id=run_id,
                    tenant_id="t",
                    dataset_id="bronze_x",
                    rule_id="lat_range",
                    rule_type="RANGE",
                    severity="FAIL",
                    rows_evaluated=1000,
                    failed_rows=359,
                    outcome=Outcome.FAIL,
                    executed_at=store.now(),
                )
            ]
        )
        time.sleep(0.01)

    define(0.1, "FAIL")
    judged("r_held")
    define(0.5, "FAIL")  # loosened since, by a re-apply or a direct edit
    judged("r_after")
    found = StoreReader(store).decisions.rule_results(["r_held", "r_after"])
    (held,), (after,) = found["r_held"], found["r_after"]
    assert (held.threshold, held.known) == (0.1, Known.HISTORY)
    assert (after.threshold, after.known) == (0.5, Known.HISTORY)
    assert held.asks == "lat in [-90, 90]"
    assert held.expression == after.expression  # only the threshold changed
