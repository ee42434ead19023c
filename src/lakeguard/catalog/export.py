"""The stored definitions of a tenant written back as one metadata document (pure).

The inverse of `to_rows.document_rows`: what the control tables say now (including direct SQL
edits and the columns schema drift approved) becomes a document that `validate` accepts and
that `plan` finds nothing to change in. Only active rows are written; a rule or source object
of a deactivated dataset goes with it. The same rows give the same bytes: lists are sorted by
id, fields come in the models' order, and values equal to their defaults are left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from graphlib import CycleError, TopologicalSorter
from itertools import pairwise
from typing import Any

import yaml
from pydantic import BaseModel
from pydantic import ValidationError as PydanticError

from lakeguard.catalog.alert_rows import ALERT_TABLES, export_channels, export_routes
from lakeguard.catalog.models import (
    Dataset,
    Job,
    MetadataDocument,
    Policy,
    SourceObject,
    Task,
    system_model,
)
from lakeguard.catalog.to_rows import Rows
from lakeguard.policy.expression import DEFAULTS
from lakeguard.quality.kinds import RULE_KINDS
from lakeguard.schema.drift import SHIPPED_PROFILES
from lakeguard.shapes import JsonObject, StoredRow
from lakeguard.source_kinds import DEFAULT_KIND, SOURCE_KINDS, source_kind

# Every definition table an export reads.
EXPORTED_TABLES = (
    "schema_compatibility_rules",
    "policy_rules",
    "source_systems",
    "source_objects",
    "source_object_columns",
    "dataset_registry",
    "quality_rules",
    "jobs",
    "job_parameters",
    "job_tasks",
    *ALERT_TABLES,
)
_LAYER_ORDER = {"bronze": 0, "silver": 1, "gold": 2}


def _json(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) and text else {}


def _active(rows: Iterable[StoredRow]) -> list[StoredRow]:
    return [r for r in rows if r.get("active", True)]


def _drop_none(entry: JsonObject) -> JsonObject:
    return {k: v for k, v in entry.items() if v is not None}


def _lean(entry: JsonObject, model: type[BaseModel] | None) -> JsonObject:
    """`entry` without nulls and without the values its model would default to anyway, its
    fields in the model's order (the order the docs and the JSON Schema give)."""
    fields = model.model_fields if model else {}
    names = [n for n in fields if n != "type"]
    if "type" in fields:  # a rule's kind reads first, after what it is and where it applies
        names.insert(names.index("dataset") + 1 if "dataset" in names else 1, "type")
    order = {name: i for i, name in enumerate(names)}
    out = {}
    for name, value in sorted(entry.items(), key=lambda kv: order.get(kv[0], len(order))):
        field = fields.get(name)
        if value is None:
            continue
        if field is not None and not field.is_required():  # noqa: SIM102 - narrows field
            if field.get_default(call_default_factory=True) == value:
                continue
        out[name] = value
    return out


def _profiles(rows: list[StoredRow]) -> list[JsonObject]:
    by_name: dict[str, list[StoredRow]] = {}
    for row in rows:
        by_name.setdefault(str(row["profile"]), []).append(row)
    out = []
    for name in sorted(by_name):
        found = {str(r["change_kind"]): str(r["decision"]) for r in by_name[name]}
        shipped = {k.value: v.value for k, v in SHIPPED_PROFILES.get(name, {}).items()}
        if name in SHIPPED_PROFILES and found == shipped:
            continue  # shipped with the code; every document gets it
        description = by_name[name][0].get("description") or None
        out.append(
            _drop_none(
                {"id": name, "rules": dict(sorted(found.items())), "description": description}
            )
        )
    return out


