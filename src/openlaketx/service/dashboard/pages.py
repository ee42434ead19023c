"""The dashboard at `/` of `laketx serve`: server-rendered pages over the same read models the
JSON API answers with (the overview, a dataset, a decision, a run), a login that trades an API
key for a session cookie (`login.py`), and the one state-changing action, triggering a job's
run, behind the session's CSRF token and the `runs:trigger` scope. Every form that changes
state (login, logout, "Run now") is refused from another origin, and the login form carries a
token of its own. Pages read metadata by delta-rs only.

The routes are declared here at module level and take the dashboard's state by dependency
(`state.Shared`); `install_dashboard` puts that state on the app and adds the routers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles

from lakeguard.actors.keys import Scope
from lakeguard.rules.decision_diff import diff_decisions
from lakeguard.words.errors import AuthError, LakeTxError, NotRegisteredError
from lakeguard.words.vocabulary import TriggerType
from openlaketx.service import (
    alerts,
    dataset_facts,
    history,
    insights,
    quarantine_view,
    run_views,
)
from openlaketx.service.auth import FailureBrake
from openlaketx.service.dashboard import catalog, login
from openlaketx.service.dashboard.charts import trend_chart
from openlaketx.service.dashboard.drift import profile_charts, trust_charts
from openlaketx.service.dashboard.layout import NODE_H, NODE_W, layout, within
from openlaketx.service.dashboard.state import (
    HERE,
    Dashboard,
    LoginNeeded,
    Shared,
    Viewer,
    field_of,
    same_origin,
    wants_page,
)
from openlaketx.service.dashboard.timeline import timeline_chart
from openlaketx.service.graph import lineage_graph
from openlaketx.service.rates import RateLimiter
from openlaketx.service.runs import RunService

TREND_BATCHES = 20
LISTED = 20  # decisions and versions on a dataset page (the API lists them all)
RECENT_RUNS = 30
RUNS_PAGE = 50  # runs on a page of /runs
MAX_DEPTH = 10
ROWS_PAGE = 50
PAGE_READS = 4  # a dataset page's reads at once

router = APIRouter(include_in_schema=False)
_log = logging.getLogger(__name__)


def install_dashboard(
    app: FastAPI, runs: RunService, brake: FailureBrake, rates: RateLimiter
) -> None:
    """Add the dashboard's pages, its login and its static files to `app`."""
    app.state.dashboard = state = Dashboard(runs, brake, rates)
    app.state.sessions = state.sessions
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="dashboard-static")
    app.include_router(login.router)
    app.include_router(router)
    app.include_router(catalog.router)

    @app.exception_handler(LoginNeeded)
    async def _login_needed(request: Request, exc: LoginNeeded) -> Response:
        return RedirectResponse("/login", status_code=303)

    _errors_as_pages(app, state)


Handler = Callable[[Request, Any], Awaitable[Response]]


def _errors_as_pages(app: FastAPI, state: Dashboard) -> None:
    """A browser asking a page that does not exist, or one that fails, gets an error page in
    the dashboard's layout; an API client still gets the problem document (problems.py) that
    was installed before."""
    api: dict[Any, Handler] = dict(app.exception_handlers)

    def negotiated(kind: type[Exception], page: Callable[[Request, Any], Response]) -> None:
        problem = api[kind]

        async def answer(request: Request, exc: Exception) -> Response:
            if wants_page(request):
                return page(request, exc)
            return await problem(request, exc)

        app.add_exception_handler(kind, answer)

    def http(request: Request, exc: HTTPException) -> Response:
        what = {
            404: f"there is no page at {request.url.path}",
            405: f"{request.url.path} does not take a {request.method}",
        }.get(exc.status_code, str(exc.detail))
        fix = "follow a link from the overview" if exc.status_code == 404 else None
        return state.error_page(exc.status_code, what, fix, headers=dict(exc.headers or {}))

    def invalid(request: Request, exc: RequestValidationError) -> Response:
        said = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'request'}: {e.get('msg')}"
            for e in exc.errors()
        )
        return state.error_page(
            422, f"the address does not fit this page ({said})", "check the address"
        )

    def refused(request: Request, exc: LakeTxError) -> Response:
        return state.failure(exc)

    def unexpected(request: Request, exc: Exception) -> Response:
        _log.error("unexpected error on %s: %s", request.url.path, type(exc).__name__)
        return state.error_page(
            500,
            "the service failed to answer this page (its log has the cause)",
            "try again; if it keeps failing, the service's log says why",
        )

    negotiated(HTTPException, http)
    negotiated(RequestValidationError, invalid)
    negotiated(LakeTxError, refused)
    negotiated(Exception, unexpected)


@router.get("/")
def overview(request: Request, d: Shared) -> Response:
    try:
        return _overview(d, d.viewer(request))
    except LakeTxError as exc:
        return d.failure(exc)


