"""The API's dataset routes: each dataset's status, one with its versions, trust and latest
decision, a decision explained, an approved version's rows, and `verify` over the tenant."""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.

from dataclasses import asdict
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import Field, JsonValue

from lakeguard.records.audit import Violation
from lakeguard.records.decisions.versions import ApprovedVersion, DatasetStatus
from lakeguard.records.trust import TrustScore
from lakeguard.words.vocabulary import AttemptStatus, Layer
from openlaketx.service.api.context import PREFIX, DatasetId, Model, Readable, RunId, plain

MAX_ROWS = 1000

router = APIRouter(prefix=PREFIX)


class RowsPage(Model):
    dataset_id: str
    version: int
    rows: list[dict[str, JsonValue]] = Field(description="The dataset's rows, its columns")
    limit: int
    offset: int


class DatasetDetail(Model):
    """A dataset's status (as `/datasets` lists it), its approved versions, its trust score
    and its latest decision (`trust` is the score's components here)."""

    dataset_id: str
    layer: Layer
    table_name: str
    version: int | None
    snapshot_ref: str | None
    row_count: int | None
    promoted_at: datetime | None
    last_status: AttemptStatus | None
    last_run_at: datetime | None
    last_error: str | None
    trust: TrustScore
    stuck: str | None
    versions: list[ApprovedVersion]
    # `explain --json`'s shape, which lakeguard's DecisionRecord.to_json owns
    latest_decision: dict[str, JsonValue] | None


@router.get("/datasets", response_model=list[DatasetStatus])
def list_datasets(lh: Readable) -> list[DatasetStatus]:
    return lh.status()


@router.get("/datasets/{dataset_id}", response_model=DatasetDetail)
def get_dataset(dataset_id: DatasetId, lh: Readable) -> DatasetDetail:
    lh.dataset(dataset_id)  # 404 when it is not this tenant's
    (status,) = [s for s in lh.status() if s.dataset_id == dataset_id]
    latest = lh.reader.decisions.latest_decision(dataset_id)
    return DatasetDetail.model_validate(
        {
            **asdict(status),
            "versions": lh.reader.versions.versions(dataset_id),
            "trust": lh.reader.status.trust([dataset_id])[dataset_id],
            "latest_decision": None if latest is None else plain(latest.to_json()),
        }
    )


@router.get("/datasets/{dataset_id}/decisions/{run_id}")
def get_decision(dataset_id: DatasetId, run_id: RunId, lh: Readable) -> dict[str, JsonValue]:
    """The decision in `explain --json`'s shape (lakeguard's DecisionRecord.to_json)."""
    answer: dict[str, JsonValue] = plain(lh.explain(dataset_id, run_id).to_json())
    return answer


@router.get("/datasets/{dataset_id}/rows", response_model=RowsPage)
def get_rows(
    dataset_id: DatasetId,
    lh: Readable,
    version: Annotated[int | None, Query(ge=1)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    engine_columns: Annotated[
        bool, Query(description="Also the engine's _laketx_* lineage columns")
    ] = False,
) -> RowsPage:
    page = lh.rows_page(dataset_id, version, offset, limit, engine_columns=engine_columns)
    return RowsPage(
        dataset_id=dataset_id,
        version=page.version.version,
        rows=plain(page.rows),
        limit=limit,
        offset=offset,
    )


class Verified(Model):
    holds: bool = Field(description="Whether every invariant of docs/design.md holds")
    violations: list[Violation]


@router.post("/verify")
def verify(lh: Readable) -> Verified:
    violations = lh.verify()
    return Verified(holds=not violations, violations=violations)
