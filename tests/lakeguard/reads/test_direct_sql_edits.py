"""Direct SQL edits of definition rows through Spark (`laketx sql`, any session) are a supported
path: INSERT, UPDATE and soft delete are honoured by the next run, an edit that makes a row
invalid blocks only its dataset with an error naming table, key and fix, the tables stay
writable by delta-rs (no deletion vectors), and the runtime tables still refuse UPDATE, DELETE
and MERGE."""

from __future__ import annotations

import json
from typing import Any

import pytest
from deltalake import DeltaTable

from lakeguard.words.errors import InvalidDefinition
from tests.support.project import Project, assert_sound

pytestmark = pytest.mark.spark

ROWS = ["GSM,1,10.5,100", "UMTS,2,20.5,100"]  # UMTS breaks radio_known (ALLOWED_VALUES)
HOSTILE = "java_method('java.lang.Runtime', 'exec', 'id') IS NULL"


def sql(lh: Any, text: str) -> None:
    lh.sql(text).collect()


def text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def outcomes(step: Any) -> dict[str, str]:
    return {o.rule_id: o.severity for o in step.outcomes}


def test_sql_edits_are_honoured_revalidated_and_leave_the_tables_to_delta_rs(
    lakehouse: Any, project: Project
) -> None:
    lh, p, s = lakehouse, project, project.suffix
    lh.apply(p.yaml)
    p.deliver("d1.csv", ROWS)
    rules = lh.store.location("quality_rules")
    before = {r["rule_id"]: r for r in lh.store.rows("quality_rules")}

    # INSERT a rule; UPDATE another into a hostile expression (definition_hash left as it was)
    sql(
        lh,
        "INSERT INTO lakeguard.quality_rules (tenant_id, rule_id, dataset_id, layer, rule_type, "
        f"rule_expression, severity, active, created_at, updated_at) VALUES ('default', "
        f"'lat_known{s}', '{p.bronze}', 'bronze', 'NOT_NULL', '{{\"columns\": [\"lat\"]}}', 'WARN', "
        "true, current_timestamp(), current_timestamp())",
    )
    hostile = text(json.dumps({"expression": HOSTILE}))
    sql(
        lh,
        f"UPDATE lakeguard.quality_rules SET rule_type = 'EXPRESSION', rule_expression = "
        f"{hostile}, updated_at = current_timestamp() WHERE rule_id = 'silver_unique{s}'",
    )
    first = lh.run(p.job)
    bronze, silver = first.steps
    assert bronze.status == "SUCCESS", bronze.reason  # the hostile rule is not its business
    assert outcomes(bronze)[f"lat_known{s}"] == "WARN"  # the inserted rule was evaluated
    assert silver.status == "FAILED" and isinstance(silver.error, InvalidDefinition)
    assert silver.error.where == f"quality_rules[rule_id=silver_unique{s}]"
    assert "java_method() is not allowed" in silver.error.message
    assert f"WHERE rule_id = 'silver_unique{s}'" in (silver.error.fix or "")
    assert lh.reader.versions.approved(p.silver) is None

    # UPDATE a severity and soft-delete the inserted rule: the next run honours both
    sql(
        lh,
        f"UPDATE lakeguard.quality_rules SET severity = 'FAIL', updated_at = current_timestamp() "
        f"WHERE rule_id = 'radio_known{s}'",
    )
    sql(lh, f"UPDATE lakeguard.quality_rules SET active = false WHERE rule_id = 'lat_known{s}'")
    p.deliver("d2.csv", ROWS[1:])
    second = lh.run(p.bronze)
    (step,) = second.steps
    assert step.status == "BLOCKED", step.reason  # UMTS now breaks a FAIL rule
    assert outcomes(step)[f"radio_known{s}"] == "FAIL"
    assert f"lat_known{s}" not in outcomes(step)

    # delta-rs reads what Spark wrote; Spark switched on no deletion vectors
    stored = {r["rule_id"]: r for r in lh.store.rows("quality_rules")}
    radio = stored[f"radio_known{s}"]
    assert radio["severity"] == "FAIL"
    assert radio["definition_hash"] == before[f"radio_known{s}"]["definition_hash"]  # stale
    table = DeltaTable(rules)
    assert "deletionVectors" not in (table.protocol().writer_features or [])
    assert table.metadata().configuration["delta.enableDeletionVectors"] == "false"
    spark_commits = [c for c in table.history() if c.get("operation") == "UPDATE"]
    assert len(spark_commits) == 3
    assert {c["operationMetrics"]["numDeletionVectorsAdded"] for c in spark_commits} == {"0"}

    # and delta-rs still writes: apply sees the edits despite the stale hashes and puts back
    # what the document says (a merge), Spark reads the result
    plan = lh.plan(p.yaml)
    assert {c.key for c in plan.changes if c.action == "update"} == {
        (f"radio_known{s}",),
        (f"silver_unique{s}",),
    }
    lh.apply(p.yaml)
    assert lh.reader.definitions.registry().problems == ()
    seen = {
        r["rule_id"]: (r["rule_type"], r["severity"], r["active"])
        for r in lh.sql("SELECT * FROM lakeguard.quality_rules").collect()
    }
    assert seen[f"radio_known{s}"] == ("ALLOWED_VALUES", "WARN", True)
    assert seen[f"silver_unique{s}"] == ("UNIQUE", "FAIL", True)
    assert seen[f"lat_known{s}"][2] is False  # not in the document: left as the edit left it
    assert_sound(lh, p.bronze, p.silver)


def test_runtime_tables_still_refuse_update_delete_and_merge_through_spark(
    lakehouse: Any,
) -> None:
    lh = lakehouse
    now = lh.store.now()
    event = {
        "event_id": "e1",
        "run_id": "r",
        "pipeline_logging_id": "r",
        "pipeline_id": "p",
        "tenant_id": "default",
        "status": "RUNNING",
        "event_time": now,
    }
    lh.store.append("run_events", [event])
    version = DeltaTable(lh.store.location("run_events")).version()
    for statement in (
        "UPDATE lakeguard.run_events SET status = 'FAILED'",
        "DELETE FROM lakeguard.run_events WHERE event_id = 'e1'",
        "MERGE INTO lakeguard.run_events t USING (SELECT 'e1' AS event_id) s "
        "ON t.event_id = s.event_id WHEN MATCHED THEN DELETE",
        "DELETE FROM lakeguard.pipeline_runs",
        "UPDATE lakeguard.data_versions SET version = version + 1",
    ):
        with pytest.raises(Exception, match="DELTA_CANNOT_MODIFY_APPEND_ONLY"):
            sql(lh, statement)
    assert [r["status"] for r in lh.store.rows("run_events")] == ["RUNNING"]
    table = DeltaTable(lh.store.location("run_events"))
    assert table.version() == version
    assert table.metadata().configuration["delta.appendOnly"] == "true"
