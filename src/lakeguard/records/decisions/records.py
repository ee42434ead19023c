"""A gate decision as the reader returns it, with the rule outcomes and schema changes it
was made on, its trust score and advice."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

from lakeguard.records.checks.result_rows import RuleResultRow, SchemaChangeRow
from lakeguard.records.decisions.rows import DecisionRow
from lakeguard.records.evidence import Evidence
from lakeguard.records.judged import JudgedAs, Known
from lakeguard.records.rows.parsing import str_tuple
from lakeguard.records.schema.drift import ChangeKind, DriftDecision
from lakeguard.records.trust import TrustScore
from lakeguard.words.vocabulary import Outcome, Severity, vocab


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleResult:
    """One row of `data_quality_results`: one rule's outcome on one batch, with the rule as
    it judged (`threshold`, `expression`, `asks`; `known` says where they come from)."""

    rule_id: str
    rule_type: str
    severity: Severity  # always recorded with the judgment
    failed_rows: int
    rows_evaluated: int
    outcome: Outcome
    sample_values: tuple[str, ...] = ()
    threshold: float | None = None
    expression: str | None = None
    asks: str | None = None
    known: Known = Known.RECORDED

    @property
    def failed_share(self) -> float:
        return self.failed_rows / self.rows_evaluated if self.rows_evaluated else 0.0

    @property
    def judged(self) -> JudgedAs:
        """The rule's definition when it judged this batch."""
        return JudgedAs(
            severity=str(self.severity),
            threshold=self.threshold,
            expression=self.expression,
            asks=self.asks,
            known=self.known,
        )

    def judged_from(self, found: JudgedAs) -> RuleResult:
        """This result with its threshold, expression and words from the rule's history (a
        result recorded before they were)."""
        return replace(
            self,
            threshold=found.threshold,
            expression=found.expression,
            asks=found.asks,
            known=found.known,
        )

    @classmethod
    def from_row(cls, row: RuleResultRow) -> RuleResult:
        return cls(
            rule_id=row.rule_id,
            rule_type=row.rule_type,
            severity=vocab(Severity, row.severity, f"data_quality_results[{row.result_id}]"),
            failed_rows=row.failed_rows,
            rows_evaluated=row.rows_evaluated,
            outcome=row.outcome,
            sample_values=str_tuple(row.sample_values),
            threshold=row.threshold,
            expression=row.rule_expression,
            asks=row.asks,
            # a row recorded before thresholds were says nothing of the rule: its history may
            known=Known.RECORDED if row.threshold is not None else Known.UNKNOWN,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SchemaChange:
    """One row of `schema_change_log`, as `explain` shows it."""

    change_kind: ChangeKind
    column_name: str | None
    old_type: str | None
    new_type: str | None
    profile: str | None
    decision: DriftDecision

    @classmethod
    def from_row(cls, row: SchemaChangeRow) -> SchemaChange:
        return cls(
            change_kind=row.change_kind,
            column_name=row.column_name,
            old_type=row.old_type,
            new_type=row.new_type,
            profile=row.profile,
            decision=row.decision,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class DecisionRecord:
    """One row of `promotion_status`, with the rule results of its attempt."""

    decision_id: str
    dataset_id: str
    run_id: str
    from_layer: str
    to_layer: str
    allowed: bool
    reason: str
    evaluated_at: datetime
    evidence: Evidence = field(default_factory=Evidence)
    rules: tuple[RuleResult, ...] = ()
    schema_changes: tuple[SchemaChange, ...] = ()
    version: int | None = None  # the version the promotion produced, if it was published
    advice: tuple[str, ...] = ()
    trust: TrustScore | None = None  # the dataset's score and components
    stuck: str | None = None  # blocked again and again on the same input (lakeguard.records.stuck)
    asks: dict[str, str] = field(default_factory=dict)  # rule id -> what it asked, as judged

    @classmethod
    def from_row(cls, row: DecisionRow, rules: tuple[RuleResult, ...] = ()) -> DecisionRecord:
        return cls(
            decision_id=row.decision_id,
            dataset_id=row.dataset_id,
            run_id=row.run_id,
            from_layer=row.from_layer,
            to_layer=row.to_layer,
            allowed=row.allowed,
            reason=row.reason,
            evaluated_at=row.evaluated_at,
            evidence=Evidence.from_json(row.evidence),
            rules=rules,
        )

    def to_json(self) -> dict[str, object]:
        """The decision as `explain --json` and the API give it: its fields, the evidence in
        its stored shape and the trust score with its explanation (dates and vocabulary words
        as they are: the writer turns them into text)."""
        trust = {**asdict(self.trust), "explanation": self.trust.explain()} if self.trust else {}
        return {**asdict(self), "evidence": self.evidence.to_json(), "trust": trust}
