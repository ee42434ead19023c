"""Definitions over the API, for a CI/CD pipeline (no Spark): plan and apply a YAML or JSON
document with errors as `laketx validate` gives them, the definitions:write scope, the export
document, what changed, the jobs with their next tick, and the lineage graph with columns."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from lakeguard.actors.keys import Scope
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.words.errors import ConfigError, ValidationError
from lakeguard.words.schedule import next_tick
from openlaketx.settings import load_settings
from tests.support.service import Served, serving

API = "/api/v1"
WRITE = (Scope.DEFINITIONS_WRITE, Scope.RUNS_READ)
YAML = {"Content-Type": "application/yaml"}

DOCUMENT = """version: 1
source_systems:
  - id: shop
    options: {root: feed}
source_objects:
  - id: orders_csv
    system: shop
    locator: "orders/*.csv"
    options: {header: "true"}
    dataset: bronze_orders
    columns:
      - {name: order_id, type: bigint}
      - {name: email, type: string, pii: true}
      - {name: region, type: string}
      - {name: amount, type: double}
datasets:
  - id: bronze_orders
    layer: bronze
  - id: silver_orders
    layer: silver
    parents: [bronze_orders]
    business_keys: [order_id]
    columns:
      order_id: order_id
      buyer: "sha2(email, 256)"
      contact: "upper(email)"
      region: region
      amount_cents: "amount * 100"
  - id: gold_by_region
    layer: gold
    sql: |
      WITH big AS (SELECT region, amount_cents FROM silver_orders WHERE amount_cents > 0)
      SELECT region, sum(amount_cents) AS total, count(*) AS orders FROM big GROUP BY region
jobs:
  - id: orders_hourly
    schedule: "15 * * * *"
    timezone: Europe/Paris
    triggers: [file_arrival]
    tasks:
      - {id: ingest, dataset: bronze_orders}
      - {id: clean, dataset: silver_orders, depends_on: [ingest]}
      - {id: report, dataset: gold_by_region, depends_on: [clean]}
