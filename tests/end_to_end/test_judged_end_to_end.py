"""Issue 45's scenario end to end (Spark): a rule tightened by a re-apply so that a batch is
held, the batch retried and held again, then the rule loosened by a direct SQL edit and the
batch promoted with a file that arrived meanwhile. Each judgment keeps the rule as it was, the
promotion's diff names the loosened threshold first, quarantine holds the batch once and
releases it, and trust scores only the versions read."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest
from deltalake import DeltaTable

from openlaketx.service import insights, quarantine_view
from openlaketx.tables import dataset_location, quarantine_name
from tests.support.project import Project, assert_sound, cells_yaml, write

pytestmark = pytest.mark.spark

GOOD = ["GSM,1,10.0,1", "LTE,2,20.0,1", "GSM,3,30.0,1", "LTE,4,40.0,1"]
# 3 of 8 lat values out of range: 37.5 %, over 10 % and under 50 %
HELD = [f"GSM,{10 + i},{999.0 if i < 3 else 15.0},2" for i in range(8)]
LATE = ["LTE,30,12.0,3", "GSM,31,13.0,3"]


def with_threshold(suffix: str, threshold: float) -> str:
    """The small project with lat_range tolerating `threshold` of its rows."""
    text = cells_yaml(suffix)
    assert text.count("max: 90, severity: FAIL}") == 1
    return text.replace(
        "max: 90, severity: FAIL}", f"max: 90, severity: FAIL, threshold: {threshold}}}"
    )


def test_a_rule_loosened_after_two_holds_promotes_the_batch_judged_as_it_was(
    lakehouse: Any, project: Project
) -> None:
    lh, p, s = lakehouse, project, project.suffix
    rule = f"lat_range{s}"
    lh.apply(write(p.yaml, with_threshold(s, 0.5)))
    p.deliver("d1.csv", GOOD)
    assert lh.run(p.job).status == "COMPLETED"  # v1 under a 50 % threshold

    lh.apply(write(p.yaml, with_threshold(s, 0.1)))  # tightened by a re-apply
    p.deliver("d2.csv", HELD)
    for _ in range(2):  # held, retried, held again
        (bronze, *_) = lh.run(p.job).steps
        assert bronze.status == "BLOCKED"
    location = dataset_location(lh.warehouse, quarantine_name(p.bronze))
    assert DeltaTable(location).to_pyarrow_table().num_rows == len(HELD)  # once, not twice
    held = quarantine_view.quarantine(lh, p.bronze)
    assert held.rows == len(HELD)
    first_hold, second_hold = (
        d.run_id for d in lh.reader.decisions.decisions(dataset_id=p.bronze)[1:]
    )
    (kept,) = [b for b in held.batches if b.counted]
    assert (kept.run_id, kept.held_by) == (second_hold, [first_hold, second_hold])
    assert [(b.run_id, b.state, b.by) for b in held.batches if not b.counted] == [
        (first_hold, "superseded", second_hold)
    ]
    assert {r.why for r in held.sample} >= {f"broke {rule}"}
    assert any(r.why.startswith("held with its batch: blocked by FAIL rule") for r in held.sample)

    # loosened again by a direct SQL edit; a file arrives meanwhile: the batch is read again
    (stored,) = [r for r in lh.store.rows("quality_rules") if r["rule_id"] == rule]
    loose = json.dumps({**json.loads(stored["rule_expression"]), "threshold": 0.5})
    lh.sql(
        f"UPDATE lakeguard.quality_rules SET rule_expression = '{loose}', "
        f"updated_at = current_timestamp() WHERE rule_id = '{rule}'"
    ).collect()
    p.add("d3.csv", LATE)
    (bronze, *_) = lh.run(p.job).steps
    assert bronze.status == "SUCCESS" and bronze.data_version == 2

    decisions = lh.reader.decisions.decisions(dataset_id=p.bronze)
    judged = [next(r for r in d.rules if r.rule_id == rule) for d in decisions]
    assert [(str(r.severity), r.threshold, str(r.outcome), r.known) for r in judged] == [
        ("FAIL", 0.5, "PASS", "recorded"),
        ("FAIL", 0.1, "FAIL", "recorded"),
        ("FAIL", 0.1, "FAIL", "recorded"),
        ("FAIL", 0.5, "WARN", "recorded"),
    ]
    (trend,) = [t for t in insights.rule_trends(lh, p.bronze, 20).rules if t.rule_id == rule]
    assert [pt.threshold for pt in trend.points] == [0.5, 0.1, 0.1, 0.5]
    assert [pt.changed for pt in trend.points] == [
        [],
        ["threshold 50% → 10%"],
        [],
        ["threshold 10% → 50%"],
    ]
    assert (trend.severity, trend.threshold) == ("FAIL", 0.5)

    promoted = decisions[-1].run_id
    diff = insights.decision_diff(lh, p.bronze, promoted)
    assert (diff.against, diff.against_allowed) == (second_hold, False)
    assert [d.text() for d in diff.definitions] == [f"rule {rule}: threshold 10% → 50%"]
    listed = list(asdict(diff))
    assert listed.index("definitions") < listed.index("rules")
    assert (diff.rules[0].rule_id, diff.rules[0].then_outcome, diff.rules[0].now_outcome) == (
        rule,
        "FAIL",
        "WARN",
    )
    why_held = insights.decision_diff(lh, p.bronze, first_hold)  # against v1's promotion
    assert [d.text() for d in why_held.definitions] == [f"rule {rule}: threshold 50% → 10%"]

    # released: the promotion read the held file again; nothing is counted twice
    assert DeltaTable(location).to_pyarrow_table().num_rows == 0
    after = quarantine_view.quarantine(lh, p.bronze)
    assert after.rows == 0 and after.sample == []
    assert ("released", promoted) in {
        (b.state, b.by) for b in after.batches if b.run_id == second_hold
    }

    # trust: the two versions' batches only; the holds changed nothing in it
    trust = lh.reader.status.trust([p.bronze])[p.bronze]
    late = 3 / (len(HELD) + len(LATE))  # 30 % failing, within its 50 %: credit 0.7
    # v2's rules: the built-in parse rule and lat_range (FAIL, weight 2), radio_known (WARN, 1)
    v2 = (2 * 1.0 + 2 * (1 - late) + 1 * 1.0) / 5
    assert trust.quality == pytest.approx((1.0 + v2) / 2)
    scores = sorted(
        lh.store.rows("trust_scores", filters=[("dataset_id", "=", p.bronze)]),
        key=lambda r: r["computed_at"],
    )
    assert [r["quality"] for r in scores[:3]] == [1.0, 1.0, 1.0]  # v1, then the two holds
    assert_sound(lh, p.bronze, p.silver)
