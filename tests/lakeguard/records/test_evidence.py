"""A decision's evidence is a frozen typed record stored in its old JSON shape (pure)."""

from __future__ import annotations

import json

from lakeguard.actors.gate import decide
from lakeguard.records.evidence import Check, CheckKind, CheckResult, Evidence
from lakeguard.records.quality.outcome import RuleOutcome


def test_a_decision_records_typed_checks_and_the_batch_it_judged() -> None:
    decision = decide(
        [RuleOutcome("r", "RANGE", "FAIL", ("x",), 10, 0, 0.0)],
        from_layer="bronze",
        to_layer="silver",
        checks=[
            Check("policy:fresh", False, True, "SLA policy requires ...", CheckKind.POLICY),
            Check("schema:column_added:c", False, False, "c added", CheckKind.SCHEMA),
        ],
    )
    assert not decision.allowed
    evidence = decision.evidence.about_batch(
        fail_behavior="quarantine", upstream={"b": 3}, batch='{"b": [1, 3]}'
    )
    assert [c.kind for c in evidence.blocked_by()] == [CheckKind.POLICY]
    assert evidence.check("schema:column_added:c").result == CheckResult.ALERT  # type: ignore[union-attr]
    stored = json.loads(json.dumps(evidence.to_json()))
    assert stored["checks"] == {"policy:fresh": "BLOCK", "schema:column_added:c": "ALERT"}
    assert stored["check_details"]["policy:fresh"] == "SLA policy requires ..."
    assert stored["rules"] == {"r": "PASS"} and stored["upstream"] == {"b": 3}
    assert Evidence.from_json(json.dumps(stored)) == evidence


def test_evidence_written_before_check_kinds_still_reads() -> None:
    old = {
        "rules": {"r": "FAIL"},
        "checks": {"changed_files:o": "BLOCK", "empty_snapshot": "BLOCK", "odd": "PASS"},
        "check_details": {"changed_files:o": "2 file(s) came back"},
        "dropped_rules": [],
        "fail_behavior": "quarantine",
        "upstream": {},
    }
    evidence = Evidence.from_json(json.dumps(old))
    assert [(c.name, c.kind) for c in evidence.checks] == [
        ("changed_files:o", CheckKind.CHANGED_FILES),
        ("empty_snapshot", CheckKind.EMPTY_SNAPSHOT),
        ("odd", CheckKind.OTHER),
    ]
    assert Evidence.from_json(None) == Evidence() == Evidence.from_json("not json")
