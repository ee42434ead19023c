"""The API's incident routes: the tenant's alert incidents, each with its events and their
deliveries (openlaketx.service.alerts)."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from typing import Annotated

from fastapi import APIRouter, Path, Query

from openlaketx.service import alerts
from openlaketx.service.api.context import PREFIX, Readable

router = APIRouter(prefix=PREFIX)


@router.get("/incidents", response_model=alerts.IncidentList)
def list_incidents(
    lh: Readable,
    status: Annotated[alerts.Status, Query()] = "all",
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> alerts.IncidentList:
    return alerts.incidents(lh, status, limit, offset)


@router.get("/incidents/{incident_id}", response_model=alerts.IncidentEntry)
def one_incident(
    incident_id: Annotated[str, Path(pattern=r"^[0-9a-f]{32}$")],
    lh: Readable,
) -> alerts.IncidentEntry:
    return alerts.incident(lh, incident_id)
