"""The seeds' vocabulary: seed 000's MD_* tables and seed 004's etl_control as views over our
tables (vetted without Spark, then queried on Spark after a real run), and seed 003's tables
keeping seed 003's columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp, parse_one
from sqlglot.executor import execute
from typer.testing import CliRunner

from lakeguard.records.rows.runtime import new_id
from lakeguard.records.runs.rows import RunEventRow
from lakeguard.records.sources.rows import SourceSystemRow
from lakeguard.records.sqlsafety import tables_named
from lakeguard.records.table_defs import load_table_defs
from lakeguard.store import RunWriter
from lakeguard.store.viewdefs import (
    ViewDef,
    create_view_sql,
    load_view_defs,
    mapping_markdown,
    needed,
    vet_view,
)
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.vocabulary import EventStatus, JobStatus
from tests.support.project import Project

ROOT = Path(__file__).resolve().parents[3]

SEED_000 = {
    "MD_JOBS",
    "MD_JOBS_DET",
    "MD_JOBCONFIG",
    "MD_JOB_EXECUTION",
    "MD_DATASETS",
    "MD_SRC_CTRL",
    "MD_TGT_CTRL",
    "MD_SRC_DET",
    "MD_TGT_DET",
    "MD_SRC_TGT_CTRL",
}
# seed 004's INSERT gives eight values; its change detection names the two timestamps
ETL_CONTROL = [
    "source_id",
    "module_name",
    "source_type",
    "execution_order",
    "source_config",
    "target_config",
    "transformation_config",
    "is_active",
    "created_timestamp",
    "updated_timestamp",
]

# Seed 003's tables as it lists them: column -> (type, REQUIRED).
SEED_003: dict[str, dict[str, tuple[str, bool]]] = {
    "pipeline_runs": {
        "pipeline_logging_id": ("STRING", True),
        "pipeline_id": ("STRING", True),
        "tenant_id": ("STRING", True),
        "status": ("STRING", True),
        "trigger_type": ("STRING", True),
        "trigger_by": ("STRING", True),
        "start_time": ("TIMESTAMP", True),
        "end_time": ("TIMESTAMP", False),
        "duration_ms": ("INTEGER", False),
        "config_version": ("STRING", False),
        "worker_instance": ("STRING", False),
        "error_message": ("STRING", False),
        "parameters": ("JSON", False),
    },
    "step_logs": {
        "step_logging_id": ("STRING", True),
        "pipeline_logging_id": ("STRING", True),
        "step_name": ("STRING", True),
        "step_type": ("STRING", True),
        "step_index": ("INTEGER", True),
        "status": ("STRING", True),
        "start_time": ("TIMESTAMP", True),
        "end_time": ("TIMESTAMP", False),
        "duration_ms": ("INTEGER", False),
        "rows_processed": ("INTEGER", False),
        "error_message": ("STRING", False),
        "metadata": ("JSON", False),
    },
    "api_keys": {
        "api_key_id": ("STRING", True),
        "tenant_id": ("STRING", True),
        "api_key_hash": ("STRING", True),
        "created_at": ("TIMESTAMP", True),
        "created_by": ("STRING", False),
        "expires_at": ("TIMESTAMP", False),
        "is_active": ("BOOLEAN", True),
        "last_used_at": ("TIMESTAMP", False),
        "description": ("STRING", False),
    },
    "dq_results": {
        "dq_result_id": ("STRING", True),
        "pipeline_logging_id": ("STRING", True),
        "tenant_id": ("STRING", True),
        "target_table": ("STRING", True),
        "dq_config_id": ("STRING", True),
        "executed_at": ("TIMESTAMP", True),
        "expectations_passed": ("INTEGER", True),
        "expectations_failed": ("INTEGER", True),
        "failed_expectations": ("JSON", False),
        "overall_status": ("STRING", True),
        "ingestion_date": ("DATE", True),
    },
}
# Where ours differ by name (docs/seed-vocabulary.md); none since store migration 2 renamed
# pipeline_runs.triggered_by to seed 003's trigger_by.
SEED_003_RENAMED: dict[tuple[str, str], str] = {}
OUR_TYPES = {
    "STRING": {"string"},
    "JSON": {"string"},
    "INTEGER": {"int", "long"},
    "TIMESTAMP": {"timestamp"},
    "DATE": {"date"},
    "BOOLEAN": {"boolean"},
}


# -- without Spark ----------------------------------------------------------------------------
def test_every_seed_name_is_a_view_named_after_it() -> None:
    views = load_view_defs()
    assert {v.view.seed_name for v in views.values()} == SEED_000 | {"etl_control"}
    assert all(name == v.view.seed_name.lower() for name, v in views.items())
    assert [c.name for c in views["etl_control"].view.columns][: len(ETL_CONTROL)] == ETL_CONTROL
    execution = [c.name for c in views["md_job_execution"].view.columns]
    assert execution[:5] == ["execution_id", "job_id", "start_time", "end_time", "status"]


def test_every_view_parses_and_reads_only_existing_tables_and_columns() -> None:
    tables = load_table_defs()
    for name, vetted in load_view_defs().items():
        assert vetted.reads and set(vetted.reads) <= set(tables), name
        assert "api_keys" not in vetted.reads, f"{name} must not read API keys"
        # every column a view names is a column of the table it reads (resolved at load)
        named = {c.name for c in vetted.tree.find_all(exp.Column)}
        known = {c.name for t in vetted.reads for c in tables[t].columns}
        aliases = {a.alias for a in vetted.tree.find_all(exp.Alias)} | {
            i.name for lv in vetted.tree.find_all(exp.Lateral) for i in lv.args["alias"].columns
        }
        assert named <= known | aliases, (name, named - known - aliases)
        assert vetted.view.columns[-1].name == "tenant_id", name


@pytest.mark.parametrize(
    ("sql", "columns", "problem"),
    [
        ("SELECT nope FROM jobs", ["nope"], "could not be resolved"),
        (
            "SELECT j.job_id FROM jobs AS j JOIN job_tasks AS t ON t.nope = j.job_id",
            ["job_id"],
            "nope",
        ),
        ("SELECT job_id FROM nope", ["job_id"], "unknown dataset 'nope'"),
        ("SELECT job_id FROM lakeguard.jobs", ["job_id"], "not by table or path"),
        ("DROP TABLE jobs", [], "not a query"),
        ("SELECT reflect('java.lang.System', 'exit') AS x FROM jobs", ["x"], "reflect"),
        ("SELECT job_id FROM jobs", ["id"], "declares ['id']"),
    ],
)
def test_a_view_naming_what_does_not_exist_or_doing_anything_but_read_is_refused(
    sql: str, columns: list[str], problem: str
) -> None:
    view = ViewDef.model_validate(
        {
            "name": "md_x",
            "seed_name": "MD_X",
            "seed": "000",
            "comment": "a test view",
            "columns": [{"name": c, "from": "x", "meaning": "x"} for c in columns],
            "sql": sql,
        }
    )
    with pytest.raises(MetadataStoreError, match="invalid view definition md_x") as caught:
        vet_view(view)
    assert problem in caught.value.what


def test_run_statuses_map_onto_the_seeds_three_words() -> None:
    vetted = load_view_defs()["md_job_execution"]
    case = next(s for s in vetted.tree.selects if s.alias_or_name == "status").this
    words = sorted({*JobStatus, *EventStatus} - {EventStatus.SUCCESS})
    rows = execute(
        exp.select(exp.column("run_status"), case.copy().as_("status")).from_("t"),
        tables={"t": [{"run_status": str(w)} for w in words]},
    ).rows
    assert dict(rows) == {
        "BLOCKED": "FAILED",
        "COMPLETED": "COMPLETED",
        "FAILED": "FAILED",
        "PENDING": "STARTED",
        "RUNNING": "STARTED",
    }


def test_a_query_naming_a_view_registers_it_with_the_tables_it_reads() -> None:
    names = {t for _, t in tables_named("SELECT * FROM lakeguard.MD_JOB_EXECUTION JOIN x.y")}
    assert names == {"md_job_execution", "y"}
    plan = needed(names | {"jobs"})
    assert plan.tables == ("jobs", "pipeline_runs", "run_events")
    assert [v.name for v in plan.views] == ["md_job_execution"]
    assert needed({"run_history"}).views == ()


def test_the_created_view_reads_the_namespace_tables_and_documents_its_columns() -> None:
    for vetted in load_view_defs().values():
        ddl = create_view_sql(vetted, "tenant_ns")
        assert ddl.startswith(f"CREATE VIEW IF NOT EXISTS `tenant_ns`.`{vetted.name}` (")
        select = parse_one(_query_of(ddl), read="spark")
        ctes = {c.alias_or_name for c in select.find_all(exp.CTE)}
        read = {(t.db, t.name) for t in select.find_all(exp.Table) if t.name not in ctes}
        assert read == {("tenant_ns", t) for t in vetted.reads}, vetted.name
        for column in vetted.view.columns:
            assert f"`{column.name}` COMMENT " in ddl


def _query_of(ddl: str) -> str:
    """The SELECT of a CREATE VIEW statement (after the view's comment)."""
    marker = "' AS "
    return ddl[ddl.index(marker) + len(marker) :]


def test_the_docs_give_the_mapping_of_every_view_column_by_column() -> None:
    docs = (ROOT / "docs" / "seed-vocabulary.md").read_text(encoding="utf-8")
    assert mapping_markdown() in docs, (
        "docs/seed-vocabulary.md is out of date: paste lakeguard.store.viewdefs.mapping_markdown()"
        " between its 'generated' markers"
    )
    assert "docs/seed-vocabulary.md" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("table", sorted(SEED_003))
def test_seed_003_tables_keep_seed_003s_columns(table: str) -> None:
    ours = {c.name: c for c in load_table_defs()[table].columns}
    for name, (seed_type, required) in SEED_003[table].items():
        column = ours.get(SEED_003_RENAMED.get((table, name), name))
        assert column is not None, f"{table}.{name} of seed 003 is missing"
        assert column.type in OUR_TYPES[seed_type], (table, name, column.type)
        assert not (required and column.nullable), f"{table}.{name} is REQUIRED in seed 003"
    # the one rename is still the only difference (a new one must be documented, not made)
    missing = {n for n in SEED_003[table] if n not in ours}
    assert missing == {n for t, n in SEED_003_RENAMED if t == table}


# -- on Spark -----------------------------------------------------------------------------------
def _rows(lh: Any, view: str, where: str) -> list[dict[str, Any]]:
    return [r.asDict() for r in lh.sql(f"SELECT * FROM lakeguard.{view} WHERE {where}").collect()]


@pytest.mark.spark
def test_every_view_answers_with_the_run_and_the_metadata_behind_it(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p, s = shared_lakehouse, project, project.suffix
    text = p.yaml.read_text().replace(
        "    options: {root: feed}\n",
        "    options: {root: feed}\n    credential_ref: env:FEED_PASSWORD\n",
    )
    text = text.replace(
        f"  - id: cells_job{s}\n",
        f'  - id: cells_job{s}\n    parameters: {{region: EU, api_token: "env:API_TOKEN"}}\n',
    )
    p.yaml.write_text(text)
    lh.apply(p.yaml)
    p.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,20.0,1"])
    done = lh.run(p.job)
    assert done.status == "COMPLETED", done.error
    p.deliver("d2.csv", ["GSM,3,95.0,2"])  # lat 95 breaks a FAIL rule
    blocked = lh.run(p.job)
    assert blocked.status == "BLOCKED"
    flying = new_id()  # a run accepted and not started yet (its worker is this process)
    RunWriter(lh.store).append(
        [
            RunEventRow(
                run_id=flying,
                pipeline_logging_id=flying,
                pipeline_id=p.job,
                tenant_id=lh.store.tenant,
                status=EventStatus.PENDING,
                event_time=lh.store.now(),
                trigger_type="api",
                triggered_by="test",
            )
        ]
    )
    # a direct edit puts a password among a source's options: the view still never shows it
    (system,) = lh.store.definitions(SourceSystemRow, [("source_system_id", "=", f"feed{s}")])
    options = json.loads(system.connection_options or "{}")
    lh.store.upsert(
        "source_systems",
        [
            system.replaced(
                connection_options=json.dumps(
                    {**options, "password": "hunter2", "url": "jdbc:x://h/db?password=hunter2"}
                ),
                definition_hash="edited",
                updated_at=None,
            )
        ],
    )

    runs = {r["execution_id"]: r for r in _rows(lh, "MD_JOB_EXECUTION", f"job_id = '{p.job}'")}
    assert {k: (v["status"], v["run_status"]) for k, v in runs.items()} == {
        done.run_id: ("COMPLETED", "COMPLETED"),
        blocked.run_id: ("FAILED", "BLOCKED"),
        flying: ("STARTED", "PENDING"),
    }
    assert runs[done.run_id]["end_time"] >= runs[done.run_id]["start_time"]
    assert runs[flying]["end_time"] is None and runs[flying]["trigger_type"] == "api"

    from openlaketx.cli import app

    cli = CliRunner().invoke(
        app,
        [
            "--home",
            str(lh.config.home),
            "sql",
            "--json",
            f"SELECT status FROM lakeguard.md_job_execution WHERE execution_id = '{done.run_id}'",
        ],
    )
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout) == [{"status": "COMPLETED"}]

    described = {
        r["col_name"]: r["comment"] for r in lh.sql("DESCRIBE lakeguard.md_jobs").collect()
    }
    assert described["job_id"] == "Job identifier"

    [job] = _rows(lh, "md_jobs", f"job_id = '{p.job}'")
    assert job["job_name"] == p.job and job["is_active"] is True
    params = {r["param_key"]: r for r in _rows(lh, "md_jobs_det", f"job_id = '{p.job}'")}
    assert params["region"]["param_value"] == "EU" and not params["region"]["is_secret_ref"]
    assert params["api_token"]["param_value"] == "env:API_TOKEN"
    assert params["api_token"]["is_secret_ref"]
    [config] = _rows(lh, "md_jobconfig", f"job_id = '{p.job}'")
    assert config["status_flag"] == "enabled" and config["trigger_sources"] == []

    [bronze] = _rows(lh, "md_datasets", f"dataset_id = '{p.bronze}'")
    assert (bronze["database_name"], bronze["table_name"]) == ("bronze", f"cells{s}")
    assert bronze["target_id"] == "bronze" and bronze["lifecycle_status"] == "active"

    [source] = _rows(lh, "md_src_ctrl", f"source_id = 'feed{s}'")
    assert source["source_type"] == "file" and source["is_enabled"] is True
    details = {r["detail_key"]: r for r in _rows(lh, "md_src_det", f"source_id = 'feed{s}'")}
    assert set(details) == {"root", "url", "credential_ref"}
    assert details["credential_ref"]["detail_value"] == "env:FEED_PASSWORD"
    assert details["credential_ref"]["is_credential_ref"] is True
    assert details["root"]["detail_value"] == str(p.yaml.parent / "feed")
    assert details["url"]["detail_value"] == "jdbc:x://h/db?password=***"
    everything = lh.sql("SELECT * FROM lakeguard.md_src_det").collect()
    assert "hunter2" not in repr(everything)

    targets = {r["target_id"]: r for r in _rows(lh, "md_tgt_ctrl", "true")}
    assert targets["bronze"]["target_type"] == "bronze"
    assert targets["bronze"]["storage_location"] == f"{lh.warehouse}/bronze"
    [delivery] = _rows(lh, "md_tgt_det", f"dataset_id = '{p.silver}'")
    assert delivery["target_id"] == "silver" and delivery["file_format"] == "delta"
    assert delivery["business_keys"] == ["radio", "cell"]
    assert json.loads(delivery["transformation_rules"])["filter"] == "cell IS NOT NULL"

    [link] = _rows(lh, "md_src_tgt_ctrl", f"source_object_id = 'cells{s}_csv'")
    assert (link["source_id"], link["dataset_id"], link["target_id"]) == (
        f"feed{s}",
        p.bronze,
        "bronze",
    )
    assert link["relationship"] == f"cells{s}_csv lands in bronze.cells{s}"

    tasks = {r["source_id"]: r for r in _rows(lh, "etl_control", f"module_name = '{p.job}'")}
    assert {k: (v["source_type"], v["execution_order"]) for k, v in tasks.items()} == {
        "ingest": ("ingest", 0),
        "clean": ("promote", 1),
    }
    ingest, clean = tasks["ingest"], tasks["clean"]
    objects = json.loads(ingest["source_config"])["source_objects"]
    assert [o["source_object_id"] for o in objects] == [f"cells{s}_csv"]
    assert json.loads(clean["source_config"])["parents"] == [p.bronze]
    assert json.loads(clean["source_config"])["depends_on"] == ["ingest"]
    target = json.loads(clean["target_config"])
    assert (target["schema"], target["table"], target["layer"]) == ("silver", f"cells{s}", "silver")
    assert json.loads(clean["transformation_config"])["filter"] == "cell IS NOT NULL"
    assert clean["is_active"] is True
    assert clean["updated_timestamp"] >= clean["created_timestamp"]
