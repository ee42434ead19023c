"""Applying metadata and the CLI surface, on the shared SparkSession."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lakeguard.words.errors import ValidationError
from openlaketx.cli import app
from tests.support.project import Project, write

runner = CliRunner()


def test_validate_reports_every_error_and_writes_nothing(no_spark_home: Path) -> None:
    bad = write(
        no_spark_home / "bad.yaml",
        """
        datasets:
          - {id: b, layer: platinum}
        rules:
          - {id: r, dataset: b, type: NOT_A_RULE}
        """,
    )
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == ValidationError.exit_code
    assert "datasets[0].layer (line 2)" in result.output
    assert "rules[0] (line 4)" in result.output
    assert not (no_spark_home / "lakehouse").exists()
    as_json = runner.invoke(app, ["validate", str(bad), "--json"])
    payload = json.loads(as_json.stdout)
    assert payload["error"] == "ValidationError" and len(payload["details"]["errors"]) == 2


def test_validate_ok_and_schema_export(no_spark_home: Path, project: Project) -> None:
    ok = runner.invoke(app, ["validate", str(project.yaml), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["counts"]["datasets"] == 2
    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    assert schema["additionalProperties"] is False and "rules" in schema["properties"]


@pytest.mark.spark
def test_apply_is_idempotent_and_immutable_fields_are_protected(
    shared_lakehouse: Any, project: Project
) -> None:
    lh, p = shared_lakehouse, project
    first = lh.apply(p.yaml)
    assert first.count("create") > 0 and not first.conflicts
    versions = {t: _delta_version(lh, t) for t in ("dataset_registry", "quality_rules", "jobs")}
    again = lh.apply(p.yaml)
    assert not again.has_changes
    assert {t: _delta_version(lh, t) for t in versions} == versions  # not even an empty commit

    moved = write(
        p.yaml.parent / "moved.yaml",
        p.yaml.read_text()
        .replace("layer: silver", "layer: bronze", 1)
        .replace(f"parents: [bronze_cells{p.suffix}]", "parents: []"),
    )
    with pytest.raises(ValidationError):
        lh.apply(moved)
    assert {t: _delta_version(lh, t) for t in versions} == versions
    rows = lh.sql(
        f"SELECT layer FROM lakeguard.dataset_registry WHERE dataset_id = 'silver_cells{p.suffix}'"
    ).collect()
    assert [r["layer"] for r in rows] == ["silver"]


def _delta_version(lh: Any, table: str) -> int:
    return int(
        lh.sql(f"DESCRIBE HISTORY lakeguard.{table}").agg({"version": "max"}).collect()[0][0]
    )


@pytest.mark.spark
def test_cli_run_sql_status_explain(shared_lakehouse: Any, project: Project) -> None:
    home = str(shared_lakehouse.config.home)
    assert runner.invoke(app, ["--home", home, "apply", str(project.yaml)]).exit_code == 0
    project.deliver("d1.csv", ["GSM,1,10.0,1", "LTE,2,95.0,1"])  # lat 95 breaks a FAIL rule
    blocked = runner.invoke(app, ["--home", home, "run", project.job, "--json"])
    assert blocked.exit_code == 8, blocked.output
    payload = json.loads(blocked.stdout)
    assert payload["status"] == "BLOCKED" and payload["skipped"] == [project.silver]

    listed = runner.invoke(
        app,
        [
            "--home",
            home,
            "sql",
            "--json",
            f"SELECT status FROM lakeguard.run_history WHERE dataset_id = '{project.bronze}'",
        ],
    )
    assert listed.exit_code == 0 and json.loads(listed.stdout) == [{"status": "BLOCKED"}]
    explained = runner.invoke(app, ["--home", home, "explain", project.bronze, "--json"])
    assert json.loads(explained.stdout)["allowed"] is False
    status = json.loads(runner.invoke(app, ["--home", home, "status", "--json"]).stdout)
    assert any(s["dataset_id"] == project.bronze and s["last_status"] == "BLOCKED" for s in status)
    unknown = runner.invoke(app, ["--home", home, "run", "nope"])
    assert unknown.exit_code == 4 and "neither a registered job nor" in unknown.output
    bad_sql = runner.invoke(app, ["--home", home, "sql", "SELECT * FROM lakeguard.nope"])
    assert bad_sql.exit_code == 1 and "Traceback" not in bad_sql.output
