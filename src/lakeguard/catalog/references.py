"""Cross-reference checks of a metadata document (pure).

The models check each entry alone; this module checks how entries fit together: unique ids,
existing parents and systems, the layer rules of invariant 2, columns that rules and keys name,
vetted SQL expressions, and acyclic job graphs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from croniter import croniter
from pydantic import ValidationError as PydanticError

from lakeguard.catalog.models import Dataset, Layer, MetadataDocument, SourceObject
from lakeguard.catalog.problems import Problem
from lakeguard.catalog.sql_models import check_model, model_parents
from lakeguard.errors import LakeTxError
from lakeguard.planning import CycleError, order_tasks
from lakeguard.policy.expression import DEFAULTS, parse
from lakeguard.policy.pii import Shape, raw_pii
from lakeguard.quality.fail_behavior import whole_dataset
from lakeguard.quality.kinds.base import KnownColumns, RuleKind, vet
from lakeguard.schema.drift import SHIPPED_PROFILES
from lakeguard.source_kinds import (
    DEFAULT_KIND,
    ObjectFacts,
    SourceKind,
    shared_problems,
    source_kind,
)
from lakeguard.vocabulary import (
    SCD2_COLUMNS,
    DeleteMissing,
    Enforcement,
    FailBehavior,
    LoadType,
    SourceLoad,
)


def dataset_columns(doc: MetadataDocument) -> dict[str, list[str] | None]:
    """Output columns of each dataset, where the document determines them (None: unknown)."""
    by_id = {d.id: d for d in doc.datasets}
    result: dict[str, list[str] | None] = {}

    def columns_of(ds: Dataset, seen: frozenset[str]) -> list[str] | None:
        if ds.id in result:
            return result[ds.id]
        found = _own_columns(ds, seen)
        if found is not None and ds.effective_load_type == LoadType.SCD2:
            found = [*found, *SCD2_COLUMNS]
        return found

    def _own_columns(ds: Dataset, seen: frozenset[str]) -> list[str] | None:
        if ds.sql is not None:
            parents = model_parents(ds, by_id)
            if any(p in seen or p not in by_id for p in parents):
                return None
            inputs = {p: columns_of(by_id[p], seen | {ds.id}) for p in parents}
            return check_model(ds, by_id, inputs)[1]
        if ds.columns is not None:
            return list(ds.columns)
        if ds.layer is Layer.BRONZE:
            cols: list[str] = []
            for obj in doc.source_objects:
                if obj.dataset == ds.id:
                    cols += [c.name for c in obj.columns if c.name not in cols]
            return cols or None
        if len(ds.parents) == 1 and ds.parents[0] in by_id and ds.parents[0] not in seen:
            return columns_of(by_id[ds.parents[0]], seen | {ds.id})
        return None

    for ds in doc.datasets:
        result[ds.id] = columns_of(ds, frozenset())
    return result


def _duplicates(section: str, ids: list[str]) -> list[Problem]:
    counts = Counter(ids)
    return [
        Problem((section, i, "id"), f"id {v!r} is used {counts[v]} times in {section}")
        for i, v in enumerate(ids)
        if counts[v] > 1
    ]


def _check_datasets(doc: MetadataDocument, cols: dict[str, list[str] | None]) -> list[Problem]:
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


def _check_rule(rule: RuleKind, loc: tuple[Any, ...], cols: KnownColumns) -> list[Problem]:
    if rule.dataset not in cols:
        return [Problem((*loc, "dataset"), f"unknown dataset {rule.dataset!r}")]
    return rule.check(cols, loc)


def _check_rules(doc: MetadataDocument, cols: dict[str, list[str] | None]) -> list[Problem]:
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


def _check_systems(doc: MetadataDocument) -> list[Problem]:
    problems: list[Problem] = []
    for i, sys in enumerate(doc.source_systems):
        loc = ("source_systems", i)
        problems += sys.source_kind.check_system(sys.options, sys.credential_ref, loc)
    return problems


def _kind_option_problems(
    obj: SourceObject, kind: SourceKind[Any, Any], loc: tuple[Any, ...]
) -> list[Problem]:
    """The object's options checked against its kind's typed model, each where it is written."""
    foreign = sorted(set(obj.written_kind_fields()) - set(kind.object_options.model_fields))
    if foreign:
        own = ", ".join(kind.object_options.model_fields) or "none"
        return [
            Problem((*loc, name), f"not an option of {kind.name} sources (theirs: {own})")
            for name in foreign
        ]
    try:
        obj.kind_options(kind.name)
    except PydanticError as exc:
        return [Problem((*loc, *err["loc"]), err["msg"]) for err in exc.errors()]
    return []


def _check_source_object(
    obj: SourceObject,
    kind: SourceKind[Any, Any],
    loc: tuple[Any, ...],
    siblings: int,
) -> list[Problem]:
    """What every kind checks alike (formats, load types, watermarks, paths), the object's
    options against its kind's model, then the kind's own checks."""
    fmt, load = obj.kind_defaults(kind.name)
    facts = ObjectFacts(
        locator=obj.locator,
        format=fmt,
        load_type=load,
        columns={c.name: c.type for c in obj.columns},
        watermark_column=obj.watermark_column,
        siblings=siblings,
    )
    problems = shared_problems(kind, facts, obj.lookback, loc)
    option_problems = _kind_option_problems(obj, kind, loc)
    if option_problems:
        return problems + option_problems
    return problems + kind.check_object(obj.kind_options(kind.name), facts, loc)


def _check_sources(doc: MetadataDocument) -> list[Problem]:
    problems: list[Problem] = _check_systems(doc)
    systems = {s.id: s.kind for s in doc.source_systems}
    datasets = {d.id for d in doc.datasets}
    per_dataset = Counter(o.dataset for o in doc.source_objects)
    for i, obj in enumerate(doc.source_objects):
        loc: tuple[Any, ...] = ("source_objects", i)
        if obj.system not in systems:
            problems.append(Problem((*loc, "system"), f"unknown system {obj.system!r}"))
            continue
        if obj.dataset not in datasets:
            problems.append(Problem((*loc, "dataset"), f"unknown dataset {obj.dataset!r}"))
        problems += _check_source_object(
            obj, source_kind(systems[obj.system]), loc, per_dataset[obj.dataset]
        )
    return problems


def _check_jobs(doc: MetadataDocument) -> list[Problem]:
    problems: list[Problem] = []
    datasets = {d.id for d in doc.datasets}
    for i, job in enumerate(doc.jobs):
        loc: tuple[Any, ...] = ("jobs", i)
        if job.schedule and not croniter.is_valid(job.schedule):
            problems.append(
                Problem((*loc, "schedule"), f"invalid cron expression {job.schedule!r}")
            )
        problems += _duplicates(f"jobs[{i}].tasks", [t.id for t in job.tasks])
        task_ids = {t.id for t in job.tasks}
        for j, task in enumerate(job.tasks):
            if task.dataset not in datasets:
                problems.append(
                    Problem((*loc, "tasks", j, "dataset"), f"unknown dataset {task.dataset!r}")
                )
            for dep in task.depends_on:
                if dep not in task_ids:
                    problems.append(
                        Problem((*loc, "tasks", j, "depends_on"), f"unknown task {dep!r}")
                    )
        try:
            order_tasks({t.id: list(t.depends_on) for t in job.tasks})
        except CycleError as exc:
            problems.append(Problem((*loc, "tasks"), str(exc)))
    return problems


def _check_lineage(doc: MetadataDocument) -> list[Problem]:
    """Datasets must not read themselves, directly or through others."""
    ids = {d.id for d in doc.datasets}
    graph = {d.id: [p for p in model_parents(d, ids) if p in ids] for d in doc.datasets}
    try:
        order_tasks(graph)
    except CycleError as exc:
        return [Problem(("datasets",), str(exc).replace("tasks", "datasets"))]
    return []


def _check_profiles(doc: MetadataDocument) -> list[Problem]:
    known = set(SHIPPED_PROFILES) | {p.id for p in doc.schema_profiles}
    problems = [
        Problem(("schema_profiles", i, "id"), f"{p.id!r} is a shipped profile; name it otherwise")
        for i, p in enumerate(doc.schema_profiles)
        if p.id in SHIPPED_PROFILES
    ]
    named: list[tuple[str, int, str]] = [
        ("source_objects", i, o.schema_profile) for i, o in enumerate(doc.source_objects)
    ]
    named += [("datasets", i, d.schema_profile) for i, d in enumerate(doc.datasets)]
    for section, i, profile in named:
        if profile not in known:
            problems.append(
                Problem(
                    (section, i, "schema_profile"),
                    f"unknown schema profile {profile!r} (known: {', '.join(sorted(known))})",
                )
            )
    return problems


def _check_policies(doc: MetadataDocument) -> list[Problem]:
    """Policy expressions parse; PII-blocking policies are met by the document's lineage."""
    problems: list[Problem] = []
    for i, policy in enumerate(doc.policies):
        try:
            parse(policy.expression or DEFAULTS[policy.type], policy.type, where="")
        except LakeTxError as exc:
            problems.append(Problem(("policies", i, "expression"), exc.what))
    guarded = {
        layer
        for p in doc.policies
        if p.type == "PII" and p.enforcement == Enforcement.BLOCK
        for layer in p.applies_to
    }
    if not guarded:
        return problems
    ids = {d.id for d in doc.datasets}
    shapes = {
        d.id: Shape(d.id, tuple(model_parents(d, ids)), d.columns, d.sql) for d in doc.datasets
    }
    tagged: dict[str, set[str]] = {}
    for obj in doc.source_objects:
        tagged.setdefault(obj.dataset, set()).update(c.name.lower() for c in obj.columns if c.pii)
    raw = raw_pii(shapes, tagged)
    for i, ds in enumerate(doc.datasets):
        if ds.layer in guarded and raw.get(ds.id):
            field = "sql" if ds.sql else "columns" if ds.columns is not None else "parents"
            problems.append(
                Problem(
                    ("datasets", i, field),
                    f"pii column(s) {', '.join(sorted(raw[ds.id]))} reach {ds.layer.value} "
                    "raw; a PII policy blocks that: mask them (sha2(col, 256), md5, mask, ...) "
                    "or drop them",
                )
            )
    return problems


def check_references(doc: MetadataDocument) -> list[Problem]:
    """Every cross-reference problem of the document (empty when it is consistent)."""
    problems: list[Problem] = [
        *_check_lineage(doc),
        *_check_profiles(doc),
        *_check_policies(doc),
    ]
    for section in (
        "schema_profiles",
        "policies",
        "source_systems",
        "source_objects",
        "datasets",
        "rules",
        "jobs",
    ):
        problems += _duplicates(section, [item.id for item in getattr(doc, section)])
    cols = dataset_columns(doc)
    problems += _check_sources(doc)
    problems += _check_datasets(doc, cols)
    problems += _check_rules(doc, cols)
    problems += _check_jobs(doc)
    problems += _check_drops(doc)
    return problems


def _check_drops(doc: MetadataDocument) -> list[Problem]:
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