def _policies(rows: list[StoredRow]) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: str(r["policy_id"])):
        kind = str(row["policy_type"])
        expression = row.get("policy_expression")
        window = _json(row.get("parameters")).get("window", 5)
        out.append(
            _lean(
                {
                    "id": row["policy_id"],
                    "type": kind,
                    "applies_to": str(row["applies_to_layer"]).split(","),
                    "enforcement": row.get("enforcement"),
                    "expression": None if expression == DEFAULTS.get(kind) else expression,
                    "window": None if window == 5 else window,
                    "description": row.get("description"),
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


def _systems(rows: list[StoredRow], home: str | None = None) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: str(r["source_system_id"])):
        kind = str(row.get("kind") or DEFAULT_KIND)
        options = _json(row.get("connection_options"))
        if isinstance(options, dict) and "root" in options:
            options["root"] = _under(options["root"], home)
        if kind in SOURCE_KINDS:
            options = _lean(options, source_kind(kind).system_options)
        entry = {
            "id": row["source_system_id"],
            "kind": kind,
            "description": row.get("description"),
            "enabled": None if row.get("enabled", True) else False,
            "options": options or None,
            "credential_ref": row.get("credential_ref"),
        }
        out.append(_lean(entry, system_model(kind)))
    return out


def _column(row: StoredRow) -> JsonObject:
    return _drop_none(
        {
            "name": row["column_name"],
            "type": row.get("data_type"),
            "nullable": None if row.get("nullable", True) else False,
            "description": row.get("description"),
            "pii": True if row.get("is_pii") else None,
        }
    )


def _objects(
    rows: list[StoredRow], columns: list[StoredRow], kinds: dict[str, str]
) -> list[JsonObject]:
    by_object: dict[str, list[StoredRow]] = {}
    for col in columns:
        by_object.setdefault(str(col["source_object_id"]), []).append(col)
    out = []
    for row in sorted(rows, key=lambda r: str(r["source_object_id"])):
        cols = sorted(by_object.get(str(row["source_object_id"]), []), key=lambda c: c["ordinal"])
        kind_name = kinds.get(str(row["source_system_id"]), DEFAULT_KIND)
        entry: JsonObject = {
            "id": row["source_object_id"],
            "system": row["source_system_id"],
            "locator": row["locator"],
            "format": row.get("format"),
            "options": _json(row.get("read_options")) or None,
            "dataset": row["dataset_id"],
            "load_type": row.get("load_type"),
            "watermark_column": row.get("watermark_column"),
            **_kind_options(_json(row.get("ingest_options")), kind_name),
            "fail_behavior": row.get("dq_fail_behavior"),
            "schema_profile": row.get("schema_compat_profile"),
            "max_malformed_ratio": row.get("max_malformed_ratio") or None,
            "relationship": row.get("relationship"),
            "columns": [_column(c) for c in cols],
        }
        kind = SOURCE_KINDS.get(kind_name)
        if kind is not None and entry.get("format") == kind.formats[0]:
            entry["format"] = None  # the kind's default, as the document would have left it
        if kind is not None and entry.get("load_type") == kind.default_load:
            entry["load_type"] = None
        out.append(_lean(entry, SourceObject))
    return out


def _kind_options(stored: JsonObject, kind: str) -> JsonObject:
    """An object's stored lookback and options of its kind, without the kind's defaults."""
    lookback = {"lookback": stored["lookback"]} if stored.get("lookback") is not None else {}
    if kind not in SOURCE_KINDS:
        return {**lookback, **stored}
    model = source_kind(kind).object_options
    own = {k: v for k, v in stored.items() if k in model.model_fields}
    return {**lookback, **_lean(own, model)}


def _datasets(rows: list[StoredRow]) -> list[JsonObject]:
    out = []
    ordered = sorted(rows, key=lambda r: (_LAYER_ORDER.get(str(r["layer"]), 9), r["dataset_id"]))
    for row in ordered:
        dataset_id, layer = str(row["dataset_id"]), str(row["layer"])
        transform = _json(row.get("transform"))
        entry: JsonObject = {
            "id": dataset_id,
            "name": None if row.get("dataset_name") in (None, dataset_id) else row["dataset_name"],
            "layer": layer,
            "domain": row.get("domain"),
            "owner": row.get("owner"),
            "tags": list(row.get("tags") or []) or None,
            "description": row.get("description"),
            "table": None if row["table_name"] == f"{layer}.{dataset_id}" else row["table_name"],
            "parents": list(row.get("parents") or []) or None,
            "business_keys": list(row.get("business_keys") or []) or None,
            "sequence_by": row.get("sequence_by"),
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
        entry = _lean(entry, Dataset)
        # the load type only when it is not the one the rest of the entry implies
        try:
            implied: str | None = Dataset.model_validate(entry).effective_load_type.value
        except PydanticError:
            implied = None  # edited into something invalid: say everything stored
        if row.get("load_type") and row["load_type"] != implied:
            entry["load_type"] = row["load_type"]
        out.append(entry)
    return out


def _rule_order(rules: list[StoredRow], columns: list[StoredRow]) -> list[str]:
    """Rule ids in an order that gives every column its stored `dq_rule_set` order back (the
    document's rule order decides it); by id where nothing constrains them."""
    ids = sorted(str(r["rule_id"]) for r in rules)
    graph: dict[str, set[str]] = {i: set() for i in ids}
    for col in columns:
        listed = [i for i in _json(col.get("dq_rule_set")) or [] if i in graph]
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


def _rules(rows: list[StoredRow], columns: list[StoredRow]) -> list[JsonObject]:
    by_id = {str(r["rule_id"]): r for r in rows}
    out = []
    for rule_id in _rule_order(rows, columns):
        row = by_id[rule_id]
        params = _json(row.get("rule_expression"))
        entry: JsonObject = {
            "id": rule_id,
            "dataset": row["dataset_id"],
            "type": row["rule_type"],
            **{k: v for k, v in params.items() if v is not None},
            "severity": row.get("severity"),
            "description": row.get("description"),
        }
        out.append(_lean(entry, RULE_KINDS.get(str(row["rule_type"]))))
    return out


def _jobs(rows: list[StoredRow], parameters: list[StoredRow], tasks: list[StoredRow]) -> list[Any]:
    out = []
    for row in sorted(rows, key=lambda r: str(r["job_id"])):
        job_id = row["job_id"]
        own_tasks = sorted(
            (t for t in tasks if t["job_id"] == job_id), key=lambda t: t["execution_order"]
        )
        params = {
            str(p["param_key"]): p["param_value"]
            for p in sorted(parameters, key=lambda p: str(p["param_key"]))
            if p["job_id"] == job_id
        }
        entry: JsonObject = {
            "id": job_id,
            "description": row.get("description"),
            "owner": row.get("owner"),
            "schedule": row.get("schedule"),
            "timezone": None if row.get("timezone") in (None, "UTC") else row["timezone"],
            "triggers": list(row.get("trigger_sources") or []) or None,
            "webhook_secret_ref": row.get("webhook_secret_ref"),
            "enabled": None if row.get("status_flag") != "paused" else False,
            "max_retries": row.get("max_retries") or None,
            "retry_delay_seconds": None
            if row.get("retry_delay_seconds") in (None, 30)
            else row["retry_delay_seconds"],
            "parameters": params or None,
            "tasks": [
                _lean(
                    {
                        "id": t["task_id"],
                        "dataset": t["dataset_id"],
                        "depends_on": list(t.get("depends_on") or []),
                    },
                    Task,
                )
                for t in own_tasks
            ],
        }
        out.append(_lean(entry, Job))
    return out


def export_document(stored: Rows, *, home: str | None = None) -> JsonObject:
    """The document the active stored rows say (plain data, ready for YAML); roots under
    `home` relative to it."""
    rows = {t: _active(stored.get(t, [])) for t in EXPORTED_TABLES}
    live = {str(d["dataset_id"]) for d in rows["dataset_registry"]}
    systems = {str(s["source_system_id"]) for s in rows["source_systems"]}
    objects = [
        o
        for o in rows["source_objects"]
        if o["dataset_id"] in live and o["source_system_id"] in systems
    ]
    kept = {str(o["source_object_id"]) for o in objects}
    columns = [c for c in rows["source_object_columns"] if c["source_object_id"] in kept]
    rules = [r for r in rows["quality_rules"] if r["dataset_id"] in live]
    jobs = rows["jobs"]
    job_ids = {str(j["job_id"]) for j in jobs}
    document: JsonObject = {
        "version": 1,
        "schema_profiles": _profiles(rows["schema_compatibility_rules"]),
        "policies": _policies(rows["policy_rules"]),
        "source_systems": _systems(rows["source_systems"], home),
        "source_objects": _objects(
            objects,
            columns,
            {
                str(s["source_system_id"]): str(s.get("kind") or DEFAULT_KIND)
                for s in rows["source_systems"]
            },
        ),
        "datasets": _datasets(rows["dataset_registry"]),
        "rules": _rules(rules, columns),
        "jobs": _jobs(
            jobs,
            [p for p in rows["job_parameters"] if p["job_id"] in job_ids],
            [t for t in rows["job_tasks"] if t["job_id"] in job_ids],
        ),
        "notification_channels": export_channels(rows["notification_channels"]),
        "notification_routes": export_routes(rows["notification_routes"]),
    }
    return {k: v for k, v in document.items() if v != []}


def export_yaml(stored: Rows, *, tenant: str, home: str | None = None) -> str:
    """The export as YAML text, headed by where it came from (no time: the same store gives
    the same bytes); roots under `home` relative to it."""
    document = export_document(stored, home=home)
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    return f"# definitions of tenant {tenant}, written by `laketx export`\n{body}"


def check_export(document: JsonObject) -> MetadataDocument:
    """The export parsed as a document (pydantic's error when direct edits broke it)."""
    return MetadataDocument.model_validate(document)
