"""Map a validated document onto control-table rows (pure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lakeguard.catalog.alert_rows import ALERT_TABLES, alert_rows
from lakeguard.catalog.models import Layer, MetadataDocument, SourceObject
from lakeguard.catalog.sql_models import model_parents
from lakeguard.hashing import fingerprint, to_json
from lakeguard.policy.expression import DEFAULTS
from lakeguard.schema.drift import SHIPPED_PROFILES, ChangeKind, DriftDecision
from lakeguard.shapes import JsonObject, StoredRow
from lakeguard.source_kinds import DEFAULT_KIND

Rows = dict[str, list[StoredRow]]


def _with_hash(row: StoredRow) -> StoredRow:
    return {**row, "definition_hash": fingerprint(row)}


def _ingest_options(obj: SourceObject, kind: str) -> JsonObject:
    """What `ingest_options` stores: the lookback and the object's options of its kind."""
    options = obj.kind_options(kind).model_dump(mode="json", exclude_none=True)
    return {"lookback": obj.lookback, **options} if obj.lookback is not None else options


def rule_parameters(rule: Any) -> StoredRow:
    """The declarative parameters of a rule, stored as `rule_expression` JSON."""
    skip = {"id", "dataset", "severity", "description", "type"}
    return {k: v for k, v in rule.model_dump(mode="json").items() if k not in skip}


def document_rows(
    doc: MetadataDocument, *, base_dir: Path | None = None, warehouse: str | None = None
) -> Rows:
    """Rows for every definition table the document touches, keyed by table name."""
    rows: Rows = {name: [] for name in _TABLES}
    rows["schema_compatibility_rules"] = profile_rows(doc)
    rows["policy_rules"] = [
        _with_hash(
            {
                "policy_id": p.id,
                "applies_to_layer": ",".join(layer.value for layer in p.applies_to),
                "policy_type": p.type,
                "policy_expression": p.expression or DEFAULTS[p.type],
                "enforcement": p.enforcement,
                "description": p.description,
                "parameters": to_json({"window": p.window}),
            }
        )
        for p in doc.policies
    ]
    for sys in doc.source_systems:
        rows["source_systems"].append(
            _with_hash(
                {
                    "source_system_id": sys.id,
                    "name": sys.id,
                    "kind": sys.kind,
                    "description": sys.description,
                    "enabled": sys.enabled,
                    "connection_options": to_json(
                        sys.options.resolved(base_dir).model_dump(mode="json", exclude_none=True)
                    ),
                    "credential_ref": sys.credential_ref,
                }
            )
        )
    kinds = {s.id: s.kind for s in doc.source_systems}
    datasets = {d.id: d for d in doc.datasets}
    for obj in doc.source_objects:
        kind = kinds.get(obj.system, DEFAULT_KIND)
        fmt, load = obj.kind_defaults(kind)
        target = datasets.get(obj.dataset)
        rows["source_objects"].append(
            _with_hash(
                {
                    "source_object_id": obj.id,
                    "source_system_id": obj.system,
                    "locator": obj.locator,
                    "format": fmt,
                    "read_options": to_json(obj.options),
                    "dataset_id": obj.dataset,
                    "load_type": load,
                    "watermark_column": obj.watermark_column,
                    "business_keys": list(target.business_keys) if target else [],
                    "hash_strategy": to_json(target.hash_spec) if target else None,
                    "ingest_options": to_json(_ingest_options(obj, kind)),
                    "schema_compat_profile": obj.schema_profile,
                    "dq_fail_behavior": obj.fail_behavior,
                    "max_malformed_ratio": obj.max_malformed_ratio,
                    "relationship": obj.relationship,
                }
            )
        )
        for ordinal, col in enumerate(obj.columns):
            rule_ids = [
                r.id
                for r in doc.all_rules
                if r.dataset == obj.dataset and col.name in _columns_of(r)
            ]
            rows["source_object_columns"].append(
                _with_hash(
                    {
                        "source_object_id": obj.id,
                        "column_name": col.name,
                        "data_type": "bigint" if col.type == "long" else col.type,
                        "nullable": col.nullable,
                        "ordinal": ordinal,
                        "dq_rule_set": to_json(rule_ids),
                        "dq_severity": None,
                        "is_pii": col.pii,
                        "pii_tags": ["pii"] if col.pii else [],
                        "description": col.description,
                    }
                )
            )
    layers = sorted({d.layer.value for d in doc.datasets})
    for layer in layers:
        location = f"{warehouse.rstrip('/')}/{layer}" if warehouse else None
        rows["targets"].append(
            _with_hash(
                {
                    "target_id": layer,
                    "layer": layer,
                    "location": location,
                    "format": "delta",
                    "partitioning": [],
                    "clustering": [],
                    "table_properties": to_json({}),
                }
            )
        )
    dataset_ids = {d.id for d in doc.datasets}
    for ds in doc.datasets:
        transform = {
            "filter": ds.filter,
            "columns": ds.columns,
            "profile": ds.profile
            if isinstance(ds.profile, bool)
            else ds.profile.model_dump(exclude_none=True),
            "sql": ds.sql,
            "refresh_keys": ds.refresh_keys,
            "hash_strategy": ds.hash_spec,
            "delete_missing": ds.delete_missing,
            "schema_profile": ds.schema_profile,
            "fail_behavior": ds.fail_behavior,
        }
        rows["dataset_registry"].append(
            _with_hash(
                {
                    "dataset_id": ds.id,
                    "dataset_name": ds.name or ds.id,
                    "domain": ds.domain,
                    "layer": ds.layer.value,
                    "owner": ds.owner,
                    "tags": list(ds.tags) or None,  # none: a row from before tags reads the same
                    "description": ds.description,
                    "table_name": ds.table_name,
                    "target_id": ds.layer.value,
                    "parents": model_parents(ds, dataset_ids),
                    "business_keys": list(ds.business_keys),
                    "sequence_by": ds.sequence_by,
                    "load_type": ds.effective_load_type,
                    "transform": to_json(transform),
                    "lifecycle_status": "active",
                }
            )
        )
    layer_of = {d.id: d.layer for d in doc.datasets}
    for rule in doc.all_rules:
        rows["quality_rules"].append(
            _with_hash(
                {
                    "rule_id": rule.id,
                    "dataset_id": rule.dataset,
                    "layer": layer_of.get(rule.dataset, Layer.BRONZE).value,
                    "rule_type": rule.type,
                    "rule_expression": to_json(rule_parameters(rule)),
                    "severity": rule.severity.value,
                    "description": rule.description,
                }
            )
        )
    for job in doc.jobs:
        rows["jobs"].append(
            _with_hash(
                {
                    "job_id": job.id,
                    "job_name": job.id,
                    "description": job.description,
                    "owner": job.owner,
                    "schedule": job.schedule,
                    "timezone": job.timezone,
                    "trigger_sources": sorted(job.triggers),
                    "webhook_secret_ref": job.webhook_secret_ref,
                    "status_flag": "enabled" if job.enabled else "paused",
                    "binding": None,
                    "max_retries": job.max_retries,
                    "retry_delay_seconds": job.retry_delay_seconds,
                    "max_concurrent_runs": 1,
                }
            )
        )
        for key, value in job.parameters.items():
            rows["job_parameters"].append(
                _with_hash(
                    {
                        "job_id": job.id,
                        "param_key": key,
                        "param_value": value,
                        "is_secret_ref": value.startswith("env:"),
                    }
                )
            )
        for order, task in enumerate(job.tasks):
            layer = layer_of.get(task.dataset, Layer.BRONZE)
            rows["job_tasks"].append(
                _with_hash(
                    {
                        "job_id": job.id,
                        "task_id": task.id,
                        "task_type": "ingest" if layer is Layer.BRONZE else "promote",
                        "execution_order": order,
                        "depends_on": list(task.depends_on),
                        "dataset_id": task.dataset,
                        "task_config": to_json({}),
                    }
                )
            )
    rows.update(alert_rows(doc))
    return rows


