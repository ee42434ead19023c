"""The stored definitions of a tenant written back as one metadata document (pure).

The inverse of `to_rows.document_rows`: what the control tables say now (including direct SQL
edits and the columns schema drift approved) becomes a document that `validate` accepts and
that `plan` finds nothing to change in. Only active rows are written; a rule or source object
of a deactivated dataset goes with it. The same rows give the same bytes: lists are sorted by
id, fields come in the models' order, and values equal to their defaults are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from typing import Any, TypeVar

import yaml
from pydantic import ValidationError as PydanticError

from lakeguard.records.checks.rule_rows import PolicyRuleRow, QualityRuleRow, SchemaRuleRow
from lakeguard.records.definitions.datasets import DatasetRow
from lakeguard.records.definitions.jobs import JobParameterRow, JobRow, JobTaskRow
from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.schema.drift import SHIPPED_PROFILES
from lakeguard.records.sources.kinds import DEFAULT_KIND, SOURCE_KINDS, source_kind
from lakeguard.records.sources.rows import SourceColumnRow, SourceObjectRow, SourceSystemRow
from lakeguard.rules.catalog.alert_rows import export_channels, export_routes
from lakeguard.rules.catalog.models import (
    Dataset,
    Job,
    MetadataDocument,
    Policy,
    SourceObject,
    Task,
    system_model,
)
from lakeguard.rules.catalog.sections import Document, Entry, drop_none, lean
from lakeguard.rules.policy.expression import DEFAULTS
from lakeguard.rules.quality.kinds import RULE_KINDS

# Every definition table an export reads: each a document makes but the targets (a layer's).
EXPORTED_TABLES = tuple(name for name, _ in DefinitionSet().tables() if name != "targets")
_LAYER_ORDER = {"bronze": 0, "silver": 1, "gold": 2}
R = TypeVar("R", bound=DefinitionRow)


def _json(text: str | None) -> Any:
    return json.loads(text) if text else {}


def _active(rows: Iterable[R]) -> list[R]:
    return [r for r in rows if r.active]


def _profiles(rows: Sequence[SchemaRuleRow]) -> list[Entry]:
    by_name: dict[str, list[SchemaRuleRow]] = {}
    for row in rows:
        by_name.setdefault(row.profile, []).append(row)
    out = []
    for name in sorted(by_name):
        found = {r.change_kind: r.decision for r in by_name[name]}
        shipped = {k.value: v.value for k, v in SHIPPED_PROFILES.get(name, {}).items()}
        if name in SHIPPED_PROFILES and found == shipped:
            continue  # shipped with the code; every document gets it
        description = by_name[name][0].description or None
        out.append(
            drop_none(
                {"id": name, "rules": dict(sorted(found.items())), "description": description}
            )
        )
    return out


def _policies(rows: Sequence[PolicyRuleRow]) -> list[Entry]:
    out = []
    for row in sorted(rows, key=lambda r: r.policy_id):
        kind = row.policy_type
        expression = row.policy_expression
        window = _json(row.parameters).get("window", 5)
        out.append(
            lean(
                {
                    "id": row.policy_id,
                    "type": kind,
                    "applies_to": list(row.applies_to_layer.split(",")),
                    "enforcement": row.enforcement,
                    "expression": None if expression == DEFAULTS.get(kind) else expression,
                    "window": None if window == 5 else window,
                    "description": row.description,
                },
                Policy,
            )
        )
    return out


def _under(root: Any, home: str | None) -> Any:
    """A stored root under `home` as the path relative to it (an export for a tenant, whose
    plan takes relative roots from its home, never shows the server's folders)."""
    if home is None or not isinstance(root, str) or not root.startswith("/"):
        return root
    base = home.rstrip("/")
    if root == base:
        return "."
    return root[len(base) + 1 :] if root.startswith(base + "/") else root


def _systems(rows: Sequence[SourceSystemRow], home: str | None = None) -> list[Entry]:
    out = []
    for row in sorted(rows, key=lambda r: r.source_system_id):
        kind = row.kind or DEFAULT_KIND
        options = _json(row.connection_options)
        if isinstance(options, dict) and "root" in options:
            options["root"] = _under(options["root"], home)
        if kind in SOURCE_KINDS:
            options = lean(options, source_kind(kind).system_options)
        entry = {
            "id": row.source_system_id,
            "kind": kind,
            "description": row.description,
            "enabled": None if row.enabled else False,
            "options": options or None,
            "credential_ref": row.credential_ref,
        }
        out.append(lean(entry, system_model(kind)))
    return out


def _column(row: SourceColumnRow) -> Entry:
    return drop_none(
        {
            "name": row.column_name,
            "type": row.data_type,
            "nullable": None if row.nullable else False,
            "description": row.description,
            "pii": True if row.is_pii else None,
        }
    )


def _objects(
    rows: Sequence[SourceObjectRow], columns: Sequence[SourceColumnRow], kinds: dict[str, str]
) -> list[Entry]:
    by_object: dict[str, list[SourceColumnRow]] = {}
    for col in columns:
        by_object.setdefault(col.source_object_id, []).append(col)
    out = []
    for row in sorted(rows, key=lambda r: r.source_object_id):
        cols = sorted(by_object.get(row.source_object_id, []), key=lambda c: c.ordinal)
        kind_name = kinds.get(row.source_system_id, DEFAULT_KIND)
        entry: Entry = {
            "id": row.source_object_id,
            "system": row.source_system_id,
            "locator": row.locator,
            "format": row.format,
            "options": _json(row.read_options) or None,
            "dataset": row.dataset_id,
            "load_type": row.load_type,
            "watermark_column": row.watermark_column,
            **_kind_options(_json(row.ingest_options), kind_name),
            "fail_behavior": row.dq_fail_behavior,
            "schema_profile": row.schema_compat_profile,
            "max_malformed_ratio": row.max_malformed_ratio,
            "relationship": row.relationship,
            "columns": [_column(c) for c in cols],
        }
        kind = SOURCE_KINDS.get(kind_name)
        if kind is not None and entry.get("format") == kind.formats[0]:
            entry["format"] = None  # the kind's default, as the document would have left it
        if kind is not None and entry.get("load_type") == kind.default_load:
            entry["load_type"] = None
        out.append(lean(entry, SourceObject))
    return out


def _kind_options(stored: Entry, kind: str) -> Entry:
    """An object's stored lookback and options of its kind, without the kind's defaults."""
    lookback = {"lookback": stored["lookback"]} if stored.get("lookback") is not None else {}
    if kind not in SOURCE_KINDS:
        return {**lookback, **stored}
    model = source_kind(kind).object_options
    own = {k: v for k, v in stored.items() if k in model.model_fields}
    return {**lookback, **lean(own, model)}


def _datasets(rows: Sequence[DatasetRow]) -> list[Entry]:
    out = []
    ordered = sorted(rows, key=lambda r: (_LAYER_ORDER.get(r.layer, 9), r.dataset_id))
    for row in ordered:
        dataset_id, layer = row.dataset_id, row.layer
        transform = _json(row.transform)
        entry: Entry = {
            "id": dataset_id,
            "name": None if row.dataset_name in (None, dataset_id) else row.dataset_name,
            "layer": layer,
            "domain": row.domain,
            "owner": row.owner,
            "tags": list(row.tags or []) or None,
            "description": row.description,
            "table": None if row.table_name == f"{layer}.{dataset_id}" else row.table_name,
            "parents": list(row.parents) or None,
            "business_keys": list(row.business_keys) or None,
            "sequence_by": row.sequence_by,
            "hash_strategy": transform.get("hash_strategy"),
            "delete_missing": transform.get("delete_missing"),
            "filter": transform.get("filter"),
            "columns": transform.get("columns"),
            "sql": transform.get("sql"),
            "refresh_keys": transform.get("refresh_keys"),
            "profile": transform.get("profile"),
            "schema_profile": transform.get("schema_profile"),
            "fail_behavior": transform.get("fail_behavior"),
        }
        entry = lean(entry, Dataset)
        # the load type only when it is not the one the rest of the entry implies
        try:
            implied: str | None = Dataset.model_validate(entry).effective_load_type.value
        except PydanticError:
            implied = None  # edited into something invalid: say everything stored
        if row.load_type and row.load_type != implied:
            entry["load_type"] = row.load_type
        out.append(entry)
    return out


def _rule_order(rules: Sequence[QualityRuleRow], columns: Sequence[SourceColumnRow]) -> list[str]:
    """Rule ids in an order that gives every column its stored `dq_rule_set` order back (the
    document's rule order decides it); by id where nothing constrains them."""
    ids = sorted(r.rule_id for r in rules)
    graph: dict[str, set[str]] = {i: set() for i in ids}
    for col in columns:
        listed = [i for i in _json(col.dq_rule_set) or [] if i in graph]
        for before, after in pairwise(listed):
            graph[after].add(before)
    sorter: TopologicalSorter[str] = TopologicalSorter(graph)
    try:
        sorter.prepare()
    except CycleError:
        return ids  # edited by hand into an order no document has; plan will say so
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready())
        order += ready
        sorter.done(*ready)
    return order


