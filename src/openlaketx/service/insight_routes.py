"""The API's read routes behind the dashboard's pages: rule trends, the schema change log,
freshness against the SLA and the quarantine (openlaketx.service.insights). Each reads the
caller's tenant only, by delta-rs."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from typing import Annotated

from fastapi import Depends, FastAPI, Path, Query

from lakeguard.keys import ApiKey, Scope
from openlaketx.service import insights
from openlaketx.service.auth import Authenticator
from openlaketx.service.tenants import Tenants

MAX_BATCHES = 200


def install_insight_routes(
    app: FastAPI, prefix: str, tenants: Tenants, auth: Authenticator
) -> None:
    """Add the dashboard's read routes to `app`."""
    reading = Depends(auth.require(Scope.RUNS_READ))
    dataset_path = Path(pattern=r"^[a-z][a-z0-9_]{0,62}$", max_length=63)

    @app.get(f"{prefix}/datasets/{{dataset_id}}/rules", response_model=insights.RuleTrends)
    def rule_trends(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        batches: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
    ) -> insights.RuleTrends:
        return insights.rule_trends(tenants.get(key.tenant_id), dataset_id, batches)

    @app.get(
        f"{prefix}/datasets/{{dataset_id}}/schema-changes",
        response_model=list[insights.SchemaChangeEntry],
    )
    def schema_changes(
        dataset_id: Annotated[str, dataset_path], key: Annotated[ApiKey, reading]
    ) -> list[insights.SchemaChangeEntry]:
        return insights.schema_changes(tenants.get(key.tenant_id), dataset_id)

    @app.get(
        f"{prefix}/datasets/{{dataset_id}}/quarantine", response_model=insights.QuarantineSample
    )
    def quarantine(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        limit: Annotated[int, Query(ge=1, le=100)] = insights.QUARANTINE_SAMPLE,
    ) -> insights.QuarantineSample:
        return insights.quarantine(tenants.get(key.tenant_id), dataset_id, limit)

    @app.get(f"{prefix}/freshness", response_model=list[insights.Freshness])
    def freshness(key: Annotated[ApiKey, reading]) -> list[insights.Freshness]:
        return insights.freshness(tenants.get(key.tenant_id))
