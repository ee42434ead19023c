"""The service's routes as a newcomer finds them (no Spark): every route is declared at module
level in a router (none nested in an installer), and every API route but the health check and
the signed webhook asks for a key, whose scope is checked once per request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from starlette.testclient import TestClient

from lakeguard.actors.keys import Scope
from openlaketx.config import LakehouseConfig
from openlaketx.service.api.context import PREFIX
from openlaketx.service.app import ROUTERS, create_app
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants

OPEN = {f"{PREFIX}/health", f"{PREFIX}/hooks/{{job_id}}"}


@pytest.fixture
def app_and_tenants(tmp_path: Path) -> Iterator[tuple[TestClient, Tenants]]:
    tenants = Tenants(LakehouseConfig.from_env(home=tmp_path / "lakehouse"))
    runs = RunService(tenants, workers=1)
    with TestClient(create_app(runs), follow_redirects=False) as client:
        yield client, tenants
    runs.drain(30)


def _declared(client: TestClient) -> set[tuple[str, str]]:
    """Every (method, path) of the API, as its OpenAPI document lists it."""
    paths = client.get(f"{PREFIX}/openapi.json").json()["paths"]
    return {(m.upper(), p) for p, ops in paths.items() for m in ops}


def test_every_api_route_is_declared_at_module_level(
    app_and_tenants: tuple[TestClient, Tenants],
) -> None:
    client, _ = app_and_tenants
    in_routers = set()
    for group in ROUTERS:
        for route in group.router.routes:
            assert isinstance(route, APIRoute)
            assert "<locals>" not in route.endpoint.__qualname__, route.path
            in_routers |= {(m, route.path) for m in route.methods or ()}
    assert len(in_routers) > 25
    assert _declared(client) == in_routers


def test_every_api_route_but_health_and_webhook_needs_a_key(
    app_and_tenants: tuple[TestClient, Tenants],
) -> None:
    client, _ = app_and_tenants
    asked = 0
    for method, route in sorted(_declared(client)):
        if route in OPEN:
            continue
        path = (
            route.replace("{job_id}", "j")
            .replace("{dataset_id}", "d")
            .replace("{run_id}", "0" * 32)
            .replace("{incident_id}", "0" * 32)
            .replace("{key_id}", "0" * 12)
        )
        client.app.state.brake.clear()  # type: ignore[attr-defined]  # (it brakes at 10)
        answer = client.request(method, path)
        assert answer.status_code == 401, (method, route, answer.status_code)
        assert answer.headers["content-type"].startswith("application/problem+json")
        asked += 1
    assert asked >= 20


def test_a_read_key_may_read_but_not_administer_and_is_charged_once(
    app_and_tenants: tuple[TestClient, Tenants], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, tenants = app_and_tenants
    _, token = tenants.keys.create("default", (Scope.RUNS_READ,))
    bearer = {"Authorization": f"Bearer {token}"}
    rates = client.app.state.rates  # type: ignore[attr-defined]
    charged: list[str] = []
    take = rates.take
    monkeypatch.setattr(rates, "take", lambda key: (charged.append(key.api_key_id), take(key)))
    # a route that takes both the key and the key's lakehouse charges the key once
    assert client.get(f"{PREFIX}/runs", headers=bearer).status_code == 200
    assert client.get(f"{PREFIX}/datasets", headers=bearer).status_code == 200
    refused = client.get(f"{PREFIX}/keys", headers=bearer)
    assert refused.status_code == 403
    assert "keys:admin" in refused.json()["fix"]
    assert len(charged) == 3
