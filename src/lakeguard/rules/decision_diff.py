"""What changed between a gate decision and the one it is compared with (pure): for a held
decision, the dataset's last promoted one before it ("why not promoted this time"); for a
promotion right after holds, the newest of those holds ("why promoted now": often a rule
loosened in between).

It compares the two typed records field by field. First the definitions they were judged
under: each rule's threshold, severity and expression as it judged (lakeguard.records.judged), a
rule judged by one only (`active`), a policy's enforcement. Then the data: each rule's outcome and
failing share, each check's and each policy's result, the schema changes each attempt met, and
the upstream versions each read. Only what differs is listed, definitions first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from lakeguard.records.decisions.records import DecisionRecord, RuleResult, SchemaChange
from lakeguard.records.evidence import CheckKind, CheckRecord
from lakeguard.records.judged import changed
from lakeguard.words.vocabulary import Enforcement

SHARE_DIGITS = 6  # failing shares equal to this many digits are the same share
BUILTIN_PREFIX = "_"  # the engine's own rules (unparseable rows, business keys) begin so


@dataclass(frozen=True, kw_only=True, slots=True)
class DefinitionDelta:
    """A rule's or a policy's definition that differs between the two judgments: `field` is
    threshold, severity or expression (as each rule judged), active (judged by one only) or
    enforcement (a policy's, BLOCK or ALERT)."""

    kind: str  # rule or policy
    name: str
    field: str
    then: str | None
    now: str | None

    def text(self) -> str:
        return f"{self.kind} {self.name}: {self.field} {self.then or '—'} → {self.now or '—'}"


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
    """A decision against the one it is compared with (`compared_with`; `against` None: none,
    and every list is empty). The definitions it was judged under come first."""

    dataset_id: str
    run_id: str
    allowed: bool
    against: str | None  # the other decision's attempt id
    against_evaluated_at: datetime | None
    against_version: int | None
    against_allowed: bool | None = None  # False: the hold this promotion follows
    definitions: tuple[DefinitionDelta, ...] = ()
    rules: tuple[RuleDelta, ...] = ()
    checks: tuple[CheckDelta, ...] = ()
    policies: tuple[CheckDelta, ...] = ()
    schema_changes: tuple[SchemaDelta, ...] = ()
    upstream: tuple[UpstreamDelta, ...] = ()

    @property
    def same(self) -> bool:
        """Nothing the two records hold differs."""
        return not (
            self.definitions
            or self.rules
            or self.checks
            or self.policies
            or self.schema_changes
            or self.upstream
        )


def compared_with(
    record: DecisionRecord, earlier: Sequence[DecisionRecord]
) -> DecisionRecord | None:
    """What `record` is compared with, among the dataset's decisions before it (`earlier`,
    oldest first): a promotion right after a hold, with that hold (what changed that let the
    batch through); any other decision, with the last promoted one (None: none before)."""
    before = [d for d in earlier if d.evaluated_at < record.evaluated_at]
    if record.allowed and before and not before[-1].allowed:
        return before[-1]
    promoted = [d for d in before if d.allowed]
    return promoted[-1] if promoted else None


def diff_decisions(now: DecisionRecord, then: DecisionRecord | None) -> DecisionDiff:
    """`now` against `then`, the decision of the same dataset it is compared with
    (`compared_with`)."""
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
        against_allowed=then.allowed,
        definitions=(
            *_rule_definitions(then.rules, now.rules),
            *_policy_definitions(then.evidence.checks, now.evidence.checks),
        ),
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


def _rule_definitions(
    then: tuple[RuleResult, ...], now: tuple[RuleResult, ...]
) -> tuple[DefinitionDelta, ...]:
    before, after = {r.rule_id: r for r in then}, {r.rule_id: r for r in now}
    found = []
    for rule_id in [*after, *(r for r in before if r not in after)]:
        a, b = before.get(rule_id), after.get(rule_id)
        if a is not None and b is not None:
            found += [
                DefinitionDelta(kind="rule", name=rule_id, field=c.field, then=c.then, now=c.now)
                for c in changed(a.judged, b.judged)
            ]
        elif not rule_id.startswith(BUILTIN_PREFIX):  # the engine's own come and go with data
            found.append(
                DefinitionDelta(
                    kind="rule",
                    name=rule_id,
                    field="active",
                    then="yes" if a is not None else "no",
                    now="yes" if b is not None else "no",
                )
            )
    return tuple(found)


def _policy_definitions(
    then: tuple[CheckRecord, ...], now: tuple[CheckRecord, ...]
) -> tuple[DefinitionDelta, ...]:
    def enforcement(check: CheckRecord | None) -> str | None:
        if check is None or check.blocking is None:
            return None
        return str(Enforcement.BLOCK if check.blocking else Enforcement.ALERT)

    before = {c.name: c for c in then if c.kind == CheckKind.POLICY}
    after = {c.name: c for c in now if c.kind == CheckKind.POLICY}
    found = []
    for name in [*after, *(c for c in before if c not in after)]:
        a, b = before.get(name), after.get(name)
        was: str | None
        became: str | None
        if a is None or b is None:
            field, was, became = "active", "yes" if a else "no", "yes" if b else "no"
        else:
            field, was, became = "enforcement", enforcement(a), enforcement(b)
            if was is None or became is None or was == became:
                continue
        found.append(DefinitionDelta(kind="policy", name=name, field=field, then=was, now=became))
    return tuple(found)


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
