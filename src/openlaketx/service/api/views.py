"""The API's read routes behind the dashboard's pages: rule trends, profile drift, trust over
time, the schema change log, freshness against the SLA, the quarantine by batch and run
(openlaketx.service: insights, history, quarantine_view) and a decision's diff against the one
it is compared with. Each reads the caller's tenant only, by delta-rs."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field

from lakeguard.actors.catalog.changes import parse_since
from lakeguard.rules.decision_diff import (
    CheckDelta,
    DefinitionDelta,
    RuleDelta,
    SchemaDelta,
    UpstreamDelta,
)
from lakeguard.words.errors import ConfigError, ValidationError
from openlaketx.service import catalog_view, history, insights, quarantine_view, window_counts
from openlaketx.service.api.context import PREFIX, DatasetId, Model, Readable, RunId

MAX_BATCHES = 200


router = APIRouter(prefix=PREFIX)


class DecisionDiffBody(Model):
    """A decision against the one it is compared with (lakeguard.rules.decision_diff), read
    from the record's attributes."""

    model_config = ConfigDict(from_attributes=True)

    dataset_id: str
    run_id: str
    allowed: bool
    against: str | None = Field(description="The attempt it is compared with (None: none)")
    against_evaluated_at: datetime | None
    against_version: int | None
    against_allowed: bool | None
    definitions: list[DefinitionDelta]
    rules: list[RuleDelta]
    checks: list[CheckDelta]
    policies: list[CheckDelta]
    schema_changes: list[SchemaDelta]
    upstream: list[UpstreamDelta]
    same: bool = Field(description="Nothing the two records hold differs")


@router.get("/datasets/{dataset_id}/rules", response_model=insights.RuleTrends)
def rule_trends(
    dataset_id: DatasetId,
    lh: Readable,
    batches: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
) -> insights.RuleTrends:
    return insights.rule_trends(lh, dataset_id, batches)


@router.get(
    "/datasets/{dataset_id}/schema-changes",
    response_model=list[insights.SchemaChangeEntry],
)
def schema_changes(dataset_id: DatasetId, lh: Readable) -> list[insights.SchemaChangeEntry]:
    return insights.schema_changes(lh, dataset_id)


@router.get(
    "/datasets/{dataset_id}/quarantine",
    response_model=quarantine_view.QuarantineSample,
)
def quarantine(
    dataset_id: DatasetId,
    lh: Readable,
    limit: Annotated[int, Query(ge=1, le=100)] = quarantine_view.QUARANTINE_SAMPLE,
) -> quarantine_view.QuarantineSample:
    return quarantine_view.quarantine(lh, dataset_id, limit)


@router.get("/datasets/{dataset_id}/profiles", response_model=history.ProfileHistory)
def profiles(
    dataset_id: DatasetId,
    lh: Readable,
    batches: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
) -> history.ProfileHistory:
    return history.profile_history(lh, dataset_id, batches)


@router.get("/datasets/{dataset_id}/trust", response_model=history.TrustHistory)
def trust(
    dataset_id: DatasetId,
    lh: Readable,
    last: Annotated[int, Query(ge=1, le=MAX_BATCHES)] = 20,
) -> history.TrustHistory:
    return history.trust_history(lh, dataset_id, last)


@router.get("/datasets/{dataset_id}/decisions/{run_id}/diff", response_model=DecisionDiffBody)
def decision_diff(
    dataset_id: DatasetId,
    run_id: RunId,
    lh: Readable,
) -> DecisionDiffBody:
    return DecisionDiffBody.model_validate(insights.decision_diff(lh, dataset_id, run_id))


@router.get("/freshness", response_model=list[insights.Freshness])
def freshness(lh: Readable) -> list[insights.Freshness]:
    return insights.freshness(lh)


@router.get("/rules", response_model=list[catalog_view.RuleEntry])
def rules(lh: Readable) -> list[catalog_view.RuleEntry]:
    """Every rule (inactive ones too) with its definition today and its edits."""
    return catalog_view.rules(lh)


@router.get(
    "/datasets/{dataset_id}/schema-versions", response_model=list[catalog_view.SchemaVersion]
)
def schema_versions(dataset_id: DatasetId, lh: Readable) -> list[catalog_view.SchemaVersion]:
    """The schema of each approved version, newest first, with its change from the one before."""
    return catalog_view.schema_versions(lh, dataset_id)


@router.get("/search", response_model=list[catalog_view.SearchHit])
def search(
    lh: Readable, q: Annotated[str, Query(min_length=1, max_length=200)]
) -> list[catalog_view.SearchHit]:
    """Datasets, jobs, rules and columns matching every word of `q`."""
    return catalog_view.search(lh, q)


@router.get("/summary", response_model=window_counts.Summary)
def summary(
    lh: Readable,
    since: Annotated[
        str, Query(max_length=40, description="An ISO time (UTC) or an age: 24h, 7d")
    ] = "7d",
) -> window_counts.Summary:
    """What the dataset attempts since then came to: in all, per UTC day and per dataset."""
    try:
        start = parse_since(since, lh.store.now())
    except ConfigError as exc:
        raise ValidationError(
            exc.what, where="since", errors=[{"path": "since", "message": exc.what}]
        ) from None
    return window_counts.summary(lh, start)
