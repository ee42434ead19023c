"""The incidents as people and programs read them (no Spark): `GET /api/v1/incidents` (typed,
tenant-scoped: another tenant's incident is not found), the dashboard's incident pages, and
`laketx alerts`, each incident with its events and their deliveries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from lakeguard.actors.keys import Scope
from lakeguard.words.vocabulary import AttemptStatus
from openlaketx.cli import app as cli
from openlaketx.config import LakehouseConfig
from openlaketx.service.app import create_app
from openlaketx.service.dispatcher import Dispatcher
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants
from tests.openlaketx.service.dashboard.test_dashboard_pages import login
from tests.support.planted import Plant
from tests.support.project import cells_yaml, write
from tests.support.receivers import SECRET, Receiver, http_receiver

ALERTS = """
notification_channels:
  - {id: hook, kind: webhook, url_ref: env:LAKETX_TEST_HOOK_URL,
     signing_secret_ref: env:LAKETX_TEST_HOOK_SECRET}
notification_routes:
  - {id: everything, channel: hook}
"""


@pytest.fixture
def served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Tenants, Receiver, Path]]:
    home = tmp_path / "lakehouse"
    with http_receiver() as receiver:
        monkeypatch.setenv("LAKETX_TEST_HOOK_URL", receiver.url())
        monkeypatch.setenv("LAKETX_TEST_HOOK_SECRET", SECRET)
        tenants = Tenants(LakehouseConfig.from_env(home=home))
        lh = tenants.get("default")
        lh.apply(write(tmp_path / "p" / "cells.yaml", cells_yaml("_v") + ALERTS))
        plant = Plant(lh.store, dataset="bronze_cells_v", job="cells_job_v")
        plant.attempt(AttemptStatus.BLOCKED, allowed=False)
        plant.attempt(AttemptStatus.SUCCESS, allowed=True, version=1)
        dispatcher = Dispatcher(tenants, clock=lambda: plant.at)
        dispatcher.tick()  # the block, recorded and sent
        runs = RunService(tenants, workers=1)
        with TestClient(create_app(runs), follow_redirects=False) as client:
            yield client, tenants, receiver, home
        runs.drain(30)


def test_the_api_lists_incidents_with_events_and_deliveries_for_its_tenant_only(
    served: tuple[TestClient, Tenants, Receiver, Path],
) -> None:
    client, tenants, receiver, _ = served
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    _, other = tenants.keys.create("beta", (Scope.RUNS_READ,))
    answer = client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text
    (incident,) = answer.json()["incidents"]
    assert (incident["cause"], incident["status"], incident["subject"]) == (
        "BLOCKED",
        "resolved",
        "bronze_cells_v",
    )
    opened, resolved = incident["events"]
    assert (opened["action"], resolved["action"]) == ("OPENED", "RESOLVED")
    assert [d["action"] for d in opened["deliveries"]] == ["CLAIMED", "SENT"]
    assert [d["action"] for d in resolved["deliveries"]] == ["CLAIMED", "SENT"]
    assert "fix:" in opened["explain"]
    one = client.get(
        f"/api/v1/incidents/{incident['incident_id']}", headers={"Authorization": f"Bearer {token}"}
    )
    assert one.status_code == 200 and one.json()["incident_id"] == incident["incident_id"]
    assert (
        client.get(
            "/api/v1/incidents?status=open", headers={"Authorization": f"Bearer {token}"}
        ).json()["incidents"]
        == []
    )
    # another tenant sees none of it: not found, never forbidden
    theirs = client.get("/api/v1/incidents", headers={"Authorization": f"Bearer {other}"})
    assert theirs.status_code == 200 and theirs.json()["incidents"] == []
    hidden = client.get(
        f"/api/v1/incidents/{incident['incident_id']}", headers={"Authorization": f"Bearer {other}"}
    )
    assert hidden.status_code == 404
    assert client.get("/api/v1/incidents").status_code == 401
    schema = client.get("/api/v1/openapi.json").json()
    assert "IncidentList" in schema["components"]["schemas"]
    assert len(receiver.accepted()) == 2


def test_the_dashboard_shows_the_incidents_and_one_with_its_deliveries(
    served: tuple[TestClient, Tenants, Receiver, Path],
) -> None:
    client, tenants, _, _ = served
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    login(client, token)
    listing = client.get("/incidents")
    assert listing.status_code == 200 and 'data-testid="incidents"' in listing.text
    assert "bronze_cells_v: promotion blocked" in listing.text
    incident_id = listing.text.split('href="/incidents/')[1].split('"')[0]
    page = client.get(f"/incidents/{incident_id}")
    assert page.status_code == 200
    assert 'data-testid="incident-status">resolved' in page.text and "SENT" in page.text
    assert client.get("/incidents/0123456789abcdef0123456789abcdef").status_code == 404


def test_laketx_alerts_lists_them_and_shows_one(
    served: tuple[TestClient, Tenants, Receiver, Path],
) -> None:
    *_, home = served
    runner = CliRunner()
    listed = runner.invoke(cli, ["--home", str(home), "alerts", "--json"])
    assert listed.exit_code == 0, listed.output
    (incident,) = json.loads(listed.output)["incidents"]
    shown = runner.invoke(cli, ["--home", str(home), "alerts", incident["incident_id"]])
    assert shown.exit_code == 0, shown.output
    assert "BLOCKED of bronze_cells_v, resolved" in shown.output and "SENT" in shown.output
    plain = runner.invoke(cli, ["--home", str(home), "alerts", "--status", "open"])
    assert plain.exit_code == 0 and "no incidents" in plain.output
