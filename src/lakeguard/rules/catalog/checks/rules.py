"""Checks of the quality rules: their dataset exists, the columns they name, ids unique
across dataset-level and column-level rules."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.quality.kinds.base import KnownColumns, RuleKind
from lakeguard.words.problems import Problem


def _check_rule(rule: RuleKind, loc: tuple[Any, ...], cols: KnownColumns) -> list[Problem]:
    if rule.dataset not in cols:
        return [Problem((*loc, "dataset"), f"unknown dataset {rule.dataset!r}")]
    return rule.check(cols, loc)


def check_rules(doc: MetadataDocument, cols: dict[str, list[str] | None]) -> list[Problem]:
    """Each rule's problems, dataset-level and column-level, and rule ids used twice."""
    problems: list[Problem] = []
    for i, rule in enumerate(doc.rules):
        problems += _check_rule(rule, ("rules", i), cols)
    for loc, rule in doc.column_rules():
        if isinstance(rule, str):
            problems.append(Problem(loc, rule))
        else:
            problems += _check_rule(rule, loc, cols)
    ids = Counter(r.id for r in doc.all_rules)
    problems += [
        Problem(loc, f"rule id {r.id!r} is used twice")
        for loc, r in doc.column_rules()
        if not isinstance(r, str) and ids[r.id] > 1
    ]
    return problems
