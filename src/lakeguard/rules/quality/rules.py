"""Compile stored quality rules for the engine (pure).

Each `quality_rules` row is parsed back into its kind class (`lakeguard.rules.quality.kinds`), which
compiles itself: a row-level rule to a *violation predicate* (SQL true exactly for the rows
that break it), the others to a batch check. Every broken rule is reported at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from lakeguard.records.definitions.records import RuleDef
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.rules.quality.kinds import RULE_KINDS, stored_rule
from lakeguard.words.errors import ValidationError

__all__ = ["CompiledRule", "compile_rule", "compile_rules"]


def compile_rule(row: RuleDef) -> CompiledRule:
    """Compile one `quality_rules` row; an unknown type or bad parameters is a ValidationError."""
    spec = stored_rule(row)
    try:
        return spec.compile()
    except ValueError as exc:
        where = f"quality_rules[rule_id={row.rule_id}]"
        message = str(exc)
        raise ValidationError(
            f"rule {row.rule_id} cannot be compiled: {message}",
            where=where,
            errors=[{"path": where, "message": message}],
            fix=f"correct the rule; rule types are {', '.join(RULE_KINDS)}",
        ) from None


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
