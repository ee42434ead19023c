"""The catalog pages a team looks for (no Spark): the jobs with their schedules, next ticks and
trigger state; every rule with its definition and edit history (from the `quality_rules`
table's own history); a dataset's schema per approved version with its diff; and a search over
datasets, jobs, rules and columns. Each keeps to its tenant and shows what it finds as text;
the API answers the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lakeguard.actors.keys import Scope
from lakeguard.records.checks.result_rows import SchemaSnapshotRow
from lakeguard.records.checks.rule_rows import QualityRuleRow
from lakeguard.records.decisions.rows import DataVersionRow
from lakeguard.records.evidence import CheckKind, CheckRecord, CheckResult
from lakeguard.words.schedule import next_tick
from lakeguard.words.vocabulary import AttemptStatus
from openlaketx.config import LakehouseConfig
from openlaketx.service import catalog_view, window_counts
from openlaketx.service.app import create_app
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants
from tests.openlaketx.service.dashboard.test_dashboard_pages import login
from tests.support.planted import T0, Plant
from tests.support.project import cells_yaml, write

S = "_cat"
XSS = "<script>alert(1)</script>"
OWNED = f"""
  - id: ledger{S}
    layer: silver
    parents: [bronze_cells{S}]
    name: Payments ledger
    domain: finance
    owner: ana@example.com
    description: "Every settled payment {XSS}"
"""
JOBS = f"""
  - id: nightly{S}
    description: "Ledger at six {XSS}"
    owner: data-team
    schedule: "0 6 * * *"
    timezone: Europe/Paris
    triggers: [file_arrival]
    tasks:
      - {{id: ingest, dataset: ledger{S}}}
  - id: paused{S}
    enabled: false
    schedule: "*/5 * * * *"
    tasks:
      - {{id: ingest, dataset: ledger{S}}}
