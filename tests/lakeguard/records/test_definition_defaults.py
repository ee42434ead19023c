"""A defaulted definition column edited to NULL means its one default everywhere (no Spark):
the registry a run loads, the run's plan, the export and the API body agree with the default
the document's model and the row class share (a direct SQL edit, as `laketx sql "UPDATE ...
SET retry_delay_seconds = NULL"` makes, done here with delta-rs)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from deltalake import DeltaTable

from lakeguard.actors.keys import Scope
from lakeguard.records.alerts.channel_rows import RouteRow
from lakeguard.records.definitions.jobs import JobRow
from lakeguard.records.sources.rows import SourceObjectRow
from lakeguard.rules.catalog.export import check_export
from lakeguard.rules.catalog.models import Job, SourceObject
from lakeguard.words.durations import seconds
from lakeguard.words.vocabulary import AlertSeverity, FailBehavior
from openlaketx.runner.job import plan
from tests.support.service import Served, serving

API = "/api/v1"
TENANT = "nulls"
# every defaulted column below given a value of its own, so that NULL is seen to change it
DOCUMENT = """version: 1
source_systems:
  - id: shop
    options: {root: feed}
source_objects:
  - id: orders_csv
    system: shop
    locator: "orders/*.csv"
    dataset: bronze_orders
    schema_profile: strict
    fail_behavior: drop
    max_malformed_ratio: 0.25
    columns:
      - {name: order_id, type: bigint}
datasets:
  - id: bronze_orders
    layer: bronze
jobs:
  - id: nightly
    schedule: "0 2 * * *"
    timezone: Europe/Paris
    max_retries: 3
    retry_delay_seconds: 5
    tasks:
      - {id: ingest, dataset: bronze_orders}
notification_channels:
  - {id: hook, kind: webhook, url_ref: file:secrets/hook_url, signing_secret_ref: file:secrets/hook}
notification_routes:
  - {id: all, channel: hook, min_severity: critical, repeat_interval: 1 hour}
"""


@pytest.fixture(scope="module")
def served(template_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("defaults") / "lakehouse"
    shutil.copytree(template_home / "metadata", home / "metadata")
    with serving(home) as found:
        yield found


def _set_null(served: Served, table: str, columns: tuple[str, ...], where: str) -> None:
    """What `laketx sql "UPDATE <table> SET <column> = NULL WHERE ..."` does, with delta-rs."""
    store = served.tenants.get(TENANT).store
    DeltaTable(store.location(table)).update(
        updates=dict.fromkeys(columns, "NULL"), predicate=f"{where} AND tenant_id = '{TENANT}'"
    )


def test_a_column_edited_to_null_runs_exports_and_answers_with_its_one_default(
    served: Served,
) -> None:
    token = served.key(TENANT, (Scope.DEFINITIONS_WRITE, Scope.RUNS_READ))
    with served.client(token) as http:
        applied = http.post(
            f"{API}/definitions/apply",
            content=DOCUMENT,
            headers={"Content-Type": "application/yaml"},
        )
        assert applied.status_code == 200, applied.text
        before = http.get(f"{API}/jobs/nightly").json()
        assert (before["retry_delay_seconds"], before["max_retries"]) == (5, 3)
        _set_null(
            served, "jobs", ("retry_delay_seconds", "max_retries", "timezone"), "job_id = 'nightly'"
        )
        _set_null(
            served,
            "source_objects",
            ("schema_compat_profile", "dq_fail_behavior", "max_malformed_ratio"),
            "source_object_id = 'orders_csv'",
        )
        _set_null(
            served,
            "notification_routes",
            ("min_severity", "repeat_interval"),
            "route_id = 'all'",
        )
        body = http.get(f"{API}/jobs/nightly").json()
        exported = yaml.safe_load(http.get(f"{API}/definitions").text)

    # the one default of each column: its row class's, which the document's model shares
    retry, retries, zone = JobRow.retry_delay_seconds, JobRow.max_retries, JobRow.timezone
    assert (retry, retries, zone) == (30, 0, "UTC")
    assert Job.model_fields["retry_delay_seconds"].default == retry

    # the registry a run loads, and the run's plan
    registry = served.tenants.get(TENANT).reader.definitions.registry()
    assert not registry.problems, registry.problems
    job = registry.job("nightly")
    assert job is not None
    assert (job.retry_delay_seconds, job.max_retries, job.timezone) == (retry, retries, zone)
    planned = plan(registry, "nightly")
    assert (planned.retry_delay_seconds, planned.max_retries) == (retry, retries)
    source = registry.source_object("orders_csv")
    assert source.schema_profile == SourceObjectRow.schema_compat_profile == "additive"
    assert source.fail_behavior is FailBehavior.QUARANTINE
    assert source.max_malformed_ratio == SourceObjectRow.max_malformed_ratio == 0.0
    (route,) = registry.routes
    assert route.min_severity is AlertSeverity(RouteRow.min_severity)
    assert route.repeat_seconds == seconds(RouteRow.repeat_interval)

    # the API body
    assert (body["retry_delay_seconds"], body["max_retries"], body["timezone"]) == (
        retry,
        retries,
        zone,
    )

    # the export: the defaults left out, as a document that does not say them, and read back
    # by the document's model as the same defaults
    (job_entry,) = exported["jobs"]
    assert not {"retry_delay_seconds", "max_retries", "timezone"} & set(job_entry)
    (object_entry,) = exported["source_objects"]
    assert not {"schema_profile", "fail_behavior", "max_malformed_ratio"} & set(object_entry)
    (route_entry,) = exported["notification_routes"]
    assert not {"min_severity", "repeat_interval"} & set(route_entry)
    document = check_export(exported)
    (exported_job,) = document.jobs
    assert (exported_job.retry_delay_seconds, exported_job.max_retries) == (retry, retries)
    assert exported_job.timezone == zone
    (exported_object,) = document.source_objects
    assert isinstance(exported_object, SourceObject)
    assert exported_object.schema_profile == source.schema_profile
    assert exported_object.fail_behavior == source.fail_behavior
    (exported_route,) = document.notification_routes
    assert seconds(exported_route.repeat_interval) == route.repeat_seconds
