"""What to change to get a blocked promotion allowed, from its decision (pure)."""

from __future__ import annotations

from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.evidence import CheckKind
from lakeguard.words.vocabulary import Outcome, Severity


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
    for check in decision.evidence.blocked_by():
        name, detail = check.name, check.detail
        if check.kind == CheckKind.POLICY:
            lines.append(
                f"{name}: meet it ({detail}), change the policy's expression, or make it ALERT"
            )
        elif check.kind == CheckKind.SCHEMA:
            lines.append(
                f"{name}: {detail}; make the source match the approved schema, or give it a "
                "profile that allows this change (schema_profile), or migrate the table"
            )
        elif check.kind == CheckKind.EMPTY_SNAPSHOT:
            lines.append("the source returned no rows: check it before promoting an empty table")
        else:
            lines.append(f"{name}: {detail}")
    return lines
