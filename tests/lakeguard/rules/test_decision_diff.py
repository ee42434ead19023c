"""The diff of a decision against the one it is compared with (lakeguard.rules.decision_diff), pure:
two typed records in, only what differs out, over the definitions judged under (first), rules,
checks, policies, schema changes and upstream versions."""

from __future__ import annotations

from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta

from lakeguard.records.decisions.records import DecisionRecord, RuleResult, SchemaChange
from lakeguard.records.evidence import CheckKind, CheckRecord, CheckResult, Evidence
from lakeguard.records.judged import Known
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.rules.decision_diff import compared_with, diff_decisions
from lakeguard.words.vocabulary import Outcome, Severity

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def rule(
    rule_id: str,
    failed: int,
    outcome: Outcome,
    rows: int = 100,
    threshold: float | None = 0.0,
    severity: Severity = Severity.FAIL,
) -> RuleResult:
    return RuleResult(
        rule_id=rule_id,
        rule_type="RANGE",
        severity=severity,
        failed_rows=failed,
        rows_evaluated=rows,
        outcome=outcome,
        threshold=threshold,
        expression='{"column":"lat","min":0}',
        known=Known.RECORDED if threshold is not None else Known.UNKNOWN,
    )


def check(
    name: str,
    kind: CheckKind,
    result: CheckResult,
    detail: str = "",
    blocking: bool | None = None,
) -> CheckRecord:
    return CheckRecord(
        name=name, kind=kind, result=result, detail=detail or name, blocking=blocking
    )


def decision(
    run_id: str,
    allowed: bool,
    rules: tuple[RuleResult, ...] = (),
    checks: tuple[CheckRecord, ...] = (),
    upstream: dict[str, int] | None = None,
    schema: tuple[SchemaChange, ...] = (),
    version: int | None = None,
) -> DecisionRecord:
    return DecisionRecord(
        decision_id=f"d{run_id}",
        dataset_id="silver_x",
        run_id=run_id,
        from_layer="bronze",
        to_layer="silver",
        allowed=allowed,
        reason="",
        evaluated_at=T0,
        evidence=Evidence(checks=checks, upstream=upstream or {}),
        rules=rules,
        schema_changes=schema,
        version=version,
    )


def test_nothing_promoted_before_gives_an_empty_diff_that_says_so() -> None:
    found = diff_decisions(decision("b", False, (rule("r", 5, Outcome.FAIL),)), None)
    assert found.against is None and found.same and found.rules == ()


def test_a_rule_whose_outcome_changed_comes_first_and_one_whose_share_only_moved_is_listed() -> (
    None
):
    then = decision(
        "a",
        True,
        (rule("lat", 0, Outcome.PASS), rule("lon", 1, Outcome.PASS), rule("id", 0, Outcome.PASS)),
        version=3,
    )
    now = decision(
        "b",
        False,
        (rule("lon", 2, Outcome.PASS), rule("lat", 50, Outcome.FAIL), rule("id", 0, Outcome.PASS)),
    )
    found = diff_decisions(now, then)
    assert found.against == "a" and found.against_version == 3 and not found.allowed
    assert [(d.rule_id, d.outcome_changed) for d in found.rules] == [
        ("lat", True),
        ("lon", False),
    ]  # id: the same outcome and share, not listed
    lat = found.rules[0]
    assert (lat.then_outcome, lat.now_outcome, lat.then_share, lat.now_share) == (
        "PASS",
        "FAIL",
        0.0,
        0.5,
    )


def test_a_rule_added_or_dropped_since_is_listed_with_no_outcome_on_the_missing_side() -> None:
    then = decision("a", True, (rule("old", 0, Outcome.PASS),))
    now = decision("b", False, (rule("new", 0, Outcome.PASS),))
    found = {d.rule_id: (d.then_outcome, d.now_outcome) for d in diff_decisions(now, then).rules}
    assert found == {"new": (None, "PASS"), "old": ("PASS", None)}


def test_checks_and_policies_are_told_apart_and_only_changed_results_are_listed() -> None:
    then = decision(
        "a",
        True,
        checks=(
            check("pii", CheckKind.POLICY, CheckResult.PASS),
            check("volume", CheckKind.POLICY, CheckResult.PASS),
            check("empty", CheckKind.EMPTY_SNAPSHOT, CheckResult.PASS),
        ),
    )
    now = decision(
        "b",
        False,
        checks=(
            check("pii", CheckKind.POLICY, CheckResult.BLOCK, "email unmasked"),
            check("volume", CheckKind.POLICY, CheckResult.PASS, "other detail, same result"),
            check("empty", CheckKind.EMPTY_SNAPSHOT, CheckResult.BLOCK),
            check("changed", CheckKind.CHANGED_FILES, CheckResult.ALERT),
        ),
    )
    found = diff_decisions(now, then)
    assert [(p.name, p.then_result, p.now_result, p.detail) for p in found.policies] == [
        ("pii", "PASS", "BLOCK", "email unmasked")
    ]
    assert [(c.name, c.kind, c.then_result, c.now_result) for c in found.checks] == [
        ("empty", "empty_snapshot", "PASS", "BLOCK"),
        ("changed", "changed_files", None, "ALERT"),
    ]


