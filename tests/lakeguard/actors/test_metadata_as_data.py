"""Metadata as data, without Spark: export round trips (both examples, after a direct edit),
apply puts back what a direct edit or a soft delete changed, change detection from the
definition tables' Delta history, and stable ids."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from datetime import datetime
from importlib import resources
from pathlib import Path

import pytest
from deltalake import DeltaTable
from typer.testing import CliRunner

from lakeguard.actors.catalog.apply import apply_file, plan_file
from lakeguard.actors.catalog.changes import definition_changes, diff, parse_since
from lakeguard.reads.reader import StoreReader
from lakeguard.records.definitions.jobs import JobRow, JobTaskRow
from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.sameness import same_definition
from lakeguard.records.sources.rows import SourceColumnRow
from lakeguard.rules.catalog.export import EXPORTED_TABLES, export_yaml
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.store import MetadataStore
from lakeguard.words.errors import ConfigError
from openlaketx.cli import app
from tests.support.project import cells_yaml, copied_store, write

ROOT = Path(__file__).resolve().parents[3]
WAREHOUSE = "/warehouse"


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> Iterator[MetadataStore]:
    s = copied_store(empty_store_template, tmp_path / "meta")
    yield s


def export(store: MetadataStore) -> str:
    return export_yaml(
        StoreReader(store).definitions.stored_definitions(EXPORTED_TABLES), tenant="default"
    )


def round_trip(store: MetadataStore, folder: Path) -> str:
    """Export, check `validate` takes it and `plan` finds nothing to change; the text."""
    text = export(store)
    validate_text(text, "export")
    exported = write(folder / "export.yaml", text)
    plan, _ = plan_file(store, exported, WAREHOUSE)
    assert [c for c in plan.changes if c.action != "unchanged"] == [] and not plan.conflicts
    return text


def edit(store: MetadataStore, table: str, predicate: str, updates: dict[str, str]) -> None:
    """A direct edit by another writer (as `UPDATE ... SET` through SQL would be)."""
    DeltaTable(store.location(table)).update(updates=updates, predicate=predicate)


def demo_document(folder: Path) -> Path:
    source = resources.files("openlaketx.demo").joinpath("cell_towers.yaml")
    return write(folder / "cell_towers.yaml", source.read_text(encoding="utf-8"))


@pytest.mark.parametrize("example", ["cells", "demo", "crm"])
def test_export_round_trips_and_is_stable(
    store: MetadataStore, tmp_path: Path, example: str
) -> None:
    if example == "cells":
        doc = write(tmp_path / "p" / "cells.yaml", cells_yaml("_x"))
    elif example == "demo":
        doc = demo_document(tmp_path / "demo")
    else:
        shutil.copytree(ROOT / "examples" / "crm", tmp_path / "crm")
        doc = tmp_path / "crm" / "crm.yaml"
    apply_file(store, doc, WAREHOUSE)
    first = round_trip(store, tmp_path)
    assert export(store) == first  # the same store, the same bytes
    apply_file(store, tmp_path / "export.yaml", WAREHOUSE)  # applying it writes nothing new
    assert export(store) == first


def test_a_direct_edit_is_exported_and_apply_puts_the_document_back(
    store: MetadataStore, tmp_path: Path
) -> None:
    doc = write(tmp_path / "p" / "cells.yaml", cells_yaml("_x"))
    apply_file(store, doc, WAREHOUSE)
    edit(store, "quality_rules", "rule_id = 'radio_known_x'", {"severity": "'FAIL'"})
    text = round_trip(store, tmp_path)
    radio = text.split("id: radio_known_x")[1].split("- id:")[0]
    assert "severity" not in radio  # FAIL is the default: the edit is what the export says
    # the stored hash still says WARN; apply compares content, sees the edit and undoes it
    plan, _ = plan_file(store, doc, WAREHOUSE)
    assert [(c.table, c.action) for c in plan.changes if c.action != "unchanged"] == [
        ("quality_rules", "update")
    ]
    apply_file(store, doc, WAREHOUSE)
    (rule,) = store.rows("quality_rules", filters=[("rule_id", "=", "radio_known_x")])
    assert rule["severity"] == "WARN"


def test_a_soft_delete_leaves_the_export_and_a_reapply_brings_it_back_with_its_id(
    store: MetadataStore, tmp_path: Path
) -> None:
    doc = write(tmp_path / "p" / "cells.yaml", cells_yaml("_x"))
    apply_file(store, doc, WAREHOUSE)
    (before,) = store.rows("dataset_registry", filters=[("dataset_id", "=", "silver_cells_x")])
    edit(store, "dataset_registry", "dataset_id = 'silver_cells_x'", {"active": "false"})
    text = export(store)
    assert "silver_cells_x" not in text.split("jobs:")[0]  # the dataset and its rule are gone
    assert "id: silver_unique_x" not in text
    apply_file(store, doc, WAREHOUSE)
    (after,) = store.rows("dataset_registry", filters=[("dataset_id", "=", "silver_cells_x")])
    assert after["active"] is True
    assert after["created_at"] == before["created_at"]  # the same definition, updated in place
    assert len(store.rows("dataset_registry")) == 2


def test_changes_name_each_definition_and_field_from_the_delta_history(
    store: MetadataStore, tmp_path: Path
) -> None:
    doc = write(tmp_path / "p" / "cells.yaml", cells_yaml("_x"))
    apply_file(store, doc, WAREHOUSE)
    versions = {t: DeltaTable(store.location(t)).version() for t in ("quality_rules", "jobs")}
    time.sleep(0.05)
    mark = store.now()
    time.sleep(0.05)
    changed = (
        cells_yaml("_x")
        .replace("severity: WARN", "severity: FAIL, threshold: 0.1")
        .replace(
            "  - {id: silver_unique_x",
            "  - {id: lat_known_x, dataset: bronze_cells_x, type: NOT_NULL, columns: [lat]}\n"
            "  - {id: silver_unique_x",
        )
        .replace("      - {id: clean, dataset: silver_cells_x, depends_on: [ingest]}", "")
    )
    apply_file(store, write(tmp_path / "p" / "cells.yaml", changed), WAREHOUSE)
    edit(store, "dataset_registry", "dataset_id = 'silver_cells_x'", {"active": "false"})

    report = definition_changes(store, since=mark)
    found = {(c.kind, c.id): c for c in report.changes}
    assert found[("rule", "lat_known_x")].action == "new"
    radio = found[("rule", "radio_known_x")]
    assert radio.action == "updated"
    assert radio.fields == {
        "severity": ("WARN", "FAIL"),
        "rule_expression.threshold": (0.0, 0.1),
    }
    assert found[("dataset", "silver_cells_x")].action == "deactivated"
    job = found[("job", "cells_job_x")]
    assert job.action == "updated" and job.fields == {"tasks[clean]": ("present", None)}
    assert ("dataset", "bronze_cells_x") not in found  # untouched definitions are not listed
    assert report.compared["quality_rules"][0] == versions["quality_rules"]

    by_version = definition_changes(store, since_version=versions["quality_rules"])
    assert ("rule", "lat_known_x") in {(c.kind, c.id) for c in by_version.changes}
    everything = definition_changes(store, since=parse_since("2020-01-01", store.now()))
    assert {c.action for c in everything.changes} == {"new"}  # before the tables existed
    with pytest.raises(ConfigError, match="has a version 99"):
        definition_changes(store, since_version=99)


def test_changes_merge_members_into_their_parent_and_say_reactivated() -> None:
    job = JobRow(job_id="j", definition_hash="a")
    task = JobTaskRow(
        job_id="j", task_id="t", task_type="ingest", execution_order=0, dataset_id="d"
    )
    before = DefinitionSet(jobs=(job.replaced(active=False),), job_tasks=(task,))
    after = DefinitionSet(
        jobs=(job.replaced(schedule="0 * * * *"),), job_tasks=(task.replaced(dataset_id="e"),)
    )
    (change,) = diff(before, after)
    assert (change.kind, change.id, change.action) == ("job", "j", "reactivated")
    assert change.fields == {"tasks[t].dataset_id": ("d", "e")}
    cols = SourceColumnRow(
        source_object_id="o", column_name="c", data_type="int", nullable=True, ordinal=0
    )
    (widened,) = diff(
        DefinitionSet(source_object_columns=(cols,)),
        DefinitionSet(source_object_columns=(cols.replaced(data_type="bigint"),)),
    )
    assert widened.fields == {"columns[c].data_type": ("int", "bigint")}


def test_since_takes_times_and_ages() -> None:
    now = parse_since("2026-11-26T12:00:00", datetime(2026, 1, 2))
    assert now == datetime(2026, 11, 26, 12)
    assert parse_since("2026-11-26T12:00:00+01:00", now) == datetime(2026, 11, 26, 11)
    assert parse_since("90m", now) == datetime(2026, 11, 26, 10, 30)
    assert parse_since("2d", now) == datetime(2026, 11, 24, 12)
    with pytest.raises(ConfigError, match="neither a time nor an age"):
        parse_since("yesterday", now)


def test_sameness_reads_content_not_the_stored_hash() -> None:
    row = {"rule_id": "r", "severity": "WARN", "values": ("a",), "ratio": 0, "definition_hash": "h"}
    stored = {**row, "values": ["a"], "ratio": 0.0, "active": True, "created_at": 1}
    assert same_definition(stored, row)
    assert not same_definition({**stored, "severity": "FAIL"}, row)  # edited, same stale hash
    assert not same_definition({**stored, "active": False}, row)  # soft-deleted
    assert same_definition({**stored, "active": False}, {**row, "active": False})
    assert not same_definition(None, row)


def test_cli_export_and_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    doc = write(tmp_path / "p" / "cells.yaml", cells_yaml("_x"))
    home = ["--home", str(tmp_path / "home")]
    assert runner.invoke(app, [*home, "apply", str(doc)]).exit_code == 0
    assert runner.invoke(app, [*home, "check"]).exit_code == 0
    out = tmp_path / "out" / "export.yaml"
    done = runner.invoke(app, [*home, "export", "--out", str(out)])
    assert done.exit_code == 0, done.output
    plan = runner.invoke(app, [*home, "plan", str(out), "--json"])
    summary = json.loads(plan.stdout)["summary"]
    assert all(c["create"] == 0 and c["update"] == 0 for c in summary.values())
    listed = runner.invoke(app, [*home, "changes", "--since", "1d", "--json"])
    assert listed.exit_code == 0, listed.output
    assert {c["id"] for c in json.loads(listed.stdout)["changes"]} >= {"cells_job_x", "lat_range_x"}
    both = runner.invoke(app, [*home, "changes", "--since", "1d", "--since-version", "1"])
    assert both.exit_code == ConfigError.exit_code
    # a direct edit that breaks the definitions: the export is written, and says what is wrong
    store = MetadataStore("lakeguard", str(tmp_path / "home" / "metadata" / "lakeguard"), "default")
    broken_rule = '{"column":"nowhere","max":90.0,"min":-90.0,"threshold":0.0}'
    edit(store, "quality_rules", "rule_id = 'lat_range_x'", {"rule_expression": f"'{broken_rule}'"})
    checked = runner.invoke(app, [*home, "check", "--json"])
    assert checked.exit_code == 3
    (problem,) = json.loads(checked.stdout)["problems"]
    assert problem["where"] == "quality_rules[rule_id=lat_range_x]"
    assert (
        problem["blocks"] == ["dataset bronze_cells_x"] and "UPDATE quality_rules" in problem["fix"]
    )
    broken = runner.invoke(app, [*home, "export", "--out", str(out)])
    assert broken.exit_code != 0 and "nowhere" in broken.output
    assert "nowhere" in out.read_text()
