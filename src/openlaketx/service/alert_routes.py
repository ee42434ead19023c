"""The API's incident routes: the tenant's alert incidents, each with its events and their
deliveries (openlaketx.service.alerts)."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from typing import Annotated

from fastapi import Depends, FastAPI, Path, Query

from lakeguard.actors.keys import ApiKey, Scope
from openlaketx.service import alerts
from openlaketx.service.auth import Authenticator
from openlaketx.service.tenants import Tenants


def install_alert_routes(app: FastAPI, prefix: str, tenants: Tenants, auth: Authenticator) -> None:
    """Add `GET /incidents` and `GET /incidents/{incident_id}` to `app`."""
    reading = Depends(auth.require(Scope.RUNS_READ))

    @app.get(f"{prefix}/incidents", response_model=alerts.IncidentList)
    def list_incidents(
        key: Annotated[ApiKey, reading],
        status: Annotated[alerts.Status, Query()] = "all",
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        offset: Annotated[int, Query(ge=0)] = 0,
    ) -> alerts.IncidentList:
        return alerts.incidents(tenants.get(key.tenant_id), status, limit, offset)

    @app.get(f"{prefix}/incidents/{{incident_id}}", response_model=alerts.IncidentEntry)
    def one_incident(
        incident_id: Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")],
        key: Annotated[ApiKey, reading],
    ) -> alerts.IncidentEntry:
        return alerts.incident(tenants.get(key.tenant_id), incident_id)
