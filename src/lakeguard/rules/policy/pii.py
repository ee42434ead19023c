"""Where pii-tagged values flow, raw or masked, from sources through every dataset (pure).

A source column tagged `pii` is raw pii in its bronze dataset. A derived dataset's output
column is raw pii when its expression reads a raw pii column of its input anywhere but inside
a masking or hashing function (`sha2(email, 256)` masks; `upper(email)` does not). Columns
that pass through unchanged (no `columns` mapping, `SELECT *`) stay raw. SQL models are
followed through their CTEs; unqualified names are matched against every input (a name
that is raw pii in any input counts as raw: the check errs on the safe side).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

MASKING_FUNCTIONS = frozenset({"sha1", "sha2", "md5", "hash", "xxhash64", "crc32", "mask"})


@dataclass(frozen=True)
class Shape:
    """What the lineage needs of a dataset: its parents and how it derives its columns."""

    dataset_id: str
    parents: tuple[str, ...] = ()
    columns: Mapping[str, str] | None = None
    sql: str | None = None


def _unmasked(expression: exp.Expr) -> set[str]:
    """Lower-case names of the columns an expression reads outside masking functions."""
    names = set()
    for column in expression.find_all(exp.Column):
        node, masked = column.parent, False
        while node is not None and node is not expression.parent:
            if isinstance(node, exp.Func) and _name(node) in MASKING_FUNCTIONS:
                masked = True
                break
            node = node.parent
        if not masked:
            # a qualified name reads a struct's field or a table's column: both count, so a
            # pii struct's field (`owner.email`) stays raw
            names |= {column.name.lower(), str(column.parts[0].name).lower()}
    return names


def _name(func: exp.Func) -> str:
    if isinstance(func, exp.Anonymous):
        return str(func.name).lower()
    return func.sql_name().lower()


def _select_raw(select: exp.Select, raw_inputs: set[str]) -> set[str]:
    out: set[str] = set()
    for projection in select.expressions:
        if isinstance(projection, exp.Star) or (
            isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
        ):
            out |= raw_inputs
            continue
        if _unmasked(projection) & raw_inputs:
            out.add(projection.alias_or_name.lower())
    return out


def _model_raw(sql: str, raw_inputs: set[str]) -> set[str]:
    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except SqlglotError:
        return set()  # vetting reports the model itself
    known = set(raw_inputs)
    for cte in tree.find_all(exp.CTE):
        body = cte.this
        if isinstance(body, exp.Select):
            known |= _select_raw(body, known)
    selects = [tree] if isinstance(tree, exp.Select) else list(tree.find_all(exp.Select))
    out: set[str] = set()
    for select in selects:
        if select.find_ancestor(exp.CTE) is None:
            out |= _select_raw(select, known)
    return out


def raw_pii(shapes: Mapping[str, Shape], source_pii: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """Each dataset's output columns that carry a pii value unmasked (lower-case names)."""
    result: dict[str, set[str]] = {}

    def of(dataset_id: str, seen: frozenset[str]) -> set[str]:
        if dataset_id in result:
            return result[dataset_id]
        shape = shapes.get(dataset_id)
        if shape is None or dataset_id in seen:
            return set()
        inputs = set(source_pii.get(dataset_id, set()))
        for parent in shape.parents:
            inputs |= of(parent, seen | {dataset_id})
        if shape.sql is not None:
            raw = _model_raw(shape.sql, inputs)
        elif shape.columns is not None:
            raw = set()
            for name, text in shape.columns.items():
                try:
                    expression = sqlglot.parse_one(text, read="spark")
                except SqlglotError:
                    continue
                if _unmasked(expression) & inputs:
                    raw.add(name.lower())
        else:
            raw = inputs
        result[dataset_id] = raw
        return raw

    for dataset_id in shapes:
        of(dataset_id, frozenset())
    return result