def _rules(rows: Sequence[QualityRuleRow], columns: Sequence[SourceColumnRow]) -> list[Entry]:
    by_id = {r.rule_id: r for r in rows}
    out = []
    for rule_id in _rule_order(rows, columns):
        row = by_id[rule_id]
        params = _json(row.rule_expression)
        entry: Entry = {
            "id": rule_id,
            "dataset": row.dataset_id,
            "type": row.rule_type,
            **{k: v for k, v in params.items() if v is not None},
            "severity": row.severity,
            "description": row.description,
        }
        out.append(lean(entry, RULE_KINDS.get(row.rule_type)))
    return out


def _jobs(
    rows: Sequence[JobRow], parameters: Sequence[JobParameterRow], tasks: Sequence[JobTaskRow]
) -> list[Entry]:
    out = []
    for row in sorted(rows, key=lambda r: r.job_id):
        own_tasks = sorted(
            (t for t in tasks if t.job_id == row.job_id), key=lambda t: t.execution_order
        )
        params: Entry = {
            p.param_key: p.param_value
            for p in sorted(parameters, key=lambda p: p.param_key)
            if p.job_id == row.job_id
        }
        # each field as its row reads it (a NULL as its default); `_lean` leaves out what the
        # model defaults to, the same default
        entry: Entry = {
            "id": row.job_id,
            "description": row.description,
            "owner": row.owner,
            "schedule": row.schedule,
            "timezone": row.timezone,
            "triggers": list(row.trigger_sources),
            "webhook_secret_ref": row.webhook_secret_ref,
            "enabled": row.enabled,
            "max_retries": row.max_retries,
            "retry_delay_seconds": row.retry_delay_seconds,
            "parameters": params,
            "tasks": [
                lean(
                    {"id": t.task_id, "dataset": t.dataset_id, "depends_on": list(t.depends_on)},
                    Task,
                )
                for t in own_tasks
            ],
        }
        out.append(lean(entry, Job))
    return out


