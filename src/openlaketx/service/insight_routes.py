"""The API's read routes behind the dashboard's pages: rule trends, profile drift, trust over
time, the schema change log, freshness against the SLA, the quarantine by batch and run
(openlaketx.service: insights, history, quarantine_view) and a decision's diff against the one
it is compared with. Each reads the caller's tenant only, by delta-rs."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from dataclasses import asdict
from typing import Annotated

from fastapi import Depends, FastAPI, Path, Query
from fastapi.encoders import jsonable_encoder

from lakeguard.actors.keys import ApiKey, Scope
from lakeguard.words.shapes import JsonObject
from openlaketx.service import history, insights, quarantine_view
from openlaketx.service.auth import Authenticator
from openlaketx.service.tenants import Tenants

MAX_BATCHES = 200


def install_insight_routes(
    app: FastAPI, prefix: str, tenants: Tenants, auth: Authenticator
) -> None:
    """Add the dashboard's read routes to `app`."""
    reading = Depends(auth.require(Scope.RUNS_READ))
    dataset_path = Path(pattern=r"^[a-z][a-z0-9_]{0,62}$", max_length=63)
    run_path = Path(pattern=r"^[0-9a-f]{32}$")

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
        f"{prefix}/datasets/{{dataset_id}}/quarantine",
        response_model=quarantine_view.QuarantineSample,
    )
    def quarantine(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        limit: Annotated[int, Query(ge=1, le=100)] = quarantine_view.QUARANTINE_SAMPLE,
    ) -> quarantine_view.QuarantineSample:
        return quarantine_view.quarantine(tenants.get(key.tenant_id), dataset_id, limit)

    @app.get(f"{prefix}/datasets/{{dataset_id}}/profiles", response_model=history.ProfileHistory)
    def profiles(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        batches: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
    ) -> history.ProfileHistory:
        return history.profile_history(tenants.get(key.tenant_id), dataset_id, batches)

    @app.get(f"{prefix}/datasets/{{dataset_id}}/trust", response_model=history.TrustHistory)
    def trust(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        last: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
    ) -> history.TrustHistory:
        return history.trust_history(tenants.get(key.tenant_id), dataset_id, last)

    @app.get(f"{prefix}/datasets/{{dataset_id}}/decisions/{{run_id}}/diff")
    def decision_diff(
        dataset_id: Annotated[str, dataset_path],
        run_id: Annotated[str, run_path],
        key: Annotated[ApiKey, reading],
    ) -> JsonObject:
        diff = insights.decision_diff(tenants.get(key.tenant_id), dataset_id, run_id)
        answer: JsonObject = jsonable_encoder({**asdict(diff), "same": diff.same})
        return answer

    @app.get(f"{prefix}/freshness", response_model=list[insights.Freshness])
    def freshness(key: Annotated[ApiKey, reading]) -> list[insights.Freshness]:
        return insights.freshness(tenants.get(key.tenant_id))
