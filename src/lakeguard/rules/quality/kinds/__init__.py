"""Rule kinds: one module each, registered here, the one list of them (pure).

Adding a kind is one module with its class (a `RuleKind` with a `type` Literal, its
parameters, checks, compilation and explanation), its test, a `RuleType` member, and its
entry in `KINDS` below. The registry refuses to load when a kind module is not registered or a
`RuleType` has no kind, so nothing is forgotten silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args

from pydantic import Field, JsonValue, TypeAdapter
from pydantic import ValidationError as PydanticError

from lakeguard.rules.quality.kinds.aggregate import AggregateRule
from lakeguard.rules.quality.kinds.allowed_values import AllowedValuesRule
from lakeguard.rules.quality.kinds.base import RuleKind
from lakeguard.rules.quality.kinds.expression import ExpressionRule
from lakeguard.rules.quality.kinds.foreign_key import ForeignKeyRule
from lakeguard.rules.quality.kinds.freshness import FreshnessRule
from lakeguard.rules.quality.kinds.not_empty_string import NotEmptyStringRule
from lakeguard.rules.quality.kinds.not_null import NotNullRule
from lakeguard.rules.quality.kinds.range import RangeRule
from lakeguard.rules.quality.kinds.regex import RegexRule
from lakeguard.rules.quality.kinds.row_count import RowCountRule
from lakeguard.rules.quality.kinds.unique import UniqueRule
from lakeguard.words.errors import ValidationError
from lakeguard.words.registries import refuse_incomplete, unregistered
from lakeguard.words.vocabulary import DECLARABLE_RULE_TYPES

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import RuleDef

KINDS: tuple[type[RuleKind], ...] = (
    NotNullRule,
    RangeRule,
    UniqueRule,
    RegexRule,
    AllowedValuesRule,
    ExpressionRule,
    RowCountRule,
    ForeignKeyRule,
    FreshnessRule,
    AggregateRule,
    NotEmptyStringRule,
)


def _type_name(kind: type[RuleKind]) -> str:
    (name,) = get_args(kind.model_fields["type"].annotation)
    return str(name)


RULE_KINDS: dict[str, type[RuleKind]] = {_type_name(k): k for k in KINDS}
# Kinds a rule written under a source column may have (seed 001's per-column rule sets).
PER_COLUMN_KINDS: tuple[str, ...] = tuple(n for n, k in RULE_KINDS.items() if k.per_column)


def _check_registry() -> None:
    """Refuse to load with a kind module left out of KINDS, or a RuleType without a kind."""
    problems = [f"module kinds/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)]
    for name in sorted(set(DECLARABLE_RULE_TYPES) ^ set(RULE_KINDS)):
        side = "has no kind class" if name in DECLARABLE_RULE_TYPES else "is not a RuleType"
        problems.append(f"rule type {name} {side}")
    refuse_incomplete(
        "rule kind",
        problems,
        "register each kind in lakeguard/rules/quality/kinds/__init__.py KINDS and "
        "lakeguard.words.vocabulary.RuleType",
    )


_check_registry()

if TYPE_CHECKING:
    Rule = RuleKind
else:
    # The discriminated union the document and the store parse rules into.
    Rule = Annotated[Union[tuple(KINDS)], Field(discriminator="type")]  # noqa: UP007

_ADAPTER: TypeAdapter[Any] = TypeAdapter(Rule)


def parse_rule(data: Mapping[str, JsonValue]) -> RuleKind:
    """A rule from plain data (a document entry); pydantic's error when it is not one."""
    found: RuleKind = _ADAPTER.validate_python(data)
    return found


def stored_rule(row: RuleDef) -> RuleKind:
    """A `quality_rules` row parsed back into its kind class (ValidationError naming the
    rule, what is wrong and what the kind needs)."""
    where = f"quality_rules[rule_id={row.rule_id}]"

    def bad(message: str) -> ValidationError:
        return ValidationError(
            f"rule {row.rule_id} cannot be compiled: {message}",
            where=where,
            errors=[{"path": where, "message": message}],
            fix=f"correct the rule; rule types are {', '.join(RULE_KINDS)}",
        )

    kind = RULE_KINDS.get(row.rule_type)
    if kind is None:
        raise bad(f"unknown rule type {row.rule_type!r}")
    try:
        params = json.loads(row.rule_expression or "{}")
    except json.JSONDecodeError as exc:
        raise bad(f"rule_expression is not JSON: {exc}") from exc
    if not isinstance(params, dict):
        raise bad("rule_expression must be a JSON object")
    data = {
        **params,
        "id": row.rule_id,
        "dataset": row.dataset_id,
        "severity": row.severity,
        "description": row.description,
        "type": row.rule_type,
    }
    try:
        return kind.model_validate(data)
    except PydanticError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'rule'}: {e['msg']}" for e in exc.errors()
        )
        raise bad(f"{kind.usage} ({details})") from None
