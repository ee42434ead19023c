"""The dashboard's catalog pages, for the team that owns the data: the jobs with their
schedules, next ticks and trigger state; one job; every rule with its definition and edit
history; a dataset's schema per approved version; a search over all of them; and the counts
of a window (openlaketx.service.catalog_view, delta-rs only)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from lakeguard.actors.catalog.changes import parse_since
from lakeguard.words.errors import ConfigError, LakeTxError, NotRegisteredError
from openlaketx.service import catalog_view, window_counts
from openlaketx.service.dashboard.state import Shared

router = APIRouter(include_in_schema=False)
MAX_QUERY = 200  # characters of a search


@router.get("/jobs")
def jobs(request: Request, d: Shared) -> Response:
    try:
        v = d.viewer(request)
        return d.page("jobs.html", viewer=v, jobs=catalog_view.jobs(v.lakehouse))
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/jobs/{job_id}")
def job(request: Request, d: Shared, job_id: str) -> Response:
    try:
        v = d.viewer(request)
        found = [j for j in catalog_view.jobs(v.lakehouse) if j.job_id == job_id]
        if not found:
            raise NotRegisteredError(f"no job {job_id}", where="jobs")
        rules = catalog_view.rules(v.lakehouse)
        datasets = {t[1] for t in found[0].tasks}
        return d.page(
            "job.html",
            viewer=v,
            job=found[0],
            rules=[r for r in rules if r.dataset_id in datasets],
        )
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/rules")
def rules(request: Request, d: Shared) -> Response:
    try:
        v = d.viewer(request)
        return d.page("rules.html", viewer=v, rules=catalog_view.rules(v.lakehouse))
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/datasets/{dataset_id}/schema")
def schema(request: Request, d: Shared, dataset_id: str) -> Response:
    try:
        v = d.viewer(request)
        versions = catalog_view.schema_versions(v.lakehouse, dataset_id)
        return d.page("schema.html", viewer=v, dataset_id=dataset_id, versions=versions)
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/search")
def search(request: Request, d: Shared, q: str = "") -> Response:
    try:
        v = d.viewer(request)
        query = q[:MAX_QUERY]
        hits = catalog_view.search(v.lakehouse, query) if query.strip() else []
        return d.page("search.html", viewer=v, query=query, hits=hits)
    except LakeTxError as exc:
        return d.failure(exc)


WINDOWS = ("24h", "7d", "30d", "90d")


@router.get("/summary")
def summary(request: Request, d: Shared, since: str = "7d") -> Response:
    try:
        v = d.viewer(request)
        lh = v.lakehouse
        try:
            start = parse_since(since[:40], lh.store.now())
        except ConfigError as exc:
            raise ConfigError(
                exc.what, where="since", fix="an age such as 24h or 7d, or an ISO time"
            ) from None
        return d.page(
            "summary.html",
            viewer=v,
            since=since,
            windows=WINDOWS,
            s=window_counts.summary(lh, start),
        )
    except LakeTxError as exc:
        return d.failure(exc)
