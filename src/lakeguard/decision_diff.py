"""What changed between a gate decision and the dataset's last promoted one before it: "why not
promoted this time" (pure).

It compares the two typed records field by field: each rule's outcome and failing share, each
check's and each policy's result, the schema changes each attempt met, and the upstream
versions each read. Only what differs is listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lakeguard.evidence import CheckKind, CheckRecord
from lakeguard.store.records import DecisionRecord, RuleResult, SchemaChange

SHARE_DIGITS = 6  # failing shares equal to this many digits are the same share


@dataclass(frozen=True, kw_only=True, slots=True)
class RuleDelta:
    """A rule whose outcome or failing share differs (None: it did not run in that one)."""

    rule_id: str
    then_outcome: str | None
    now_outcome: str | None
    then_share: float | None
    now_share: float | None

    @property
    def outcome_changed(self) -> bool:
        return self.then_outcome != self.now_outcome


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckDelta:
    """A check or policy whose result differs (None: it did not take part in that one)."""

    name: str
    kind: str
    then_result: str | None
    now_result: str | None
    detail: str  # the newer decision's detail, or the older's when it no longer took part


@dataclass(frozen=True, kw_only=True, slots=True)
class SchemaDelta:
    """A schema change one of the two attempts met and the other did not."""

    change_kind: str
    column_name: str | None
    old_type: str | None
    new_type: str | None
    decision: str
    now: bool  # True: met by the newer attempt only; False: by the promoted one only


@dataclass(frozen=True, kw_only=True, slots=True)
class UpstreamDelta:
    """A parent read at another version (None: not read by that one)."""

    parent: str
    then_version: int | None
    now_version: int | None


@dataclass(frozen=True, kw_only=True, slots=True)
class DecisionDiff:
    """A decision against the dataset's last promoted decision before it (`against` None:
    none promoted before, and every list is empty)."""

    dataset_id: str
    run_id: str
    allowed: bool
    against: str | None  # the promoted decision's attempt id
    against_evaluated_at: datetime | None
    against_version: int | None
    rules: tuple[RuleDelta, ...] = ()
    checks: tuple[CheckDelta, ...] = ()
    policies: tuple[CheckDelta, ...] = ()
    schema_changes: tuple[SchemaDelta, ...] = ()
    upstream: tuple[UpstreamDelta, ...] = ()

    @property
    def same(self) -> bool:
        """Nothing the two records hold differs."""
        return not (
            self.rules or self.checks or self.policies or self.schema_changes or self.upstream
        )


def diff_decisions(now: DecisionRecord, then: DecisionRecord | None) -> DecisionDiff:
    """`now` against `then`, the last promoted decision of the same dataset before it."""
    if then is None:
        return DecisionDiff(
            dataset_id=now.dataset_id,
            run_id=now.run_id,
            allowed=now.allowed,
            against=None,
            against_evaluated_at=None,
            against_version=None,
        )
    checks = _checks(then.evidence.checks, now.evidence.checks)
    return DecisionDiff(
        dataset_id=now.dataset_id,
        run_id=now.run_id,
        allowed=now.allowed,
        against=then.run_id,
        against_evaluated_at=then.evaluated_at,
        against_version=then.version,
        rules=_rules(then.rules, now.rules),
        checks=tuple(c for c in checks if c.kind != CheckKind.POLICY),
        policies=tuple(c for c in checks if c.kind == CheckKind.POLICY),
        schema_changes=_schema(then.schema_changes, now.schema_changes),
        upstream=tuple(
            UpstreamDelta(
                parent=parent,
                then_version=then.evidence.upstream.get(parent),
                now_version=now.evidence.upstream.get(parent),
            )
            for parent in sorted({*then.evidence.upstream, *now.evidence.upstream})
            if then.evidence.upstream.get(parent) != now.evidence.upstream.get(parent)
        ),
    )


def _share(rule: RuleResult | None) -> float | None:
    if rule is None:
        return None
    if not rule.rows_evaluated:
        return 0.0
    return round(rule.failed_rows / rule.rows_evaluated, SHARE_DIGITS)


def _rules(then: tuple[RuleResult, ...], now: tuple[RuleResult, ...]) -> tuple[RuleDelta, ...]:
    before, after = {r.rule_id: r for r in then}, {r.rule_id: r for r in now}
    found = []
    for rule_id in [*after, *(r for r in before if r not in after)]:
        a, b = before.get(rule_id), after.get(rule_id)
        delta = RuleDelta(
            rule_id=rule_id,
            then_outcome=None if a is None else str(a.outcome),
            now_outcome=None if b is None else str(b.outcome),
            then_share=_share(a),
            now_share=_share(b),
        )
        if delta.outcome_changed or delta.then_share != delta.now_share:
            found.append(delta)
    # the rules whose outcome changed tell why first; then those that only moved
    return tuple(sorted(found, key=lambda d: not d.outcome_changed))


def _checks(then: tuple[CheckRecord, ...], now: tuple[CheckRecord, ...]) -> tuple[CheckDelta, ...]:
    before, after = {c.name: c for c in then}, {c.name: c for c in now}
    found = []
    for name in [*after, *(c for c in before if c not in after)]:
        a, b = before.get(name), after.get(name)
        if a is not None and b is not None and a.result == b.result:
            continue
        shown = b if b is not None else a
        assert shown is not None
        found.append(
            CheckDelta(
                name=name,
                kind=str(shown.kind),
                then_result=None if a is None else str(a.result),
                now_result=None if b is None else str(b.result),
                detail=shown.detail,
            )
        )
    return tuple(found)


def _schema(
    then: tuple[SchemaChange, ...], now: tuple[SchemaChange, ...]
) -> tuple[SchemaDelta, ...]:
    def key(c: SchemaChange) -> tuple[str, str | None, str | None, str | None]:
        return (str(c.change_kind), c.column_name, c.old_type, c.new_type)

    before, after = {key(c) for c in then}, {key(c) for c in now}
    return tuple(
        SchemaDelta(
            change_kind=str(c.change_kind),
            column_name=c.column_name,
            old_type=c.old_type,
            new_type=c.new_type,
            decision=str(c.decision),
            now=is_new,
        )
        for changes, other, is_new in ((now, before, True), (then, after, False))
        for c in changes
        if key(c) not in other
    )
