"""Rule compilation, outcomes and the gate's decision are pure logic (no Spark)."""

from __future__ import annotations

import json

import pytest

from lakeguard.actors.gate import Check, decide
from lakeguard.records.definitions.records import RuleDef
from lakeguard.records.quality.outcome import RuleOutcome, overall_status
from lakeguard.rules.quality.rules import compile_rule, compile_rules
from lakeguard.words.errors import ValidationError


def rule(
    rule_type: str, severity: str = "FAIL", rule_id: str | None = None, **params: object
) -> RuleDef:
    return RuleDef(
        rule_id=rule_id or f"r_{rule_type.lower()}",
        dataset_id="d",
        rule_type=rule_type,
        severity=severity,
        rule_expression=json.dumps(params),
    )


def test_each_rule_type_compiles_to_a_violation_predicate() -> None:
    assert (
        compile_rule(rule("NOT_NULL", columns=["a", "b"])).violation_sql
        == "(`a` IS NULL OR `b` IS NULL)"
    )
    rng = compile_rule(rule("RANGE", column="lat", min=-90, max=90)).violation_sql
    assert rng == "(`lat` IS NOT NULL AND NOT (`lat` >= -90.0 AND `lat` <= 90.0))"
    regex = compile_rule(rule("REGEX", column="r", pattern="^it's$")).violation_sql or ""
    assert "RLIKE '^it\\'s$'" in regex
    allowed = compile_rule(rule("ALLOWED_VALUES", column="r", values=["A", "B'"])).violation_sql
    assert allowed == "(`r` IS NOT NULL AND `r` NOT IN ('A', 'B\\''))"
    expr = compile_rule(rule("EXPRESSION", expression="a >= b")).violation_sql
    assert expr == "(NOT coalesce((a >= b), FALSE))"
    unique = compile_rule(rule("UNIQUE", columns=["k1", "k2"]))
    assert unique.violation_sql is None and unique.unique_keys == ("k1", "k2")


def test_unknown_rule_types_and_bad_parameters_are_reported_together() -> None:
    rows = [
        rule("SOMETIMES"),
        rule("RANGE", rule_id="r2", column="x"),
        rule("EXPRESSION", rule_id="r3", expression="reflect('a','b')"),
    ]
    with pytest.raises(ValidationError) as info:
        compile_rules(rows)
    paths = " ".join(e["path"] + e["message"] for e in info.value.errors)
    assert "unknown rule type 'SOMETIMES'" in paths
    assert "r2" in paths and "min" in paths
    assert "reflect" in paths


def outcome(
    rule_id: str, severity: str, failed: int, rows: int = 100, threshold: float = 0.0
) -> RuleOutcome:
    return RuleOutcome(rule_id, "RANGE", severity, ("x",), rows, failed, threshold)


@pytest.mark.parametrize(
    "severity, failed, threshold, expected",
    [
        ("FAIL", 0, 0.0, "PASS"),
        ("FAIL", 1, 0.0, "FAIL"),
        ("FAIL", 5, 0.05, "WARN"),
        ("FAIL", 6, 0.05, "FAIL"),
        ("WARN", 50, 0.0, "WARN"),
    ],
)
def test_outcome_respects_severity_and_tolerance(
    severity: str, failed: int, threshold: float, expected: str
) -> None:
    assert outcome("r", severity, failed, threshold=threshold).outcome == expected


def test_fail_rules_block_and_warn_rules_only_log() -> None:
    warn_only = decide(
        [outcome("w", "WARN", 10), outcome("p", "FAIL", 0)], from_layer="source", to_layer="bronze"
    )
    assert warn_only.allowed and "WARN w" in warn_only.reason
    blocked = decide(
        [outcome("w", "WARN", 10), outcome("f", "FAIL", 3)], from_layer="source", to_layer="bronze"
    )
    assert not blocked.allowed and "FAIL rule f: 3 of 100 rows" in blocked.reason
    assert blocked.evidence.rules == {"w": "WARN", "f": "FAIL"}


def test_blocking_checks_block_and_alerts_log() -> None:
    alert = Check("freshness", passed=False, blocking=False, detail="late by 2h")
    block = Check("schema", passed=False, blocking=True, detail="column dropped")
    assert decide([], from_layer="a", to_layer="b", checks=[alert]).allowed
    decision = decide([], from_layer="a", to_layer="b", checks=[alert, block])
    assert not decision.allowed and "column dropped" in decision.reason


def test_overall_status() -> None:
    assert overall_status([outcome("a", "FAIL", 0)]) == "PASS"
    assert overall_status([outcome("a", "WARN", 1)]) == "WARNING"
    assert overall_status([outcome("a", "WARN", 1), outcome("b", "FAIL", 1)]) == "FAIL"
