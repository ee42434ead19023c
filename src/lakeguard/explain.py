"""What to change to get a blocked promotion allowed, from its decision (pure)."""

from __future__ import annotations

from lakeguard.store.records import DecisionRecord
from lakeguard.vocabulary import Outcome, Severity


def advise(decision: DecisionRecord) -> list[str]:
    """One line per thing that blocked the promotion (nothing when it was allowed)."""
    if decision.allowed:
        return []
    lines = []
    for rule in decision.rules:
        if rule.outcome == Outcome.FAIL and rule.severity == Severity.FAIL:
            samples = f" (e.g. {', '.join(rule.sample_values[:3])})" if rule.sample_values else ""
            share = rule.failed_rows / rule.rows_evaluated if rule.rows_evaluated else 0.0
            lines.append(
                f"rule {rule.rule_id}: fix the {rule.failed_rows:,} failing row(s){samples} at "
                f"the source, or tolerate them (threshold >= {share:.4f}), or make it WARN"
            )
    checks = decision.evidence.get("checks", {})
    details = decision.evidence.get("check_details", {})
    for name, result in checks.items():
        if result != "BLOCK":
            continue
        detail = details.get(name, "")
        if name.startswith("policy:"):
            lines.append(
                f"{name}: meet it ({detail}), change the policy's expression, or make it ALERT"
            )
        elif name.startswith("schema:"):
            lines.append(
                f"{name}: {detail}; make the source match the approved schema, or give it a "
                "profile that allows this change (schema_profile), or migrate the table"
            )
        elif name.startswith("changed_files"):
            lines.append(f"{name}: {detail}")
        elif name == "empty_snapshot":
            lines.append("the source returned no rows: check it before promoting an empty table")
        else:
            lines.append(f"{name}: {detail}")
    return lines