def export_document(stored: DefinitionSet, *, home: str | None = None) -> Document:
    """The document the active stored rows say (plain data, ready for YAML); roots under
    `home` relative to it."""
    datasets = _active(stored.dataset_registry)
    live = {d.dataset_id for d in datasets}
    system_rows = _active(stored.source_systems)
    systems = {s.source_system_id for s in system_rows}
    objects = [
        o
        for o in _active(stored.source_objects)
        if o.dataset_id in live and o.source_system_id in systems
    ]
    kept = {o.source_object_id for o in objects}
    columns = [c for c in _active(stored.source_object_columns) if c.source_object_id in kept]
    rules = [r for r in _active(stored.quality_rules) if r.dataset_id in live]
    jobs = _active(stored.jobs)
    job_ids = {j.job_id for j in jobs}
    document: Document = {
        "version": 1,
        "schema_profiles": _profiles(_active(stored.schema_compatibility_rules)),
        "policies": _policies(_active(stored.policy_rules)),
        "source_systems": _systems(system_rows, home),
        "source_objects": _objects(
            objects,
            columns,
            {s.source_system_id: s.kind or DEFAULT_KIND for s in system_rows},
        ),
        "datasets": _datasets(datasets),
        "rules": _rules(rules, columns),
        "jobs": _jobs(
            jobs,
            [p for p in _active(stored.job_parameters) if p.job_id in job_ids],
            [t for t in _active(stored.job_tasks) if t.job_id in job_ids],
        ),
        "notification_channels": export_channels(_active(stored.notification_channels)),
        "notification_routes": export_routes(_active(stored.notification_routes)),
    }
    return {k: v for k, v in document.items() if v != []}


def export_yaml(stored: DefinitionSet, *, tenant: str, home: str | None = None) -> str:
    """The export as YAML text, headed by where it came from (no time: the same store gives
    the same bytes); roots under `home` relative to it."""
    document = export_document(stored, home=home)
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return f"# definitions of tenant {tenant}, written by `laketx export`\n{body}"


def check_export(document: Document) -> MetadataDocument:
    """The export parsed as a document (pydantic's error when direct edits broke it)."""
    return MetadataDocument.model_validate(document)
