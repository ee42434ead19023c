"""Map a validated document onto control-table rows, one typed row class per table (pure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import JsonValue

from lakeguard.records.checks.rule_rows import PolicyRuleRow, QualityRuleRow, SchemaRuleRow
from lakeguard.records.definitions.datasets import DatasetRow, TargetRow
from lakeguard.records.definitions.jobs import JobParameterRow, JobRow, JobTaskRow
from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.schema.drift import SHIPPED_PROFILES, ChangeKind, DriftDecision
from lakeguard.records.sources.kinds import DEFAULT_KIND
from lakeguard.records.sources.rows import SourceColumnRow, SourceObjectRow, SourceSystemRow
from lakeguard.rules.catalog.alert_rows import channel_rows, route_rows
from lakeguard.rules.catalog.models import Dataset, Layer, MetadataDocument, SourceObject
from lakeguard.rules.catalog.sql_models import model_parents
from lakeguard.rules.policy.expression import DEFAULTS
from lakeguard.words.hashing import to_json


def _ingest_options(obj: SourceObject, kind: str) -> dict[str, JsonValue]:
    """What `ingest_options` stores: the lookback and the object's options of its kind."""
    options = obj.kind_options(kind).model_dump(mode="json", exclude_none=True)
    return {"lookback": obj.lookback, **options} if obj.lookback is not None else options


def document_rows(
    doc: MetadataDocument, *, base_dir: Path | None = None, warehouse: str | None = None
) -> DefinitionSet:
    """Rows for every definition table the document touches (each with its hash)."""
    kinds = {s.id: s.kind for s in doc.source_systems}
    datasets = {d.id: d for d in doc.datasets}
    layer_of = {d.id: d.layer for d in doc.datasets}
    return DefinitionSet(
        schema_compatibility_rules=tuple(profile_rows(doc)),
        policy_rules=tuple(
            PolicyRuleRow(
                policy_id=p.id,
                applies_to_layer=",".join(layer.value for layer in p.applies_to),
                policy_type=p.type,
                policy_expression=p.expression or DEFAULTS[p.type],
                enforcement=p.enforcement,
                description=p.description,
                parameters=to_json({"window": p.window}),
            ).hashed()
            for p in doc.policies
        ),
        source_systems=tuple(
            SourceSystemRow(
                source_system_id=sys.id,
                name=sys.id,
                kind=sys.kind,
                description=sys.description,
                enabled=sys.enabled,
                connection_options=to_json(
                    sys.options.resolved(base_dir).model_dump(mode="json", exclude_none=True)
                ),
                credential_ref=sys.credential_ref,
            ).hashed()
            for sys in doc.source_systems
        ),
        source_objects=tuple(
            _object_row(obj, kinds.get(obj.system, DEFAULT_KIND), datasets)
            for obj in doc.source_objects
        ),
        source_object_columns=tuple(
            SourceColumnRow(
                source_object_id=obj.id,
                column_name=col.name,
                data_type="bigint" if col.type == "long" else col.type,
                nullable=col.nullable,
                ordinal=ordinal,
                dq_rule_set=to_json(
                    [
                        r.id
                        for r in doc.all_rules
                        if r.dataset == obj.dataset and col.name in _columns_of(r)
                    ]
                ),
                dq_severity=None,
                is_pii=col.pii,
                pii_tags=["pii"] if col.pii else [],
                description=col.description,
            ).hashed()
            for obj in doc.source_objects
            for ordinal, col in enumerate(obj.columns)
        ),
        targets=tuple(
            TargetRow(
                target_id=layer,
                layer=layer,
                location=f"{warehouse.rstrip('/')}/{layer}" if warehouse else None,
                format="delta",
                partitioning=[],
                clustering=[],
                table_properties=to_json({}),
            ).hashed()
            for layer in sorted({d.layer.value for d in doc.datasets})
        ),
        dataset_registry=tuple(
            _dataset_row(ds, {d.id for d in doc.datasets}) for ds in doc.datasets
        ),
        quality_rules=tuple(
            QualityRuleRow(
                rule_id=rule.id,
                dataset_id=rule.dataset,
                layer=layer_of.get(rule.dataset, Layer.BRONZE).value,
                rule_type=rule.type,
                rule_expression=to_json(rule.parameters()),
                severity=rule.severity.value,
                description=rule.description,
            ).hashed()
            for rule in doc.all_rules
        ),
        jobs=tuple(
            JobRow(
                job_id=job.id,
                job_name=job.id,
                description=job.description,
                owner=job.owner,
                schedule=job.schedule,
                timezone=job.timezone,
                trigger_sources=sorted(job.triggers),
                webhook_secret_ref=job.webhook_secret_ref,
                status_flag="enabled" if job.enabled else "paused",
                binding=None,
                max_retries=job.max_retries,
                retry_delay_seconds=job.retry_delay_seconds,
                max_concurrent_runs=1,
            ).hashed()
            for job in doc.jobs
        ),
        job_parameters=tuple(
            JobParameterRow(
                job_id=job.id,
                param_key=key,
                param_value=value,
                is_secret_ref=value.startswith("env:"),
            ).hashed()
            for job in doc.jobs
            for key, value in job.parameters.items()
        ),
        job_tasks=tuple(
            JobTaskRow(
                job_id=job.id,
                task_id=task.id,
                task_type="ingest"
                if layer_of.get(task.dataset, Layer.BRONZE) is Layer.BRONZE
                else "promote",
                execution_order=order,
                depends_on=list(task.depends_on),
                dataset_id=task.dataset,
                task_config=to_json({}),
            ).hashed()
            for job in doc.jobs
            for order, task in enumerate(job.tasks)
        ),
        notification_channels=channel_rows(doc),
        notification_routes=route_rows(doc),
    )