"""


@pytest.fixture(scope="module")
def served(template_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("definitions") / "lakehouse"
    shutil.copytree(template_home / "metadata", home / "metadata")
    with serving(home) as found:
        yield found


def post(http: Any, action: str, text: str, media: str = "application/yaml") -> Any:
    return http.post(f"{API}/definitions/{action}", content=text, headers={"Content-Type": media})


def test_a_document_is_planned_then_applied_as_yaml_or_json(served: Served) -> None:
    token = served.key("ci", WRITE)
    with served.client(token) as http:
        planned = post(http, "plan", DOCUMENT)
        assert planned.status_code == 200, planned.text
        body = planned.json()
        assert body["applied"] is False and body["conflicts"] == []
        assert {c["action"] for c in body["changes"]} == {"create"}
        assert body["summary"]["jobs"]["create"] == 1
        assert http.get(f"{API}/jobs").json() == []  # a plan writes nothing
        applied = post(http, "apply", DOCUMENT).json()
        assert applied["applied"] is True and applied["changes"] == body["changes"]
        assert post(http, "apply", DOCUMENT).json()["changes"] == []  # idempotent
        # the same document as JSON, with one change: an update of that job only
        document = yaml.safe_load(DOCUMENT)
        document["jobs"][0]["schedule"] = "45 * * * *"
        as_json = post(http, "apply", json.dumps(document, indent=2), "application/json").json()
        assert [(c["table"], c["key"], c["action"]) for c in as_json["changes"]] == [
            ("jobs", ["orders_hourly"], "update")
        ]
        (job,) = http.get(f"{API}/jobs").json()
        assert job["schedule"] == "45 * * * *"
    # a relative root is taken from the tenant's home, not from the server's working folder
    (system,) = served.tenants.get("ci").reader.definitions.registry().systems.values()
    assert system.options.model_dump()["root"] == str(
        served.tenants.get("ci").config.tenant_home / "feed"
    )


def test_a_bad_document_gets_422_with_path_and_line_as_validate_gives_them(
    served: Served,
) -> None:
    token = served.key("ci_bad", WRITE)
    broken = DOCUMENT.replace("    layer: silver\n", "    layer: platinum\n").replace(
        "    business_keys: [order_id]\n", "    business_keys: [order_id]\n    colour: red\n"
    )
    with pytest.raises(ValidationError) as expected:
        validate_text(broken, "request body")
    with served.client(token) as http:
        refused = post(http, "plan", broken)
        assert refused.status_code == 422
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["errors"] == expected.value.errors
        assert any("(line " in e["path"] for e in refused.json()["errors"])
        not_json = post(http, "plan", '{"version": 1,\n "datasets": [}', "application/json")
        assert not_json.status_code == 422
        assert not_json.json()["errors"][0]["path"] == "request body:2:15"
        assert post(http, "plan", DOCUMENT, "text/csv").status_code == 415
        assert post(http, "apply", "version: 1\ndatasets: {}\n").status_code == 422
        # an immutable field changed: the plan shows the conflict, apply refuses it
        assert post(http, "apply", DOCUMENT).status_code == 200
        moved = DOCUMENT.replace(
            "    layer: silver\n", "    layer: silver\n    table: silver.renamed_orders\n"
        )
        conflicts = post(http, "plan", moved).json()["conflicts"]
        assert conflicts and "silver_orders" in json.dumps(conflicts)
        refused_apply = post(http, "apply", moved)
        assert refused_apply.status_code == 422 and refused_apply.json()["errors"] == conflicts
    assert (
        served.tenants.get("ci_bad").reader.definitions.registry().dataset("silver_orders").layer
        == "silver"
    )


def test_writing_definitions_needs_the_definitions_write_scope(served: Served) -> None:
    reader = served.key("ci_scope", (Scope.RUNS_READ, Scope.RUNS_TRIGGER, Scope.KEYS_ADMIN))
    with served.client(reader) as http:
        for action in ("plan", "apply"):
            refused = post(http, action, DOCUMENT)
            assert refused.status_code == 403, refused.text
            assert "definitions:write" in refused.json()["fix"]
        assert http.get(f"{API}/definitions").status_code == 200  # reading needs runs:read
    assert served.tenants.get("ci_scope").reader.definitions.registry().jobs == {}


def test_export_changes_jobs_and_lineage_describe_the_tenants_definitions(
    served: Served,
) -> None:
    token = served.key("ci_read", WRITE)
    with served.client(token) as http:
        assert post(http, "apply", DOCUMENT).status_code == 200
        exported = http.get(f"{API}/definitions")
        assert exported.headers["content-type"].startswith("application/yaml")
        again = post(http, "plan", exported.text).json()
        assert again["changes"] == [] and again["conflicts"] == []  # the export round-trips
        as_json = http.get(f"{API}/definitions", params={"format": "json"}).json()
        assert {d["id"] for d in as_json["datasets"]} == {
            "bronze_orders",
            "silver_orders",
            "gold_by_region",
        }
        changed = http.get(f"{API}/changes", params={"since": "1h"}).json()
        assert {("job", "orders_hourly", "new"), ("dataset", "gold_by_region", "new")} <= {
            (c["kind"], c["id"], c["action"]) for c in changed["changes"]
        }
        assert http.get(f"{API}/changes", params={"since": "soon"}).status_code == 422
        (listed,) = http.get(f"{API}/jobs").json()
        job = http.get(f"{API}/jobs/orders_hourly").json()
        assert http.get(f"{API}/jobs/no_such_job").status_code == 404
        graph = http.get(f"{API}/lineage").json()
    assert listed["job_id"] == "orders_hourly" and "tasks" not in listed
    assert [(t["task_id"], t["dataset_id"], t["depends_on"]) for t in job["tasks"]] == [
        ("ingest", "bronze_orders", []),
        ("clean", "silver_orders", ["ingest"]),
        ("report", "gold_by_region", ["clean"]),
    ]
    assert (job["schedule"], job["timezone"], job["triggers"]) == (
        "15 * * * *",
        "Europe/Paris",
        ["file_arrival"],
    )
    upcoming = datetime.fromisoformat(job["next_tick"])
    now = served.tenants.get("ci_read").store.now()
    assert upcoming == next_tick("15 * * * *", "Europe/Paris", now) and upcoming > now
    nodes = {n["id"]: n for n in graph["nodes"]}
    edges = {(e["source"], e["target"]) for e in graph["edges"]}
    assert edges == {
        ("source:orders_csv", "dataset:bronze_orders"),
        ("dataset:bronze_orders", "dataset:silver_orders"),
        ("dataset:silver_orders", "dataset:gold_by_region"),
    }
    assert [nodes[n]["kind"] for n in sorted(nodes)] == ["dataset", "model", "dataset", "source"]

    def columns(node: str) -> dict[str, tuple[list[tuple[str, str]], bool]]:
        return {
            c["name"]: ([(r["node"], r["column"]) for r in c["reads"]], c["pii"])
            for c in nodes[node]["columns"]
        }

    assert columns("dataset:bronze_orders")["email"] == ([("source:orders_csv", "email")], True)
    silver = columns("dataset:silver_orders")
    assert silver["buyer"] == ([("dataset:bronze_orders", "email")], False)  # masked
    assert silver["contact"] == ([("dataset:bronze_orders", "email")], True)  # not masked
    assert silver["amount_cents"] == ([("dataset:bronze_orders", "amount")], False)
    gold = columns("dataset:gold_by_region")
    assert gold == {
        "region": ([("dataset:silver_orders", "region")], False),
        "total": ([("dataset:silver_orders", "amount_cents")], False),
        "orders": ([], False),
    }


def test_service_settings_are_validated_field_by_field(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        "trusted_proxies: [10.0.0.0/8]\ntenants:\n  acme: {requests: 5, concurrent_runs: 1}\n"
    )
    settings = load_settings(good)
    assert [str(n) for n in settings.trusted_proxies] == ["10.0.0.0/8"]
    assert (
        settings.limits_of("acme").requests == 5 and settings.limits_of("acme").window_seconds == 60
    )
    assert settings.limits_of("other") == settings.limits
    bad = tmp_path / "bad.yaml"
    bad.write_text("trusted_proxies: [everyone]\nlimits: {requests: 0}\ncolour: red\n")
    with pytest.raises(ConfigError) as refused:
        load_settings(bad)
    for path in ("trusted_proxies.0", "limits.requests", "colour"):
        assert path in refused.value.what
