"""What an event says in words (pure): what happened, why, and the fix, as `laketx explain`
says them for a decision (`lakeguard.rules.explain`'s advice, the stuck summary)."""

from __future__ import annotations

from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.evidence import CheckResult
from lakeguard.words.vocabulary import Outcome


def _share(failed: int, rows: int) -> str:
    return f"{failed:,} of {rows:,} rows ({failed / rows:.2%})" if rows else f"{failed:,} rows"


def decision_text(decision: DecisionRecord) -> str:
    """The explain text of a decision: what, why (each rule and check that did not pass),
    and the fix (each line of advice; the stuck fix first)."""
    verdict = "allowed" if decision.allowed else "BLOCKED"
    lines = [
        f"what: {decision.dataset_id}: {decision.from_layer} -> {decision.to_layer} {verdict} "
        f"at {decision.evaluated_at:%Y-%m-%d %H:%M:%S} UTC (attempt {decision.run_id})",
        f"why: {decision.reason}",
    ]
    for rule in decision.rules:
        if rule.outcome != Outcome.PASS:
            samples = f"; e.g. {', '.join(rule.sample_values[:3])}" if rule.sample_values else ""
            lines.append(
                f"  rule {rule.rule_id} ({rule.rule_type}, {rule.severity}): {rule.outcome}, "
                f"{_share(rule.failed_rows, rule.rows_evaluated)} failing{samples}"
            )
    for check in decision.evidence.checks:
        if check.result != CheckResult.PASS:
            lines.append(f"  {check.kind} {check.name}: {check.result}: {check.detail}")
    for change in decision.schema_changes:
        column = f" {change.column_name}" if change.column_name else ""
        lines.append(f"  schema change{column}: {change.change_kind}, {change.decision}")
    if decision.stuck:
        lines.append(decision.stuck)
    if decision.advice:
        lines.append("fix:")
        lines += [f"  - {a}" for a in decision.advice]
    return "\n".join(lines)