def profile_rows(doc: MetadataDocument) -> list[StoredRow]:
    """Every kind's decision in the shipped profiles and the document's own."""
    profiles = {name: dict(rules) for name, rules in SHIPPED_PROFILES.items()}
    described = dict.fromkeys(SHIPPED_PROFILES, "shipped profile")
    for profile in doc.schema_profiles:
        base = SHIPPED_PROFILES.get(profile.base or "", {})
        profiles[profile.id] = {
            kind: profile.rules.get(kind, base.get(kind, DriftDecision.BLOCK))
            for kind in ChangeKind
        }
        described[profile.id] = profile.description or ""
    return [
        _with_hash(
            {
                "profile": name,
                "change_kind": kind.value,
                "decision": decision.value,
                "description": described.get(name),
            }
        )
        for name, rules in profiles.items()
        for kind, decision in rules.items()
    ]


def _columns_of(rule: Any) -> list[str]:
    if hasattr(rule, "columns"):
        return list(rule.columns)
    if hasattr(rule, "column"):
        return [rule.column]
    return []


_TABLES = (
    "schema_compatibility_rules",
    "policy_rules",
    "source_systems",
    "source_objects",
    "source_object_columns",
    "targets",
    "dataset_registry",
    "quality_rules",
    "jobs",
    "job_parameters",
    "job_tasks",
    *ALERT_TABLES,
)