def _overview(d: Dashboard, v: Viewer) -> Response:
    lh = v.lakehouse
    statuses = lh.status()
    fresh = {f.dataset_id: f for f in insights.freshness(lh)}
    layers: dict[str, list[Any]] = {}
    for status in sorted(statuses, key=lambda s: s.dataset_id):
        layers.setdefault(str(status.layer), []).append(status)
    order: list[str] = [name for name in ("bronze", "silver", "gold") if name in layers]
    order += sorted(set(layers) - set(order))
    jobs = sorted(lh.reader.definitions.registry().jobs)
    runs = lh.reader.runs.job_runs(RECENT_RUNS)
    return d.page(
        "overview.html",
        viewer=v,
        layers=[(name, layers[name]) for name in order],
        fresh=fresh,
        runs=runs,
        timeline=timeline_chart(runs, lh.store.now()),
        jobs=jobs,
    )


@router.get("/datasets/{dataset_id}")
def dataset(request: Request, d: Shared, dataset_id: str) -> Response:
    try:
        v = d.viewer(request)
        lh = v.lakehouse
        lh.dataset(dataset_id)
        # the page's reads are independent scans (delta-rs lets go of the GIL): at once
        with ThreadPoolExecutor(max_workers=PAGE_READS) as pool:
            trends_f = pool.submit(insights.rule_trends, lh, dataset_id, TREND_BATCHES)
            versions_f = pool.submit(lh.reader.versions.versions, dataset_id)
            statuses_f = pool.submit(lh.status)
            trust_f = pool.submit(lh.reader.status.trust_all)
            profiles_f = pool.submit(history.profile_history, lh, dataset_id, TREND_BATCHES)
            trusts_f = pool.submit(history.trust_history, lh, dataset_id, TREND_BATCHES)
            changes_f = pool.submit(insights.schema_changes, lh, dataset_id)
            quarantine_f = pool.submit(quarantine_view.quarantine, lh, dataset_id)
            attempts_f = pool.submit(run_views.dataset_attempts, lh, dataset_id, LISTED)
            about_f = pool.submit(dataset_facts.dataset_about, lh, dataset_id)
            trends, versions = trends_f.result(), versions_f.result()
        (status,) = [s for s in statuses_f.result() if s.dataset_id == dataset_id]
        return d.page(
            "dataset.html",
            viewer=v,
            status=status,
            trust=trust_f.result()[dataset_id],
            versions=list(reversed(versions))[:LISTED],
            more_versions=max(0, len(versions) - LISTED),
            # the same query as the trends' (TREND_BATCHES == LISTED): read once, cached
            decisions=list(reversed(insights.recent_decisions(lh, dataset_id, LISTED))),
            charts=[(t, trend_chart(t)) for t in trends.rules],
            profiles=profile_charts(profiles_f.result()),
            trust_history=trust_charts(trusts_f.result()),
            schema_changes=changes_f.result(),
            quarantine=quarantine_f.result(),
            touched=attempts_f.result(),
            about=about_f.result(),
        )
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/datasets/{dataset_id}/decisions/{run_id}")
def decision(request: Request, d: Shared, dataset_id: str, run_id: str) -> Response:
    try:
        v = d.viewer(request)
        lh = v.lakehouse
        lh.dataset(dataset_id)
        record = lh.explain(dataset_id, run_id)
        return d.page(
            "decision.html",
            viewer=v,
            d=record,
            evidence=record.evidence,
            diff=diff_decisions(record, insights.counterpart(lh, record)),
        )
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/datasets/{dataset_id}/versions/{version}")
def rows(request: Request, d: Shared, dataset_id: str, version: int, offset: int = 0) -> Response:
    # the one page that starts Spark: the approved rows are read from the data table
    try:
        v = d.viewer(request)
        lh = v.lakehouse
        lh.dataset(dataset_id)
        if lh.gate.latest(dataset_id, version) is None:
            raise NotRegisteredError(
                f"{dataset_id} has no approved version {version}", where="data_versions"
            )
        start = max(0, offset)
        page = lh.rows_page(dataset_id, version, start, ROWS_PAGE + 1)
        found = page.rows
        return d.page(
            "rows.html",
            viewer=v,
            dataset_id=dataset_id,
            version=page.version,
            columns=page.columns,
            rows=found[:ROWS_PAGE],
            offset=start,
            previous=max(0, start - ROWS_PAGE) if start else None,
            following=start + ROWS_PAGE if len(found) > ROWS_PAGE else None,
        )
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/runs")
def run_list(
    request: Request,
    d: Shared,
    job: str | None = None,
    outcome: str | None = None,
    trigger: str | None = None,
    since: str | None = None,
    until: str | None = None,
    after: str | None = None,
) -> Response:
    try:
        v = d.viewer(request)
        where = run_views.RunFilter.parse(job, outcome, trigger, since, until)
        found = run_views.runs_page(v.lakehouse, where, run_views.Cursor.parse(after), RUNS_PAGE)
        query = where.query()
        return d.page(
            "runs.html",
            viewer=v,
            runs=found.runs,
            where=where,
            query=query,
            following=None if found.after is None else {**query, "after": found.after.text()},
            first=found.first,
            jobs=sorted(v.lakehouse.reader.definitions.registry().jobs),
            outcomes=[str(w) for w in run_views.FILTERABLE],
            triggers=[str(t) for t in TriggerType],
        )
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/runs/{run_id}")
def run(request: Request, d: Shared, run_id: str) -> Response:
    try:
        return _run(d, d.viewer(request), run_id)
    except LakeTxError as exc:
        # a passing read error must not freeze the page of a run in flight: it reloads
        return d.failure(exc, refresh=exc.transient)


