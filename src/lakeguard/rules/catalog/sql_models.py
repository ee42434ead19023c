"""SQL models in metadata documents: parents, vetting and column checks (pure).

A silver or gold dataset may be one SELECT over its parents, each named by its dataset id. Its
parents are the datasets the query reads (or must equal a declared `parents` list); where every
parent's columns are known, sqlglot resolves the query against them, so an unknown column is
found at validate time with its location.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify

from lakeguard.records.sqlsafety import vet_query
from lakeguard.rules.catalog.models import Dataset
from lakeguard.words.errors import LakeTxError, ValidationError


def model_parents(ds: Dataset, datasets: Collection[str]) -> list[str]:
    """The datasets a dataset reads: declared, or those its SQL model names."""
    if ds.sql is None or ds.parents:
        return list(ds.parents)
    try:
        return list(vet_query(ds.sql, where=ds.id, datasets=datasets).parents)
    except LakeTxError:
        return []


def check_model(
    ds: Dataset,
    datasets: Collection[str],
    columns: Mapping[str, list[str] | None],
) -> tuple[list[str], list[str] | None]:
    """(problems, output columns) of a dataset's SQL model; columns None when unknown."""
    assert ds.sql is not None
    try:
        query = vet_query(ds.sql, where=ds.id, datasets=[d for d in datasets if d != ds.id])
    except ValidationError as exc:
        return [e["message"] for e in exc.errors] or [exc.what], None
    except LakeTxError as exc:
        return [exc.what], None
    problems = []
    if ds.parents and sorted(ds.parents) != list(query.parents):
        problems.append(
            f"parents {sorted(ds.parents)} differ from the datasets the query reads "
            f"{list(query.parents)}"
        )
    known = {p: columns.get(p) for p in query.parents}
    if any(v is None for v in known.values()):
        return problems, None
    schema: dict[str, object] = {
        p: dict.fromkeys(cols or [], "string") for p, cols in known.items()
    }
    try:
        qualified = qualify(query.tree.copy(), schema=schema, dialect="spark")
    except (OptimizeError, SqlglotError) as exc:
        problems.append(str(exc).split(". Line:")[0])
        return problems, None
    return problems, [s.alias_or_name for s in qualified.selects]
