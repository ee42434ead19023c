"""The shipped metadata table definitions and the DDL/evolution logic (no Spark)."""

from __future__ import annotations

import pytest

from lakeguard.errors import MetadataStoreError
from lakeguard.store import ddl
from lakeguard.store.definitions import TableKind, load_table_defs

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
}


def test_every_table_of_the_design_is_shipped_with_its_kind() -> None:
    defs = load_table_defs()
    assert set(defs) == DESIGN_DEFINITIONS | DESIGN_RUNTIME
    for name in DESIGN_DEFINITIONS:
        assert defs[name].kind is TableKind.DEFINITION
        assert defs[name].keys and "tenant_id" in defs[name].keys
    for name in DESIGN_RUNTIME:
        assert defs[name].kind is TableKind.APPEND_ONLY


def test_runtime_tables_are_partitioned_by_a_generated_date_and_clustered() -> None:
    for table in load_table_defs().values():
        if table.kind is TableKind.APPEND_ONLY:
            (part,) = table.partitioned_by
            assert table.column(part).type == "date"
            assert table.column(part).generated
            assert table.cluster_by
            assert "tenant_id" in [c.name for c in table.columns]


def test_create_sql_marks_runtime_tables_append_only() -> None:
    table = load_table_defs()["run_history"]
    sql = ddl.create_table_sql(table, "`lakeguard`.`run_history`", "/x/run_history")
    assert "'delta.appendOnly' = 'true'" in sql
    assert "GENERATED ALWAYS AS (CAST(start_time AS DATE))" in sql
    assert "PARTITIONED BY (`run_date`)" in sql
    assert "`status` STRING NOT NULL" in sql
    definition = ddl.create_table_sql(load_table_defs()["jobs"], "`lg`.`jobs`", "/x/jobs")
    assert "'delta.appendOnly' = 'false'" in definition


def _existing(table_name: str, drop: str | None = None) -> list[ddl.ExistingColumn]:
    table = load_table_defs()[table_name]
    return [
        ddl.ExistingColumn(c.name, ddl.spark_type(c.type), c.nullable)
        for c in table.columns
        if c.name != drop
    ]


def test_additive_evolution_adds_only_missing_nullable_columns() -> None:
    table = load_table_defs()["run_history"]
    assert ddl.plan_additive_evolution(table, _existing("run_history")) == []
    added = ddl.plan_additive_evolution(table, _existing("run_history", drop="rows_written"))
    assert [c.name for c in added] == ["rows_written"]
    assert "ADD COLUMNS (`rows_written` BIGINT" in ddl.add_columns_sql("t", added)


@pytest.mark.parametrize(
    "existing_change, message",
    [
        (
            lambda cols: [*cols, ddl.ExistingColumn("legacy", "string", True)],
            "not in the definition",
        ),
        (
            lambda cols: [
                ddl.ExistingColumn(c.name, "int" if c.name == "rows_read" else c.type, c.nullable)
                for c in cols
            ],
            "is int in the table",
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
