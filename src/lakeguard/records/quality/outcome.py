"""Rule outcomes from counts, and the dq summary of a batch (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.words.vocabulary import DqStatus, Outcome, RuleType, Severity

# What a JSON value that does not fit its column says first in `_corrupt_record` (the record
# follows after " | "): a reason names the field, so a decision's reason quotes it
_VALUE_REASON = re.compile(r"^([^|]*?: expected [^,|]+, got [^|]*?)(?: \| |$)")


@dataclass(frozen=True)
class RuleOutcome:
    rule_id: str
    rule_type: str
    severity: str
    columns: tuple[str, ...]
    rows_evaluated: int
    failed_rows: int
    threshold: float
    samples: tuple[str, ...] = field(default=())
    # the rule as it judged (lakeguard.records.judged): recorded with the outcome
    expression: str | None = None
    asks: str | None = None

    @property
    def failed_ratio(self) -> float:
        return self.failed_rows / self.rows_evaluated if self.rows_evaluated else 0.0

    @property
    def breached(self) -> bool:
        """More failing rows than the rule tolerates (any, with the default threshold 0)."""
        if self.failed_rows == 0:
            return False
        return self.failed_ratio > self.threshold

    @property
    def outcome(self) -> Outcome:
        """PASS, WARN (failures logged, promotion unaffected) or FAIL (promotion blocked)."""
        if self.failed_rows == 0:
            return Outcome.PASS
        if self.breached and self.severity == Severity.FAIL:
            return Outcome.FAIL
        return Outcome.WARN

    def describe(self) -> str:
        pct = f"{self.failed_ratio:.2%}"
        text = f"{self.rule_id}: {self.failed_rows:,} of {self.rows_evaluated:,} rows ({pct})"
        if self.threshold:
            text += f", tolerance {self.threshold:.2%}"
        reasons = [m.group(1) for s in self.samples if (m := _VALUE_REASON.match(s))]
        if self.rule_type == RuleType.PARSE and reasons:
            text += f"; e.g. {reasons[0][:160]}"  # which field, and what it held
        return text


@dataclass(frozen=True)
class ProfileMetric:
    column: str
    metric: str
    value: str | None


@dataclass(frozen=True)
class BatchEvaluation:
    """What the gate decides from: rows seen, rule outcomes, and the column profile."""

    rows: int
    outcomes: list[RuleOutcome]
    profile: list[ProfileMetric]


def outcome_for(
    rule: CompiledRule, rows: int, failed: int, samples: list[str | None]
) -> RuleOutcome:
    return RuleOutcome(
        rule_id=rule.rule_id,
        rule_type=rule.rule_type,
        severity=rule.severity,
        columns=rule.columns,
        rows_evaluated=rows,
        failed_rows=failed,
        threshold=rule.threshold,
        samples=tuple(s for s in dict.fromkeys(samples) if s is not None)[:5],
        expression=rule.expression,
        asks=rule.asks,
    )


def overall_status(outcomes: list[RuleOutcome]) -> DqStatus:
    """PASS, WARNING or FAIL, as dq_results records it."""
    kinds = {o.outcome for o in outcomes}
    if Outcome.FAIL in kinds:
        return DqStatus.FAIL
    if Outcome.WARN in kinds:
        return DqStatus.WARNING
    return DqStatus.PASS