def _object_row(obj: SourceObject, kind: str, datasets: dict[str, Dataset]) -> SourceObjectRow:
    fmt, load = obj.kind_defaults(kind)
    target = datasets.get(obj.dataset)
    return SourceObjectRow(
        source_object_id=obj.id,
        source_system_id=obj.system,
        locator=obj.locator,
        format=fmt,
        read_options=to_json(obj.options),
        dataset_id=obj.dataset,
        load_type=load,
        watermark_column=obj.watermark_column,
        business_keys=list(target.business_keys) if target else [],
        hash_strategy=to_json(target.hash_spec) if target else None,
        ingest_options=to_json(_ingest_options(obj, kind)),
        schema_compat_profile=obj.schema_profile,
        dq_fail_behavior=obj.fail_behavior,
        max_malformed_ratio=obj.max_malformed_ratio,
        relationship=obj.relationship,
    ).hashed()


def _dataset_row(ds: Dataset, dataset_ids: set[str]) -> DatasetRow:
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
    return DatasetRow(
        dataset_id=ds.id,
        dataset_name=ds.name or ds.id,
        domain=ds.domain,
        layer=ds.layer.value,
        owner=ds.owner,
        tags=list(ds.tags) or None,  # none: a row from before tags reads the same
        description=ds.description,
        table_name=ds.table_name,
        target_id=ds.layer.value,
        parents=model_parents(ds, dataset_ids),
        business_keys=list(ds.business_keys),
        sequence_by=ds.sequence_by,
        load_type=ds.effective_load_type,
        transform=to_json(transform),
        lifecycle_status="active",
    ).hashed()


def profile_rows(doc: MetadataDocument) -> list[SchemaRuleRow]:
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
        SchemaRuleRow(
            profile=name,
            change_kind=kind.value,
            decision=decision.value,
            description=described.get(name),
        ).hashed()
        for name, rules in profiles.items()
        for kind, decision in rules.items()
    ]


def _columns_of(rule: Any) -> list[str]:
    if hasattr(rule, "columns"):
        return list(rule.columns)
    if hasattr(rule, "column"):
        return [rule.column]
    return []