def _run(d: Dashboard, v: Viewer, run_id: str) -> Response:
    lh = v.lakehouse
    record = lh.reader.runs.job_run(run_id) if len(run_id) == 32 else None
    if record is None:
        raise NotRegisteredError(f"no run {run_id}", where="pipeline_runs")
    attempts = lh.reader.runs.attempts(run_id)
    decisions = lh.reader.decisions.decisions(run_ids=[a.run_id for a in attempts])
    return d.page(
        "run.html",
        viewer=v,
        r=record,
        steps=lh.reader.runs.steps(run_id),
        tasks=run_views.run_tasks(lh, record, attempts),
        decisions=decisions,
        running=str(record.status) in ("PENDING", "RUNNING"),
        refresh=str(record.status) in ("PENDING", "RUNNING"),
    )


@router.get("/incidents")
def incident_list(request: Request, d: Shared) -> Response:
    try:
        v = d.viewer(request)
        found = alerts.incidents(v.lakehouse, "all", 200)
        return d.page("incidents.html", viewer=v, incidents=found.incidents)
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/incidents/{incident_id}")
def incident_page(request: Request, d: Shared, incident_id: str) -> Response:
    try:
        v = d.viewer(request)
        return d.page("incident.html", viewer=v, i=alerts.incident(v.lakehouse, incident_id))
    except LakeTxError as exc:
        return d.failure(exc)


@router.get("/lineage")
def lineage(request: Request, d: Shared, focus: str | None = None, depth: int = 2) -> Response:
    try:
        return _lineage(d, d.viewer(request), focus or None, max(1, min(depth, MAX_DEPTH)))
    except LakeTxError as exc:
        return d.failure(exc)


def _lineage(d: Dashboard, v: Viewer, focus: str | None, depth: int) -> Response:
    lh = v.lakehouse
    graph = lineage_graph(lh.reader.definitions.registry())
    ids = {n.id for n in graph.nodes}
    if focus is not None and focus not in ids:
        raise NotRegisteredError(f"no lineage node {focus}", where="lineage")
    statuses = lh.status()
    placed = layout(
        graph,
        {s.dataset_id: insights.last_outcome(s.last_status) for s in statuses},
        {s.dataset_id: s.trust for s in statuses},
        None if focus is None else within(graph, focus, depth),
        focus,
    )
    focused = next((n for n in graph.nodes if n.id == focus), None)
    # a dataset's column types where the definitions do not tell: its approved schema's
    approved = None
    if focused is not None and focused.kind != "source":
        approved = lh.reader.versions.approved_schema(focused.name)
    return d.page(
        "lineage.html",
        approved_types={c.name: c.type for c in approved or ()},
        viewer=v,
        graph=placed,
        nodes=sorted(graph.nodes, key=lambda n: n.id),
        focus=focus,
        focused=focused,
        depth=depth,
        node_w=NODE_W,
        node_h=NODE_H,
    )


@router.post("/jobs/{job_id}/runs")
async def trigger(request: Request, d: Shared, job_id: str) -> Response:
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    return await run_in_threadpool(_trigger, request, d, job_id, field_of(form, "csrf"))


def _trigger(request: Request, d: Dashboard, job_id: str, csrf: str | None) -> Response:
    try:
        same_origin(request, '"Run now" form')
        v = d.viewer(request, Scope.RUNS_TRIGGER)
        if not v.session.csrf_matches(csrf):
            raise AuthError(
                "the form is not from this session",
                fix="reload the page and send the form again",
            )
        accepted = d.runs.submit(
            v.key.tenant_id,
            job_id,
            trigger_type=TriggerType.API,
            triggered_by=f"dashboard, api key {v.key.api_key_id}",
        )
    except LakeTxError as exc:
        return d.failure(exc)
    return RedirectResponse(f"/runs/{accepted.run_id}", status_code=303)