"""


def document(loosened: bool = False) -> str:
    text = cells_yaml(S).replace("datasets:\n", "datasets:\n" + OWNED.lstrip("\n"), 1)
    text = text.replace("jobs:\n", "jobs:\n" + JOBS.lstrip("\n"), 1)
    text = text.replace(
        "{name: radio, type: string}", "{name: radio, type: string, description: Radio kind}"
    )
    if loosened:  # the range rule: WARN, with a 50 % tolerance
        text = text.replace(
            "min: -90, max: 90, severity: FAIL}",
            "min: -90, max: 90, threshold: 0.5, severity: WARN}",
        )
    return text


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, Tenants, str, Path]]:
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    tenants.get("default").apply(write(tmp_path / "p" / "cells.yaml", document()))
    other = tenants.get("other")
    other.apply(write(tmp_path / "q" / "cells.yaml", cells_yaml("_theirs")))
    runs = RunService(tenants, workers=1)
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    with TestClient(create_app(runs), follow_redirects=False) as client:
        yield client, tenants, token, tmp_path
    runs.drain(30)


def test_the_jobs_page_shows_schedule_next_tick_trigger_state_and_last_run(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, _ = site
    lh = tenants.get("default")
    Plant(lh.store, dataset=f"ledger{S}", job=f"nightly{S}").attempt(
        AttemptStatus.FAILED, error="the feed was down"
    )
    login(client, token)
    page = client.get("/jobs")
    assert page.status_code == 200
    found = {j.job_id: j for j in catalog_view.jobs(lh)}
    nightly, paused = found[f"nightly{S}"], found[f"paused{S}"]
    expected = next_tick("0 6 * * *", "Europe/Paris", lh.store.now())
    assert nightly.next_tick == expected and expected is not None
    assert nightly.trigger_state == "schedule, file_arrival"
    assert nightly.owner == "data-team" and nightly.last_run is not None
    assert str(nightly.last_run.status) == "FAILED"
    assert paused.trigger_state == "paused" and paused.next_tick is None
    assert found[f"cells_job{S}"].trigger_state == "manual only"
    assert expected.strftime("%Y-%m-%d %H:%M:%S") in page.text
    assert "cells_job_theirs" not in page.text  # another tenant's job
    assert XSS not in page.text and "&lt;script&gt;" in page.text
    one = client.get(f"/jobs/nightly{S}")
    assert one.status_code == 200 and "data-team" in one.text and "FAILED" in one.text
    assert f'href="/datasets/ledger{S}"' in one.text
    assert client.get("/jobs/cells_job_theirs").status_code == 404


def test_the_rules_index_shows_each_rule_as_it_is_and_every_edit_of_it(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, tmp_path = site
    lh = tenants.get("default")
    lh.apply(write(tmp_path / "p" / "cells.yaml", document(loosened=True)))
    # deactivated as docs/metadata.md says (a direct edit: a document never deactivates a rule)
    (unique,) = [
        r for r in lh.store.definitions(QualityRuleRow) if r.rule_id == f"silver_unique{S}"
    ]
    lh.store.upsert("quality_rules", [replace(unique, active=False)])
    rules = {r.rule_id: r for r in catalog_view.rules(lh)}
    loosened = rules[f"lat_range{S}"]
    assert (loosened.severity, loosened.threshold, loosened.active) == ("WARN", "50%", True)
    assert [e.action for e in loosened.history] == ["created", "changed"]
    assert set(loosened.history[1].changes) == {"severity FAIL → WARN", "threshold 0% → 50%"}
    gone = rules[f"silver_unique{S}"]
    assert not gone.active and [e.action for e in gone.history] == ["created", "deactivated"]
    assert [e.action for e in rules[f"radio_known{S}"].history] == ["created"]
    assert "lat_range_theirs" not in rules
    login(client, token)
    page = client.get("/rules")
    assert page.status_code == 200
    assert "threshold 0% → 50%" in page.text and "deactivated" in page.text
    assert 'data-severity="WARN"' in page.text and "lat_range_theirs" not in page.text
    bearer = {"Authorization": f"Bearer {token}"}
    api = {r["rule_id"]: r for r in client.get("/api/v1/rules", headers=bearer).json()}
    assert api[f"lat_range{S}"]["threshold"] == "50%"
    assert [e["action"] for e in api[f"lat_range{S}"]["history"]] == ["created", "changed"]


def plant_schema(
    tenants: Tenants, dataset: str, version: int, columns: list[tuple[str, str, bool]]
) -> None:
    """An approved version of `dataset` and the schema its run captured."""
    lh = tenants.get("default")
    run_id = f"{version:032x}"
    at = lh.store.now() + timedelta(seconds=version)
    lh.store.append_rows(
        [
            DataVersionRow(
                tenant_id="default",
                dataset_id=dataset,
                version=version,
                snapshot_ref=str(version),
                schema_hash=str(version),
                row_count=1,
                run_id=run_id,
                promoted_at=at,
                promoted_by="test",
            )
        ],
        _by_gate=True,
    )
    schema = [{"name": n, "type": t, "nullable": null} for n, t, null in columns]
    lh.store.append_rows(
        [
            SchemaSnapshotRow(
                run_id=run_id,
                tenant_id="default",
                dataset_id=dataset,
                schema_hash=str(version),
                schema_json=json.dumps(schema),
                captured_at=at,
            )
        ]
    )


def test_the_schema_page_shows_each_approved_version_and_what_changed(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, _ = site
    dataset = f"bronze_cells{S}"
    plant_schema(tenants, dataset, 1, [("radio", "string", True), ("cell", "int", True)])
    plant_schema(tenants, dataset, 2, [("radio", "string", True), ("cell", "int", True)])
    plant_schema(
        tenants,
        dataset,
        3,
        [("radio", "string", False), ("cell", "bigint", True), ("lat", "double", True)],
    )
    versions = catalog_view.schema_versions(tenants.get("default"), dataset)
    assert [v.version for v in versions] == [3, 2, 1]
    newest, same, first = versions
    assert newest.added == ("lat",) and newest.retyped == ("cell: int → bigint",)
    assert newest.nullability == ("radio: now not null",) and newest.removed == ()
    assert (same.added, same.removed, same.retyped, same.nullability) == ((), (), (), ())
    assert first.columns is not None and len(first.columns) == 2
    login(client, token)
    page = client.get(f"/datasets/{dataset}/schema")
    assert page.status_code == 200
    assert "added <code>lat</code>" in page.text and "cell: int → bigint" in page.text
    assert "Same schema as the version before." in page.text
    assert client.get("/datasets/bronze_cells_theirs/schema").status_code == 404
    bearer = {"Authorization": f"Bearer {token}"}
    api = client.get(f"/api/v1/datasets/{dataset}/schema-versions", headers=bearer).json()
    assert [v["version"] for v in api] == [3, 2, 1] and api[0]["added"] == ["lat"]


def test_search_finds_datasets_jobs_rules_and_columns_of_its_tenant_only(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, _ = site
    plant_schema(tenants, f"ledger{S}", 1, [("settled_amount", "decimal(18,2)", True)])
    lh = tenants.get("default")

    def found(query: str) -> set[tuple[str, str]]:
        return {(h.kind, h.id) for h in catalog_view.search(lh, query)}

    assert found("finance") == {("dataset", f"ledger{S}")}  # by domain
    assert found("ANA@example") == {("dataset", f"ledger{S}")}  # by owner, any case
    assert found("payments ledger") == {("dataset", f"ledger{S}")}  # every word, by name
    assert ("job", f"nightly{S}") in found("data-team")
    assert found("settled") == {("column", f"ledger{S}.settled_amount"), ("dataset", f"ledger{S}")}
    assert ("rule", f"radio_known{S}") in found("radio_known")
    assert not {i for _, i in found("cells")} & {"bronze_cells_theirs", "cells_job_theirs"}
    assert found("   ") == set() and found("nothing-is-called-this") == set()
    login(client, token)
    page = client.get("/search", params={"q": XSS})
    assert page.status_code == 200 and XSS not in page.text
    hits = client.get("/search", params={"q": "finance"})
    assert f'href="/datasets/ledger{S}"' in hits.text
    bearer = {"Authorization": f"Bearer {token}"}
    api = client.get("/api/v1/search", params={"q": "finance"}, headers=bearer).json()
    assert [(h["kind"], h["id"]) for h in api] == [("dataset", f"ledger{S}")]


def test_the_summary_counts_each_attempt_of_the_window_once(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, _ = site
    lh = tenants.get("default")
    plant = Plant(lh.store, dataset=f"bronze_cells{S}", job=f"cells_job{S}")
    plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
    plant.attempt(AttemptStatus.SUCCESS)  # nothing new
    held = plant.attempt(AttemptStatus.BLOCKED, allowed=False, warn=True)
    plant.attempt(AttemptStatus.FAILED, error="boom")
    Plant(tenants.get("other").store, dataset="bronze_cells_theirs").attempt(AttemptStatus.FAILED)
    everything = window_counts.summary(lh, T0 - timedelta(hours=1))
    assert everything.total == window_counts.Counts(
        promoted=1, nothing_new=1, held=1, failed=1, warned=1
    )
    assert [d for d, _ in everything.by_day] == [T0.date()]
    assert [d for d, _ in everything.by_dataset] == [f"bronze_cells{S}"]
    later = window_counts.summary(lh, held.start_time)  # from the held attempt on
    assert later.total == window_counts.Counts(held=1, failed=1, warned=1)
    login(client, token)
    page = client.get("/summary", params={"since": (T0 - timedelta(hours=1)).isoformat()})
    assert page.status_code == 200 and 'data-count="held">1<' in page.text
    assert "bronze_cells_theirs" not in page.text
    assert client.get("/summary", params={"since": "soon"}).status_code == 400
    bearer = {"Authorization": f"Bearer {token}"}
    api = client.get(
        "/api/v1/summary", params={"since": held.start_time.isoformat()}, headers=bearer
    ).json()
    assert api["total"] == {"promoted": 0, "nothing_new": 0, "held": 1, "failed": 1, "warned": 1}
    bad = client.get("/api/v1/summary", params={"since": "soon"}, headers=bearer)
    assert bad.status_code == 422


def test_a_dataset_page_says_what_the_yaml_says_of_it(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    client, tenants, token, _ = site
    plant_schema(tenants, f"bronze_cells{S}", 1, [("radio", "string", True), ("cell", "int", True)])
    login(client, token)
    ledger = client.get(f"/datasets/ledger{S}")
    assert ledger.status_code == 200
    about = ledger.text[ledger.text.index('data-testid="about"') :]
    assert "Payments ledger" in about and "ana@example.com" in about and "finance" in about
    assert XSS not in ledger.text and "Every settled payment &lt;script&gt;" in about
    assert f'href="/jobs/nightly{S}"' in about and f'href="/jobs/paused{S}"' in about
    assert f'href="/datasets/ledger{S}/schema"' in about
    bronze = client.get(f"/datasets/bronze_cells{S}").text
    columns = bronze[bronze.index('data-testid="columns"') :]
    assert "<td>radio</td><td>string</td><td>yes</td><td>Radio kind</td>" in columns
    assert f'href="/jobs/cells_job{S}"' in bronze


def test_a_promotion_with_an_alert_policy_says_so_above_the_fold(
    site: tuple[TestClient, Tenants, str, Path],
) -> None:
    """A VOLUME policy in ALERT mode that failed was only in the reason's text."""
    client, tenants, token, _ = site
    lh = tenants.get("default")
    volume = CheckRecord(
        name="volume_band",
        kind=CheckKind.POLICY,
        result=CheckResult.ALERT,
        detail="rows 12 outside the learnt band 90-110",
        blocking=False,
    )
    plant = Plant(lh.store, dataset=f"bronze_cells{S}", job=f"cells_job{S}")
    row = plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1, checks=(volume,), warn=True)
    login(client, token)
    page = client.get(f"/datasets/bronze_cells{S}/decisions/{row.run_id}").text
    flagged = page[
        page.index('data-testid="flagged"') : page.index(
            "</section>", page.index('data-testid="flagged"')
        )
    ]
    assert 'data-alert="volume_band"' in flagged and "outside the learnt band" in flagged
    assert f'data-warn="radio_known{S}"' in flagged and "3 / 10 failing (30%" in flagged
    assert page.index('data-testid="flagged"') < page.index("<h2>Rules")
