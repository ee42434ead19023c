"""The policy expression language: small, documented, validated, never Python (pure).

An expression is a boolean over the metrics its policy type provides (see `METRICS`):
numbers, the metric names, `+ - * /`, comparisons (`= == != <> < <= > >=`), `AND`, `OR`,
`NOT` and parentheses, e.g. `rows >= 0.5 * rows_mean AND rows <= 2 * rows_mean`. It is parsed
with sqlglot; any other construct (functions, strings, columns that are not metrics,
subqueries) is refused when the document is validated, with its location.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from lakeguard.rules.policy.kinds import KINDS
from lakeguard.words.errors import ValidationError

# The metrics each policy type evaluates its expression over, and its default expression.
METRICS: dict[str, dict[str, str]] = {k.name: k.metrics for k in KINDS}
DEFAULTS: dict[str, str] = {k.name: k.default for k in KINDS}

_BINARY: dict[type, Any] = {
    exp.Add: lambda a, b: a + b,
    exp.Sub: lambda a, b: a - b,
    exp.Mul: lambda a, b: a * b,
    exp.Div: lambda a, b: a / b if b else float("inf"),
    exp.EQ: lambda a, b: a == b,
    exp.NEQ: lambda a, b: a != b,
    exp.LT: lambda a, b: a < b,
    exp.LTE: lambda a, b: a <= b,
    exp.GT: lambda a, b: a > b,
    exp.GTE: lambda a, b: a >= b,
    exp.And: lambda a, b: bool(a) and bool(b),
    exp.Or: lambda a, b: bool(a) or bool(b),
}


_BOOLEAN = (exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE, exp.And, exp.Or)


def parse(text: str, policy_type: str, *, where: str) -> exp.Expression:
    """The validated tree of a policy expression; every problem named with `where`."""

    def refuse(reason: str) -> ValidationError:
        return ValidationError(
            f"policy expression {text!r} refused: {reason}",
            where=where,
            errors=[{"path": where, "message": reason}],
            fix=f"compare the {policy_type} metrics ({', '.join(METRICS[policy_type])}) with "
            "numbers, AND, OR, NOT, + - * / and parentheses",
        )

    if policy_type not in METRICS:
        raise refuse(f"unknown policy type {policy_type!r}")
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except SqlglotError as exc:
        raise refuse(f"it does not parse: {str(exc).splitlines()[0]}") from exc
    known = METRICS[policy_type]
    if not isinstance(tree, (*_BOOLEAN, exp.Not, exp.Boolean, exp.Paren)):
        raise refuse("it must be a comparison or a combination of comparisons")
    for node in tree.walk():
        if isinstance(node, exp.Column):
            if node.table or node.name not in known:
                raise refuse(f"{node.sql()!r} is not a {policy_type} metric")
        elif isinstance(node, exp.Literal):
            if node.is_string:
                raise refuse("strings are not part of the language")
        elif not isinstance(
            node, (*_BINARY, exp.Not, exp.Paren, exp.Neg, exp.Identifier, exp.Boolean)
        ):
            raise refuse(f"{type(node).__name__.lower()} is not part of the language")
    return tree


def evaluate(tree: exp.Expression, metrics: Mapping[str, float]) -> bool:
    """The expression's truth for these metric values."""
    return bool(_value(tree, metrics))


def _value(node: exp.Expr, metrics: Mapping[str, float]) -> Any:
    if isinstance(node, exp.Column):
        return metrics[node.name]
    if isinstance(node, exp.Literal):
        return float(node.this)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Paren):
        return _value(node.this, metrics)
    if isinstance(node, exp.Not):
        return not _value(node.this, metrics)
    if isinstance(node, exp.Neg):
        return -_value(node.this, metrics)
    assert isinstance(node, exp.Binary)
    operation = _BINARY[type(node)]
    return operation(_value(node.left, metrics), _value(node.right, metrics))