def test_schema_changes_met_by_one_attempt_only_and_upstream_versions_that_moved() -> None:
    added = SchemaChange(
        change_kind=ChangeKind.COLUMN_ADDED,
        column_name="extra",
        old_type=None,
        new_type="string",
        profile="additive",
        decision=DriftDecision.ALLOW,
    )
    narrowed = SchemaChange(
        change_kind=ChangeKind.TYPE_NARROWED,
        column_name="lat",
        old_type="double",
        new_type="float",
        profile="additive",
        decision=DriftDecision.BLOCK,
    )
    then = decision("a", True, upstream={"bronze_x": 4, "ref": 1}, schema=(added,))
    now = decision("b", False, upstream={"bronze_x": 6, "ref": 1}, schema=(added, narrowed))
    found = diff_decisions(now, then)
    assert [(s.change_kind, s.column_name, s.decision, s.now) for s in found.schema_changes] == [
        ("type_narrowed", "lat", "BLOCK", True)
    ]
    assert [(u.parent, u.then_version, u.now_version) for u in found.upstream] == [
        ("bronze_x", 4, 6)
    ]
    assert not found.same


def test_two_decisions_that_record_the_same_things_are_the_same() -> None:
    rules = (rule("lat", 1, Outcome.PASS),)
    checks = (check("pii", CheckKind.POLICY, CheckResult.PASS),)
    then = decision("a", True, rules, checks, {"p": 1})
    now = decision("b", False, rules, checks, {"p": 1})
    assert diff_decisions(now, then).same


def test_a_promotion_after_holds_is_compared_with_the_hold_and_the_loosened_rule_comes_first() -> (
    None
):
    """The defect: the promotion of a batch held twice listed "failing share moved" lines, but
    not that its rule's tolerance went from 10 % to 50 %."""
    first = decision("a", True, (rule("lat", 20, Outcome.WARN, threshold=0.5),), version=1)
    held = [
        replace(
            decision(run, False, (rule("lat", 36, Outcome.FAIL, threshold=0.1),)),
            evaluated_at=T0 + timedelta(hours=n),
        )
        for n, run in ((1, "b"), (2, "c"))
    ]
    promoted = replace(
        decision("d", True, (rule("lat", 36, Outcome.WARN, threshold=0.5),), version=2),
        evaluated_at=T0 + timedelta(hours=3),
    )
    history = [first, *held, promoted]
    assert compared_with(promoted, history) == held[-1]  # why promoted now: the hold it ends
    assert compared_with(held[-1], history) == first  # why held: the last promoted
    assert compared_with(first, history) is None
    found = diff_decisions(promoted, held[-1])
    assert found.against == "c" and found.against_allowed is False
    assert [d.text() for d in found.definitions] == ["rule lat: threshold 10% → 50%"]
    assert [(r.rule_id, r.then_outcome, r.now_outcome) for r in found.rules] == [
        ("lat", "FAIL", "WARN")
    ]
    listed = list(asdict(found))  # what the API answers, in this order; the page lists alike
    assert listed.index("definitions") < listed.index("rules") < listed.index("checks")
    # the batch is the same: against the earlier promotion, only the share moved
    assert diff_decisions(promoted, first).definitions == ()


def test_severity_expression_active_and_policy_enforcement_changes_are_definitions() -> None:
    then = decision(
        "a",
        True,
        (
            rule("lat", 5, Outcome.WARN, severity=Severity.WARN),
            rule("gone", 0, Outcome.PASS),
            replace(rule("_malformed_rows", 0, Outcome.PASS), expression=None),
        ),
        (check("pii", CheckKind.POLICY, CheckResult.PASS, blocking=False),),
    )
    now = decision(
        "b",
        False,
        (
            rule("lat", 5, Outcome.FAIL, severity=Severity.FAIL),
            replace(rule("new", 0, Outcome.PASS), expression='{"column":"lon"}'),
        ),
        (check("pii", CheckKind.POLICY, CheckResult.BLOCK, blocking=True),),
    )
    found = diff_decisions(now, then)
    assert [(d.kind, d.name, d.field, d.then, d.now) for d in found.definitions] == [
        ("rule", "lat", "severity", "WARN", "FAIL"),
        ("rule", "new", "active", "no", "yes"),
        ("rule", "gone", "active", "yes", "no"),  # the engine's own rule is not listed
        ("policy", "pii", "enforcement", "ALERT", "BLOCK"),
    ]
    moved = replace(now, rules=(replace(now.rules[0], expression='{"column":"lat","min":1}'),))
    assert [
        d.field for d in diff_decisions(moved, replace(then, rules=then.rules[:1])).definitions
    ][:2] == ["severity", "expression"]


def test_a_definition_not_known_on_one_side_claims_no_change() -> None:
    old = decision("a", True, (rule("lat", 5, Outcome.WARN, threshold=None),))
    now = decision("b", False, (rule("lat", 50, Outcome.FAIL, threshold=0.1),))
    assert diff_decisions(now, old).definitions == ()
