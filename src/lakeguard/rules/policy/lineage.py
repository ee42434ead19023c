"""Column lineage of the declared datasets (pure): which parent columns each output column of
a dataset reads, where the definitions tell.

A bronze dataset's columns are its source objects' columns, one for one. A derived dataset
with a `columns` mapping reads the columns each expression names; one without passes its
parent's columns through; a SQL model is traced by sqlglot's column lineage (through CTEs and
joins) once every parent's columns are known. Anything else is unknown (None), never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.lineage import lineage
from sqlglot.optimizer.qualify import qualify

from lakeguard.records.sqlsafety import column_root
from lakeguard.rules.policy.pii import Shape


@dataclass(frozen=True, order=True)
class ColumnRef:
    """A column of a dataset (or of a source object)."""

    dataset: str
    column: str


Derivation = dict[str, list[ColumnRef]]  # output column -> the input columns it reads


def _expression_inputs(text: str, parents: Mapping[str, list[str] | None]) -> list[ColumnRef]:
    try:
        tree = sqlglot.parse_one(text, read="spark")
    except SqlglotError:
        return []
    found: set[ColumnRef] = set()
    for column in tree.find_all(exp.Column):
        name = column_root(column)  # `owner.name` reads the struct column `owner`
        for parent, columns in parents.items():
            if columns is None or name.lower() in {c.lower() for c in columns}:
                found.add(ColumnRef(parent, name))
    return sorted(found)


def _model(sql: str, parents: Mapping[str, list[str]]) -> Derivation | None:
    schema: dict[str, object] = {
        p: dict.fromkeys(columns, "string") for p, columns in parents.items()
    }
    try:
        tree = qualify(sqlglot.parse_one(sql, read="spark"), schema=schema, dialect="spark")
        assert isinstance(tree, exp.Query)
        derived: Derivation = {}
        for select in tree.selects:
            name = select.alias_or_name
            node = lineage(name, sql, schema=schema, dialect="spark")
            leaves = {
                ColumnRef(leaf.source.name, exp.to_column(leaf.name).name)
                for leaf in node.walk()
                if not leaf.downstream and isinstance(leaf.source, exp.Table)
            }
            derived[name] = sorted(r for r in leaves if r.dataset in parents)
        return derived
    except (SqlglotError, AssertionError, KeyError, ValueError):
        return None  # a model sqlglot cannot trace: its columns stay unknown


def derivation(shape: Shape, parents: Mapping[str, list[str] | None]) -> Derivation | None:
    """Each output column of a derived dataset and the parent columns it reads (None:
    unknown), given its parents' columns (None where unknown)."""
    if shape.sql is not None:
        if any(columns is None for columns in parents.values()):
            return None
        return _model(shape.sql, {p: c or [] for p, c in parents.items()})
    if shape.columns is not None:
        return {name: _expression_inputs(text, parents) for name, text in shape.columns.items()}
    if len(parents) == 1:
        ((parent, columns),) = parents.items()
        if columns is not None:
            return {c: [ColumnRef(parent, c)] for c in columns}
    return None


def dataset_columns(
    shapes: Mapping[str, Shape], sourced: Mapping[str, Derivation]
) -> dict[str, Derivation | None]:
    """Every dataset's derivation: a bronze dataset's as given in `sourced` (from its source
    objects' columns), the others from their parents', in order."""
    result: dict[str, Derivation | None] = {}

    def of(dataset_id: str, seen: frozenset[str]) -> Derivation | None:
        if dataset_id in result:
            return result[dataset_id]
        shape = shapes.get(dataset_id)
        if shape is None or dataset_id in seen:
            return None
        if dataset_id in sourced:
            found: Derivation | None = dict(sourced[dataset_id])
        else:
            parents = {}
            for parent in shape.parents:
                parent_derivation = of(parent, seen | {dataset_id})
                parents[parent] = None if parent_derivation is None else list(parent_derivation)
            found = derivation(shape, parents)
        result[dataset_id] = found
        return found

    for dataset_id in shapes:
        of(dataset_id, frozenset())
    return result
