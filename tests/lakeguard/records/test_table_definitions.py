"""The shipped metadata table definitions (files and row classes), their Delta schemas and
evolution logic (no Spark)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from datetime import datetime
from importlib import resources
from typing import Annotated, ClassVar

import pytest

from lakeguard.records.features import UNWRITABLE_FEATURES, unwritable_features
from lakeguard.records.rows.runtime import RuntimeRow
from lakeguard.records.rows.schema import Comment, Int32, RuntimeTable, table_document
from lakeguard.records.table_defs import RUNTIME_ROW_TYPES as ROW_TYPES
from lakeguard.records.table_defs import TableDef, TableKind, load_table_defs
from lakeguard.store import ddl
from lakeguard.store.arrow import arrow_schema, delta_schema_json, to_arrow, to_rows
from lakeguard.words.errors import MetadataStoreError, ValidationError
from lakeguard.words.vocabulary import EventStatus

DESIGN_DEFINITIONS = {
    "source_systems",
    "source_objects",
    "source_object_columns",
    "targets",
    "dataset_registry",
    "quality_rules",
    "policy_rules",
    "schema_compatibility_rules",
    "jobs",
    "job_parameters",
    "job_tasks",
    "api_keys",
    "notification_channels",
    "notification_routes",
}
DESIGN_RUNTIME = {
    "pipeline_runs",
    "run_events",
    "step_logs",
    "run_history",
    "data_versions",
    "promotion_status",
    "dq_results",
    "data_quality_results",
    "data_profiling_results",
    "schema_history",
    "schema_change_log",
    "dataset_leases",
    "source_progress",
    "rejected_files",
    "trust_scores",
    "run_requests",
    "metadata_syncs",
    "store_migrations",
    "incident_events",
    "notification_deliveries",
}


def test_every_table_of_the_design_is_shipped_with_its_kind() -> None:
    defs = load_table_defs()
    assert set(defs) == DESIGN_DEFINITIONS | DESIGN_RUNTIME
    for name in DESIGN_DEFINITIONS:
        assert defs[name].kind is TableKind.DEFINITION
        assert defs[name].keys and "tenant_id" in defs[name].keys
    for name in DESIGN_RUNTIME:
        assert defs[name].kind is TableKind.APPEND_ONLY


def test_each_runtime_table_is_declared_by_its_row_class_alone() -> None:
    """A runtime table's columns are its row class's fields, in order; no file declares one."""
    tables = {row_type.TABLE.name: row_type for row_type in ROW_TYPES}
    defs = load_table_defs()
    assert set(tables) == {n for n, t in defs.items() if t.kind is TableKind.APPEND_ONLY}
    for name, row_type in tables.items():
        table = defs[name]
        assert table.append_only, name
        assert [c.name for c in table.writable_columns] == [f.name for f in fields(row_type)]
    assert not resources.files("lakeguard.store").joinpath("tables").is_dir()  # no data files


def test_a_row_class_field_says_its_column_type_nullability_and_comment() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Sample(RuntimeRow):
        TABLE: ClassVar[RuntimeTable] = RuntimeTable(
            name="sample", comment="c", day="at_date", date_of="at", cluster_by=("id",)
        )
        id: Annotated[str, Comment("the id")]
        status: EventStatus
        count: int | None = None
        small: Int32
        ratio: float | None = None
        flag: bool
        tags: list[str] | None = field(default_factory=list)
        at: datetime

    table = TableDef.model_validate(table_document(Sample))
    assert [(c.name, c.type, c.nullable, c.comment) for c in table.columns] == [
        ("id", "string", False, "the id"),
        ("status", "string", False, None),
        ("count", "long", True, None),
        ("small", "int", False, None),
        ("ratio", "double", True, None),
        ("flag", "boolean", False, None),
        ("tags", "array<string>", True, None),
        ("at", "timestamp", False, None),
        ("at_date", "date", False, None),
    ]
    assert table.column("at_date").generated == "CAST(at AS DATE)"
    assert (table.partitioned_by, table.cluster_by, table.comment) == ((), ("id",), "c")
    # a stored row reads back as the class, its vocabulary's word as the member
    row = {"id": "x", "status": "RUNNING", "small": 1, "flag": True, "at": datetime(2026, 1, 1)}
    back = Sample.from_row({**row, "at_date": None})
    assert back.status is EventStatus.RUNNING and back.count is None
    with pytest.raises(ValidationError, match=r"sample\.status"):
        Sample.from_row({**row, "status": "DANCING"})


def test_a_row_class_a_column_cannot_hold_is_refused_by_name() -> None:
    @dataclass(frozen=True, kw_only=True)
    class Odd(RuntimeRow):
        TABLE: ClassVar[RuntimeTable] = RuntimeTable(
            name="odd", comment="c", day="at_date", date_of="at", cluster_by=()
        )
        sizes: dict[str, int]
        at: datetime

    with pytest.raises(MetadataStoreError, match=r"Odd\.sizes has a type no column has"):
        table_document(Odd)

    @dataclass(frozen=True, kw_only=True)
    class Undated(RuntimeRow):
        TABLE: ClassVar[RuntimeTable] = RuntimeTable(
            name="undated", comment="c", day="at_date", date_of="at", cluster_by=()
        )
        at: datetime | None = None

    with pytest.raises(MetadataStoreError, match="date_of names no NOT NULL datetime field"):
        table_document(Undated)


def test_runtime_tables_have_a_generated_date_no_partition_and_are_clustered() -> None:
    for table in load_table_defs().values():
        if table.kind is TableKind.APPEND_ONLY:
            assert table.partitioned_by == ()  # one file per day made reads grow: migration 3
            day = table.columns[-1]
            assert day.type == "date"
            assert day.generated
            assert table.cluster_by
            assert "tenant_id" in [c.name for c in table.columns]


def test_delta_schema_keeps_generated_columns_types_and_nullability() -> None:
    fields = {
        f["name"]: f
        for f in json.loads(delta_schema_json(load_table_defs()["run_history"]))["fields"]
    }
    assert (
        fields["run_date"]["metadata"]["delta.generationExpression"] == "CAST(start_time AS DATE)"
    )
    assert fields["status"]["nullable"] is False and fields["status"]["type"] == "string"
    assert fields["rows_read"]["type"] == "long"
    api = {f["name"]: f for f in json.loads(delta_schema_json(load_table_defs()["jobs"]))["fields"]}
    assert api["max_retries"]["type"] == "integer"
    assert api["trigger_sources"]["type"] == {
        "type": "array",
        "elementType": "string",
        "containsNull": True,
    }
    # writers never provide generated columns: delta-rs computes them
    assert "run_date" not in arrow_schema(load_table_defs()["run_history"]).names


def test_rows_round_trip_through_arrow_as_naive_utc() -> None:
    from datetime import datetime

    table = load_table_defs()["run_events"]
    when = datetime(2026, 1, 2, 3, 4, 5, 6)
    row = {
        "event_id": "e",
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": "t",
        "status": "RUNNING",
        "event_time": when,
    }
    (back,) = to_rows(to_arrow(table, [row]))
    assert back["event_time"] == when and back["event_time"].tzinfo is None
    assert back["dataset_id"] is None


def _existing(table_name: str, drop: str | None = None) -> list[ddl.ExistingColumn]:
    table = load_table_defs()[table_name]
    return [
        ddl.ExistingColumn(c.name, ddl.definition_type(c), c.nullable)
        for c in table.columns
        if c.name != drop
    ]


def test_additive_evolution_adds_only_missing_nullable_columns() -> None:
    table = load_table_defs()["run_history"]
    assert ddl.plan_additive_evolution(table, _existing("run_history")) == []
    added = ddl.plan_additive_evolution(table, _existing("run_history", drop="rows_written"))
    assert [c.name for c in added] == ["rows_written"]


@pytest.mark.parametrize(
    "existing_change, message",
    [
        (
            lambda cols: [*cols, ddl.ExistingColumn("legacy", "string", True)],
            "not in the definition",
        ),
        (
            lambda cols: [
                ddl.ExistingColumn(
                    c.name, "integer" if c.name == "rows_read" else c.type, c.nullable
                )
                for c in cols
            ],
            "is integer in the table",
        ),
        (lambda cols: [c for c in cols if c.name != "status"], "must be nullable"),
        (lambda cols: [c for c in cols if c.name != "run_date"], "generated column"),
    ],
)
def test_non_additive_change_is_refused_not_applied(existing_change, message) -> None:  # type: ignore[no-untyped-def]
    table = load_table_defs()["run_history"]
    with pytest.raises(MetadataStoreError) as info:
        ddl.plan_additive_evolution(table, existing_change(_existing("run_history")))
    assert message in info.value.what
    assert "migration" in (info.value.fix or "")


@pytest.mark.parametrize(
    "protocol, expected",
    [
        (
            {"min_writer_version": 7, "writer_features": ["identityColumns", "appendOnly"]},
            ["identity columns"],
        ),
        (
            {"min_writer_version": 7, "writer_features": ["clustering", "domainMetadata"]},
            ["CLUSTER BY (liquid clustering)", "domain metadata"],
        ),
        ({"min_writer_version": 6, "writer_features": None}, ["identity columns"]),
        (
            {
                "min_writer_version": 4,
                "writer_features": None,
                "configuration": {"delta.enableRowTracking": "true"},
            },
            ["row tracking"],
        ),
        (
            {
                "min_writer_version": 2,
                "writer_features": None,
                "field_metadata": [{"delta.identity.start": 1}],
            },
            ["identity columns"],
        ),
        (
            {
                "min_writer_version": 7,
                "writer_features": ["appendOnly", "generatedColumns", "invariants"],
            },
            [],
        ),
    ],
)
def test_features_delta_rs_cannot_write_are_named(protocol: dict, expected: list[str]) -> None:  # type: ignore[type-arg]
    args = {"configuration": {}, **protocol}
    assert unwritable_features(**args) == expected
    assert set(UNWRITABLE_FEATURES.values()) >= set(expected)


def test_no_shipped_definition_asks_for_a_feature_delta_rs_cannot_write() -> None:
    """Clustering is done by Z-order in `optimize`, never with CLUSTER BY on the table."""
    for table in load_table_defs().values():
        fields = json.loads(delta_schema_json(table))["fields"]
        assert not any(k.startswith("delta.identity") for f in fields for k in f["metadata"])
