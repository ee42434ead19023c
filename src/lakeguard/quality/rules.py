"""Compile quality rules (rows of `quality_rules`) into Spark SQL text (pure).

Each row-level rule becomes a *violation predicate*: a SQL boolean that is true exactly for the
rows that break it. The evaluator sums these predicates in one aggregation pass. UNIQUE is not
row-level: it becomes a list of key columns, counted by one groupBy of its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from lakeguard.errors import ValidationError
from lakeguard.sqlsafety import render, vet_expression, vetted_sql
from lakeguard.store.ddl import quote, sql_string
from lakeguard.store.records import RuleDef
from lakeguard.vocabulary import DECLARABLE_RULE_TYPES, RuleType, Severity


@dataclass(frozen=True)
class CompiledRule:
    rule_id: str
    rule_type: str
    severity: str
    threshold: float
    columns: tuple[str, ...]
    violation_sql: str | None
    sample_sql: str | None
    unique_keys: tuple[str, ...] = ()
    # batch-level rules (at most one of these): row-count bounds, an aggregate condition,
    # or the keys that must exist in another dataset (dataset, columns, its columns)
    row_bounds: tuple[int | None, int | None] | None = None
    aggregate_sql: str | None = None
    reference: tuple[str, tuple[str, ...], tuple[str, ...]] | None = None

    @property
    def row_level(self) -> bool:
        return self.violation_sql is not None


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    return sql_string(str(value))


def _as_text(columns: list[str]) -> str:
    if len(columns) == 1:
        return f"CAST({quote(columns[0])} AS STRING)"
    parts = ", ".join(f"coalesce(CAST({quote(c)} AS STRING), 'NULL')" for c in columns)
    return f"concat_ws('|', {parts})"


_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def _seconds(text: Any) -> int | None:
    """Seconds in a duration such as '2 hours' (None when it is not one)."""
    match = re.match(r"^\s*(\d+)\s*(second|minute|hour|day)s?\s*$", str(text or ""))
    return int(match.group(1)) * _UNITS[match.group(2)] if match else None


def compile_rule(row: RuleDef) -> CompiledRule:
    """Compile one `quality_rules` row; an unknown type or bad parameters is a ValidationError."""
    rule_id, rule_type = row.rule_id, row.rule_type
    where = f"quality_rules[rule_id={rule_id}]"

    def bad(message: str) -> ValidationError:
        return ValidationError(
            f"rule {rule_id} cannot be compiled: {message}",
            where=where,
            errors=[{"path": where, "message": message}],
            fix=f"correct the rule; rule types are {', '.join(DECLARABLE_RULE_TYPES)}",
        )

    if rule_type not in DECLARABLE_RULE_TYPES:
        raise bad(f"unknown rule type {rule_type!r}")
    try:
        params = json.loads(row.rule_expression or "{}")
    except json.JSONDecodeError as exc:
        raise bad(f"rule_expression is not JSON: {exc}") from exc
    if not isinstance(params, dict):
        raise bad("rule_expression must be a JSON object")
    severity = row.severity
    if severity not in tuple(Severity):
        raise bad(f"severity must be WARN or FAIL, not {severity!r}")
    threshold = float(params.get("threshold", 0.0))
    common: dict[str, Any] = {
        "rule_id": rule_id,
        "rule_type": rule_type,
        "severity": severity,
        "threshold": threshold,
    }

    if rule_type in (RuleType.NOT_NULL, RuleType.UNIQUE):
        cols = params.get("columns") or []
        if not cols or not all(isinstance(c, str) for c in cols):
            raise bad("needs a non-empty list 'columns'")
        if rule_type == RuleType.UNIQUE:
            return CompiledRule(
                **common,
                columns=tuple(cols),
                violation_sql=None,
                sample_sql=_as_text(cols),
                unique_keys=tuple(cols),
            )
        predicate = " OR ".join(f"{quote(c)} IS NULL" for c in cols)
        return CompiledRule(
            **common, columns=tuple(cols), violation_sql=f"({predicate})", sample_sql=_as_text(cols)
        )

    if rule_type == RuleType.ROW_COUNT:
        low, high = params.get("min"), params.get("max")
        if low is None and high is None:
            raise bad("needs 'min', 'max' or both")
        bounds = (None if low is None else int(low), None if high is None else int(high))
        return CompiledRule(
            **common, columns=(), violation_sql=None, sample_sql=None, row_bounds=bounds
        )
    if rule_type == RuleType.AGGREGATE:
        expression = params.get("expression")
        if not isinstance(expression, str):
            raise bad("needs 'expression'")
        tree = vet_expression(expression, where=f"{where}.expression", allow_aggregates=True)
        if tree.find(exp.AggFunc) is None:
            raise bad("its expression needs an aggregate (sum, count, avg, min, max, ...)")
        return CompiledRule(
            **common, columns=(), violation_sql=None, sample_sql=None, aggregate_sql=render(tree)
        )
    if rule_type == RuleType.FOREIGN_KEY:
        cols = params.get("columns") or []
        refs = params.get("ref_columns") or cols
        target = params.get("references")
        if not cols or not isinstance(target, str) or len(refs) != len(cols):
            raise bad("needs 'columns', 'references' and as many 'ref_columns' as columns")
        return CompiledRule(
            **common,
            columns=tuple(cols),
            violation_sql=None,
            sample_sql=_as_text(cols),
            reference=(target, tuple(cols), tuple(refs)),
        )

    column = str(params.get("column") or "")
    if rule_type != RuleType.EXPRESSION and not column:
        raise bad("needs 'column'")
    if rule_type == RuleType.RANGE:
        low, high = params.get("min"), params.get("max")
        if low is None and high is None:
            raise bad("needs 'min', 'max' or both")
        checks = []
        if low is not None:
            checks.append(f"{quote(column)} >= {_literal(float(low))}")
        if high is not None:
            checks.append(f"{quote(column)} <= {_literal(float(high))}")
        pred = f"({quote(column)} IS NOT NULL AND NOT ({' AND '.join(checks)}))"
    elif rule_type == RuleType.REGEX:
        pattern = params.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise bad("needs 'pattern'")
        pred = (
            f"({quote(column)} IS NOT NULL AND NOT "
            f"(CAST({quote(column)} AS STRING) RLIKE {sql_string(pattern)}))"
        )
    elif rule_type == RuleType.ALLOWED_VALUES:
        values = params.get("values") or []
        if not values:
            raise bad("needs a non-empty list 'values'")
        listed = ", ".join(_literal(v) for v in values)
        pred = f"({quote(column)} IS NOT NULL AND {quote(column)} NOT IN ({listed}))"
    elif rule_type == RuleType.FRESHNESS:
        seconds = _seconds(params.get("max_age"))
        if seconds is None:
            raise bad("needs 'max_age' as '<n> seconds|minutes|hours|days'")
        pred = (
            f"({quote(column)} IS NOT NULL AND CAST({quote(column)} AS TIMESTAMP) < "
            f"current_timestamp() - make_dt_interval(0, 0, 0, {seconds}))"
        )
    elif rule_type == RuleType.EXPRESSION:
        expression = params.get("expression")
        if not isinstance(expression, str):
            raise bad("needs 'expression'")
        safe = vetted_sql(expression, where=f"{where}.expression")
        pred = f"(NOT coalesce(({safe}), FALSE))"
        return CompiledRule(**common, columns=(), violation_sql=pred, sample_sql=None)
    else:
        raise bad(f"unknown rule type {rule_type!r}")
    return CompiledRule(
        **common, columns=(column,), violation_sql=pred, sample_sql=_as_text([column])
    )


def compile_rules(rows: Iterable[RuleDef]) -> list[CompiledRule]:
    """Compile all rules, reporting every broken one at once."""
    compiled, errors = [], []
    for row in sorted(rows, key=lambda r: r.rule_id):
        try:
            compiled.append(compile_rule(row))
        except ValidationError as exc:
            errors += exc.errors
    if errors:
        raise ValidationError(
            f"{len(errors)} quality rule(s) cannot be compiled",
            where="quality_rules",
            errors=errors,
            fix="correct or deactivate the listed rules",
        )
    return compiled
