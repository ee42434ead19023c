"""Checks of each dataset against the others: parents and the layer rules of invariant 2,
SQL models, load types and what they need (keys, full snapshots), the columns its
expressions and keys name, and where `fail_behavior: drop` may not go."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lakeguard.records.sources.kinds import DEFAULT_KIND
from lakeguard.rules.catalog.models import Dataset, Layer, MetadataDocument
from lakeguard.rules.catalog.sql_models import check_model, model_parents
from lakeguard.rules.quality.fail_behavior import whole_dataset
from lakeguard.rules.quality.kinds.base import vet
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import DeleteMissing, FailBehavior, LoadType, SourceLoad


def check_datasets(doc: MetadataDocument, cols: dict[str, list[str] | None]) -> list[Problem]:
    """Each dataset's problems: parents and layers, SQL, load type, keys and expressions."""
    problems: list[Problem] = []
    by_id = {d.id: d for d in doc.datasets}
    fed = {o.dataset for o in doc.source_objects}
    tables = Counter(d.table_name for d in doc.datasets)
    for i, ds in enumerate(doc.datasets):
        loc: tuple[Any, ...] = ("datasets", i)
        if tables[ds.table_name] > 1:
            problems.append(Problem((*loc, "table"), f"table {ds.table_name} is used twice"))
        parents = model_parents(ds, by_id)
        for parent in ds.parents:
            if parent not in by_id:
                problems.append(Problem((*loc, "parents"), f"unknown parent dataset {parent!r}"))
        parent_layers = {by_id[p].layer for p in parents if p in by_id}
        if ds.sql is not None:
            if ds.layer is Layer.BRONZE:
                problems.append(Problem((*loc, "sql"), "a bronze dataset reads sources, not SQL"))
            if ds.filter is not None or ds.columns is not None:
                problems.append(Problem((*loc, "sql"), "a SQL model replaces filter and columns"))
            inputs = {p: cols.get(p) for p in parents}
            problems += [Problem((*loc, "sql"), m) for m in check_model(ds, by_id, inputs)[0]]
        elif ds.refresh_keys:
            problems.append(Problem((*loc, "refresh_keys"), "refresh_keys are for SQL models"))
        if ds.layer is Layer.BRONZE:
            if ds.parents:
                problems.append(Problem((*loc, "parents"), "a bronze dataset has no parents"))
            if ds.id not in fed:
                problems.append(Problem(loc, "no source object lands in this bronze dataset"))
        elif ds.layer is Layer.SILVER:
            if len(parents) != 1 and ds.sql is None:
                problems.append(Problem((*loc, "parents"), "a silver dataset needs one parent"))
            elif not parents:
                problems.append(Problem((*loc, "parents"), "a silver dataset needs a parent"))
            elif parent_layers - {Layer.BRONZE, Layer.SILVER}:
                problems.append(Problem((*loc, "parents"), "a silver parent is bronze or silver"))
        elif Layer.SILVER not in parent_layers:
            problems.append(Problem((*loc, "parents"), "a gold dataset requires a silver parent"))
        if ds.layer is not Layer.BRONZE and ds.id in fed:
            problems.append(Problem(loc, "source objects land only in bronze datasets"))
        load = ds.effective_load_type
        if load in (LoadType.MERGE, LoadType.SCD2) and not (ds.business_keys or ds.refresh_keys):
            problems.append(Problem((*loc, "business_keys"), f"a {load} load needs business keys"))
        snapshot = _reads_snapshots(doc, ds, by_id)
        if ds.layer is Layer.BRONZE and snapshot and load == LoadType.APPEND:
            problems.append(
                Problem(
                    (*loc, "load_type"),
                    "a full-snapshot source would append the whole snapshot again on every run: "
                    "use load_type full, merge or scd2",
                )
            )
        if ds.delete_missing != DeleteMissing.NONE and not snapshot:
            problems.append(
                Problem(
                    (*loc, "delete_missing"),
                    "missing keys mean deleted only in a full snapshot: its sources must be read "
                    "full (bronze), or its one parent loaded full",
                )
            )
        if ds.delete_missing != DeleteMissing.NONE and load not in (LoadType.MERGE, LoadType.SCD2):
            problems.append(
                Problem(
                    (*loc, "delete_missing"), "deleting missing keys needs a merge or scd2 load"
                )
            )
        if not isinstance(ds.hash_strategy, str) and cols.get(ds.id) is not None:
            listed = getattr(ds.hash_strategy, "include", None) or getattr(
                ds.hash_strategy, "exclude", []
            )
            for name in listed:
                if name not in (cols.get(ds.id) or []):
                    problems.append(Problem((*loc, "hash_strategy"), f"unknown column {name!r}"))
        input_cols = cols.get(parents[0]) if len(parents) == 1 else None
        if ds.layer is Layer.BRONZE:
            input_cols = cols.get(ds.id)
        if ds.filter is not None:
            problems += vet(ds.filter, (*loc, "filter"), input_cols)
        for name, expr in (ds.columns or {}).items():
            problems += vet(expr, (*loc, "columns", name), input_cols)
        known = cols.get(ds.id)
        for field in ("business_keys", "sequence_by"):
            value = getattr(ds, field)
            names = value if isinstance(value, list) else ([value] if value else [])
            if known is not None:
                for name in names:
                    if name not in known:
                        problems.append(Problem((*loc, field), f"unknown column {name!r}"))
    return problems


def _reads_snapshots(doc: MetadataDocument, ds: Dataset, by_id: dict[str, Dataset]) -> bool:
    """Whether each batch of `ds` is a whole snapshot (so a missing key was deleted)."""
    if ds.layer is Layer.BRONZE:
        kinds = {s.id: s.kind for s in doc.source_systems}
        objects = [o for o in doc.source_objects if o.dataset == ds.id]
        return bool(objects) and all(
            o.kind_defaults(kinds.get(o.system, DEFAULT_KIND))[1] == SourceLoad.FULL
            for o in objects
        )
    parents = [by_id[p] for p in ds.parents if p in by_id]
    return len(parents) == 1 and parents[0].effective_load_type == LoadType.FULL


def check_drops(doc: MetadataDocument) -> list[Problem]:
    """`fail_behavior: drop` only where a batch is not the whole dataset: in a full load or a
    snapshot that deletes missing keys, a dropped row would read as a deleted one."""
    by_id = {d.id: d for d in doc.datasets}

    def whole(ds: Dataset | None) -> bool:
        return ds is not None and whole_dataset(ds.effective_load_type, ds.delete_missing)

    why = (
        "drop cannot be used where each batch is the whole dataset (load_type full or "
        "delete_missing): a dropped row would be deleted; use quarantine or abort"
    )
    problems = [
        Problem(("source_objects", i, "fail_behavior"), why)
        for i, obj in enumerate(doc.source_objects)
        if obj.fail_behavior == FailBehavior.DROP and whole(by_id.get(obj.dataset))
    ]
    problems += [
        Problem(("datasets", i, "fail_behavior"), why)
        for i, ds in enumerate(doc.datasets)
        if ds.fail_behavior == FailBehavior.DROP and whole(ds)
    ]
    return problems
