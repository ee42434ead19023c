"""Direct edits of definition rows, without Spark: every registry load re-validates the stored
rows with the checks `validate` runs, and a row an edit made invalid blocks only what it
concerns, with an error naming its table, its key and the fix. The edits here are delta-rs
UPDATEs, as `UPDATE lakeguard.<table> SET ...` through `laketx sql` would be
(tests/lakeguard/reads/test_direct_sql_edits.py makes them through Spark)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable

from lakeguard.actors.catalog.apply import apply_file, plan_file
from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.store import MetadataStore
from lakeguard.words.errors import InvalidDefinition
from lakeguard.words.vocabulary import TriggerType
from openlaketx.config import LakehouseConfig
from openlaketx.runner import job as job_runner
from openlaketx.service.runs import Accepted
from openlaketx.service.scheduler import Scheduler
from openlaketx.service.tenants import Tenants
from tests.support.project import cells_yaml, copied_store, write

WAREHOUSE = "/warehouse"
POLICY = "policies:\n  - {id: silver_fresh, type: SLA, applies_to: [silver], enforcement: BLOCK}\n"


@pytest.fixture
def store(empty_store_template: Path, tmp_path: Path) -> Iterator[MetadataStore]:
    s = copied_store(empty_store_template, tmp_path / "meta")
    apply_file(s, write(tmp_path / "p" / "cells.yaml", POLICY + cells_yaml("_x")), WAREHOUSE)
    yield s


def edit(store: MetadataStore, table: str, predicate: str, updates: dict[str, str]) -> None:
    """A direct edit that leaves `definition_hash` as the last apply wrote it."""
    DeltaTable(store.location(table)).update(updates=updates, predicate=predicate)


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def registry(store: MetadataStore) -> Registry:
    return StoreReader(store).definitions.registry()


def refused(found: InvalidDefinition | None) -> InvalidDefinition:
    assert found is not None
    return found


def test_stored_definitions_applied_from_a_document_validate(store: MetadataStore) -> None:
    reg = registry(store)
    assert reg.problems == ()
    assert reg.refusal("bronze_cells_x") is None and reg.job_refusal("cells_job_x") is None


def test_the_registry_is_kept_until_a_definition_table_changes(store: MetadataStore) -> None:
    """A page asks for it again and again (kept); a run after a direct edit gets the edit."""
    first = registry(store)
    assert registry(store) is first  # nothing changed: not rebuilt nor rechecked
    edit(store, "quality_rules", "rule_id = 'lat_range_x'", {"rule_expression": literal("{}")})
    edited = registry(store)
    assert edited is not first and edited.config_version != first.config_version
    # as of a time, it is read again (time travel is never kept)
    assert registry_as_of(store, datetime.now() + timedelta(days=1)) is not edited


def registry_as_of(store: MetadataStore, when: datetime) -> Registry:
    return StoreReader(store).definitions.registry(as_of=when)


def test_a_hostile_rule_expression_blocks_only_its_dataset(store: MetadataStore) -> None:
    hostile = "{\"expression\": \"java_method('java.lang.Runtime', 'exec', 'id') IS NULL\"}"
    edit(
        store,
        "quality_rules",
        "rule_id = 'lat_range_x'",
        {"rule_type": "'EXPRESSION'", "rule_expression": literal(hostile)},
    )
    reg = registry(store)
    error = refused(reg.refusal("bronze_cells_x"))
    assert error.where == "quality_rules[rule_id=lat_range_x]"
    assert "java_method() is not allowed" in error.message
    assert "WHERE rule_id = 'lat_range_x'" in (error.fix or "") and "active = false" in (
        error.fix or ""
    )
    assert error.details["table"] == "quality_rules"
    assert error.details["key"] == {"rule_id": "lat_range_x"}
    assert error.to_dict()["error"] == "InvalidDefinition"
    # the silver dataset, the job and its schedule are not concerned
    assert reg.refusal("silver_cells_x") is None
    assert reg.job_refusal("cells_job_x") is None
    assert job_runner.plan(reg, "cells_job_x").datasets == ["bronze_cells_x", "silver_cells_x"]


def test_a_rule_of_an_unknown_dataset_is_reported_and_blocks_nothing(
    store: MetadataStore,
) -> None:
    edit(store, "quality_rules", "rule_id = 'radio_known_x'", {"dataset_id": "'bronze_typo'"})
    reg = registry(store)
    (problem,) = reg.unattached
    assert problem.where == "quality_rules[rule_id=radio_known_x]"
    assert "'bronze_typo' names no active registered dataset" in problem.message
    assert reg.refusal("bronze_cells_x") is None and reg.job_refusal("cells_job_x") is None


def test_a_bad_cron_makes_only_that_job_unschedulable(store: MetadataStore) -> None:
    edit(store, "jobs", "job_id = 'cells_job_x'", {"schedule": "'61 * * *'"})
    reg = registry(store)
    error = refused(reg.schedule_refusal("cells_job_x"))
    assert error.where == "jobs[job_id=cells_job_x]"
    assert "invalid cron expression '61 * * *'" in error.message
    # a manual run of the job, and its datasets, are not concerned
    assert reg.job_refusal("cells_job_x") is None and reg.refusal("bronze_cells_x") is None
    edit(store, "jobs", "job_id = 'cells_job_x'", {"schedule": "NULL", "timezone": "'Mars/Base'"})
    error = refused(registry(store).schedule_refusal("cells_job_x"))
    assert "'Mars/Base' is not an IANA time zone" in error.message


def test_a_task_of_an_unknown_dataset_stops_the_job_before_it_starts(
    store: MetadataStore,
) -> None:
    edit(store, "job_tasks", "task_id = 'clean'", {"dataset_id": "'silver_typo'"})
    reg = registry(store)
    error = refused(reg.job_refusal("cells_job_x"))
    assert error.where == "job_tasks[job_id=cells_job_x, task_id=clean]"
    assert "unknown dataset 'silver_typo'" in error.message
    with pytest.raises(InvalidDefinition, match="job cells_job_x cannot run"):
        job_runner.plan(reg, "cells_job_x")
    assert job_runner.plan(reg, "bronze_cells_x").datasets == ["bronze_cells_x"]


def test_a_dataset_row_outside_the_vocabulary_blocks_it_and_what_reads_it(
    store: MetadataStore,
) -> None:
    edit(store, "dataset_registry", "dataset_id = 'silver_cells_x'", {"layer": "'platinum'"})
    reg = registry(store)  # the rest still loads
    assert set(reg.datasets) == {"bronze_cells_x"}
    with pytest.raises(InvalidDefinition) as info:
        reg.dataset("silver_cells_x")
    assert "dataset_registry[dataset_id=silver_cells_x]" in info.value.message
    assert "(stored: 'platinum')" in info.value.message
    assert reg.refusal("bronze_cells_x") is None
    assert "its own row" in refused(reg.job_refusal("cells_job_x")).message


def test_json_that_does_not_parse_blocks_its_dataset(store: MetadataStore) -> None:
    edit(store, "quality_rules", "rule_id = 'silver_unique_x'", {"rule_expression": "'{oops'"})
    reg = registry(store)
    error = refused(reg.refusal("silver_cells_x"))
    assert "rule_expression is not JSON" in error.message
    assert reg.refusal("bronze_cells_x") is None


def test_a_broken_policy_blocks_the_datasets_of_its_layers_only(store: MetadataStore) -> None:
    edit(store, "policy_rules", "policy_id = 'silver_fresh'", {"enforcement": "'MAYBE'"})
    reg = registry(store)
    assert "policy_rules[policy_id=silver_fresh]" in refused(reg.refusal("silver_cells_x")).message
    assert reg.refusal("bronze_cells_x") is None


def test_a_source_object_of_a_deactivated_system_blocks_its_dataset(
    store: MetadataStore,
) -> None:
    edit(store, "source_systems", "source_system_id = 'feed_x'", {"active": "false"})
    error = refused(registry(store).refusal("bronze_cells_x"))
    assert "source_system_id 'feed_x' names no active source system" in error.message


def test_what_a_run_records_follows_the_content_never_the_stale_hash(
    store: MetadataStore, tmp_path: Path
) -> None:
    before = registry(store)
    # bookkeeping alone (a touched updated_at, a rewritten hash) changes nothing
    edit(store, "quality_rules", "rule_id = 'silver_unique_x'", {"updated_at": "now()"})
    edit(store, "dataset_registry", "dataset_id = 'silver_cells_x'", {"definition_hash": "'x'"})
    same = registry(store)
    assert same.config_version == before.config_version
    assert same.definition_hash("silver_cells_x") == before.definition_hash("silver_cells_x")
    # a field edited without touching definition_hash is a new definition
    transform = '{"filter": "cell > 0"}'
    edit(
        store, "dataset_registry", "dataset_id = 'silver_cells_x'", {"transform": f"'{transform}'"}
    )
    after = registry(store)
    assert after.datasets["silver_cells_x"].transform.filter == "cell > 0"
    assert after.config_version != before.config_version
    assert after.definition_hash("silver_cells_x") != before.definition_hash("silver_cells_x")
    assert after.definition_hash("bronze_cells_x") == before.definition_hash("bronze_cells_x")
    # and the next apply of the document sees the edit and puts the document back
    doc = tmp_path / "p" / "cells.yaml"
    plan, _ = plan_file(store, doc, WAREHOUSE)
    assert [(c.table, c.key) for c in plan.changes if c.action == "update"] == [
        ("dataset_registry", ("silver_cells_x",))
    ]
    apply_file(store, doc, WAREHOUSE)
    assert registry(store).definition_hash("silver_cells_x") == before.definition_hash(
        "silver_cells_x"
    )


@dataclass
class _Runs:
    """What the scheduler asks of a run service, recording what it is asked to start."""

    tenants: Tenants
    submitted: list[str]

    def submit(self, tenant: str, job_id: str, **_: Any) -> Accepted:
        self.submitted.append(job_id)
        return Accepted(f"run-{job_id}", tenant, job_id, new=True)


def test_the_scheduler_skips_a_job_with_a_bad_cron_and_fires_the_others(tmp_path: Path) -> None:
    config = LakehouseConfig.from_env(home=tmp_path / "home")
    runs = _Runs(Tenants(config), [])
    lh = runs.tenants.get("default")
    for s in ("_good", "_bad"):
        text = cells_yaml(s).replace(
            f"  - id: cells_job{s}\n", f"  - id: cells_job{s}\n    schedule: '*/10 * * * *'\n"
        )
        lh.apply(write(tmp_path / s / "cells.yaml", text))
    edit(lh.store, "jobs", "job_id = 'cells_job_bad'", {"schedule": "'*/10 * * *  banana'"})
    clock = datetime.now() + timedelta(minutes=25)
    fired = Scheduler(runs, clock=lambda: clock).tick()  # type: ignore[arg-type]
    assert runs.submitted == ["cells_job_good"]
    (skipped,) = [f for f in fired if f.job_id == "cells_job_bad"]
    assert skipped.run_id is None and skipped.trigger == TriggerType.SCHEDULER
    assert skipped.detail.startswith("not scheduled: job cells_job_bad cannot be scheduled")
    assert "jobs[job_id=cells_job_bad]" in skipped.detail
