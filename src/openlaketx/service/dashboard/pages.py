"""The dashboard at `/` of `laketx serve`: server-rendered pages over the same read models the
JSON API answers with (the overview, a dataset, a decision, a run), a login that trades an API
key for a session cookie, and the one state-changing action, triggering a job's run, behind
the session's CSRF token and the `runs:trigger` scope. Every form that changes state (login,
logout, "Run now") is refused from another origin, and the login form carries a token of its
own. Pages read metadata by delta-rs only.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.staticfiles import StaticFiles

from lakeguard.decision_diff import diff_decisions
from lakeguard.errors import AuthError, ForbiddenError, LakeTxError, NotRegisteredError
from lakeguard.judged import share_text
from lakeguard.keys import ApiKey, Scope, key_id_of
from lakeguard.vocabulary import TriggerType
from openlaketx.lakehouse import Lakehouse
from openlaketx.service import alerts, history, insights, quarantine_view
from openlaketx.service.auth import FailureBrake, client_address
from openlaketx.service.dashboard.charts import trend_chart
from openlaketx.service.dashboard.drift import profile_charts, trust_charts
from openlaketx.service.dashboard.layout import NODE_H, NODE_W, layout, within
from openlaketx.service.dashboard.sessions import (
    COOKIE,
    LOGIN_COOKIE,
    LoginForms,
    Session,
    Sessions,
    cross_origin,
)
from openlaketx.service.dashboard.timeline import timeline_chart
from openlaketx.service.graph import lineage_graph
from openlaketx.service.problems import status_of
from openlaketx.service.rates import RateLimiter
from openlaketx.service.refusals import TooManyRequests
from openlaketx.service.runs import RunService

_log = logging.getLogger(__name__)
HERE = resources.files("openlaketx.service.dashboard")
TREND_BATCHES = 20
LISTED = 20  # decisions and versions on a dataset page (the API lists them all)
RECENT_RUNS = 30
MAX_DEPTH = 10
ROWS_PAGE = 50
PAGE_READS = 4  # a dataset page's reads at once
ENGINE_PREFIX = "_laketx_"  # the engine's lineage and digest columns: not shown
# Pages load nothing from elsewhere and run no inline script (the SVG uses attributes only).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class LoginNeeded(Exception):
    """No live session (or its key is no longer usable): the login page answers."""


@dataclass(frozen=True, slots=True)
class Viewer:
    session: Session
    key: ApiKey
    lakehouse: Lakehouse

    @property
    def may_trigger(self) -> bool:
        return Scope.RUNS_TRIGGER in self.key.scopes


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals["outcome_of"] = insights.last_outcome
    env.globals["share_text"] = share_text
    return env


def install_dashboard(
    app: FastAPI, runs: RunService, brake: FailureBrake, rates: RateLimiter
) -> None:
    """Add the dashboard's pages, its login and its static files to `app`."""
    tenants = runs.tenants
    sessions = Sessions()
    login_forms = LoginForms()
    env = _environment()
    app.state.sessions = sessions
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="dashboard-static")

    def page(name: str, code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(**context)
        return HTMLResponse(html, status_code=code, headers={"Content-Security-Policy": CSP})

    def login_page(request: Request, code: int = 200, error: str | None = None) -> HTMLResponse:
        """The login page with a fresh form token, its cookie set beside it."""
        form = login_forms.issue()
        answer = page("login.html", code, error=error, csrf=form.field, viewer=None)
        answer.set_cookie(
            LOGIN_COOKIE,
            form.cookie,
            max_age=int(login_forms.lifetime),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/login",
        )
        return answer

    def same_origin(request: Request, form: str) -> None:
        """Raise ForbiddenError when a state-changing form comes from another origin."""
        why = cross_origin(request.headers, request.url.scheme)
        if why is not None:
            _log.warning("dashboard: %s from another origin refused: %s", form, why)
            raise ForbiddenError(
                f"the {form} was sent from another site, so nothing was done",
                fix=f"use the {form} on this server's own pages",
            )

    def viewer(request: Request, scope: Scope = Scope.RUNS_READ) -> Viewer:
        session = sessions.get(request.cookies.get(COOKIE))
        if session is None:
            raise LoginNeeded
        now = datetime.now(UTC)
        key = next(
            (
                k
                for k in tenants.keys.list(session.tenant_id)
                if k.api_key_id == session.api_key_id and k.usable(now)
            ),
            None,
        )
        if key is None:  # revoked or expired since the login
            sessions.end(session.session_id)
            raise LoginNeeded
        rates.take(key)
        if Scope.RUNS_READ not in key.scopes or scope not in key.scopes:
            raise ForbiddenError(
                f"this key may not {scope.value.replace(':', ' ')}",
                fix=f"log in with a key that has the {scope.value} scope",
            )
        return Viewer(session, key, tenants.get(key.tenant_id))

    def failure(request: Request, exc: LakeTxError, *, refresh: bool = False) -> HTMLResponse:
        return page(
            "error.html",
            status_of(exc),
            title=exc.kind,
            what=exc.what,
            fix=exc.fix,
            viewer=None,
            refresh=refresh,
        )

    @app.exception_handler(LoginNeeded)
    async def _login_needed(request: Request, exc: LoginNeeded) -> Response:
        return RedirectResponse("/login", status_code=303)

    @app.get("/login", include_in_schema=False)
    def login_form(request: Request) -> Response:
        return login_page(request)

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        try:
            same_origin(request, "login form")
            if not login_forms.matches(request.cookies.get(LOGIN_COOKIE), _field(form, "csrf")):
                raise ForbiddenError(
                    "the login form has expired or is not this server's: nobody was logged in",
                    fix="log in again with the form below",
                )
        except ForbiddenError as refused:
            # a login CSRF attempt, or a form left open too long: no key is looked at
            return login_page(request, 403, f"{refused.what}; {refused.fix}.")
        token = (_field(form, "key") or "").strip()
        address, key_id = client_address(request), key_id_of(token)
        try:
            await run_in_threadpool(
                brake.check,
                address,
                key_id,
                lambda: key_id is not None and tenants.keys.exists(key_id),
            )
        except TooManyRequests as braked:
            answer = login_page(request, 429, f"{braked.what}; {braked.fix}")
            answer.headers["Retry-After"] = str(braked.retry_after)
            return answer
        try:
            key = await run_in_threadpool(tenants.keys.authenticate, token)
        except AuthError:
            brake.failed(address, key_id)
            return login_page(request, 401, "That key is not valid.")
        session = sessions.start(key.tenant_id, key.api_key_id)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(LOGIN_COOKIE, path="/login")  # used: the session takes over
        response.set_cookie(
            COOKIE,
            session.session_id,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        session = sessions.get(request.cookies.get(COOKIE))
        try:
            same_origin(request, "logout form")
            # Without the session's token nothing changes: deleting the cookie alone would
            # leave a live session behind it, and ending the session would let any page log
            # its visitors out.
            if session is not None and not session.csrf_matches(_field(form, "csrf")):
                raise ForbiddenError(
                    "this logout form is not from this session, so you are still logged in",
                    fix="reload the page and log out again",
                )
        except ForbiddenError as refused:
            return failure(request, refused)
        if session is not None:
            sessions.end(session.session_id)
        # no live session behind the cookie (expired, ended, unknown): nothing to keep
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/", include_in_schema=False)
    def overview(request: Request) -> Response:
        try:
            return _overview(viewer(request))
        except LakeTxError as exc:
            return failure(request, exc)

    def _overview(v: Viewer) -> Response:
        lh = v.lakehouse
        statuses = lh.status()
        fresh = {f.dataset_id: f for f in insights.freshness(lh)}
        layers: dict[str, list[Any]] = {}
        for status in sorted(statuses, key=lambda s: s.dataset_id):
            layers.setdefault(str(status.layer), []).append(status)
        order: list[str] = [name for name in ("bronze", "silver", "gold") if name in layers]
        order += sorted(set(layers) - set(order))
        jobs = sorted(lh.reader.registry().jobs)
        runs = lh.reader.job_runs(RECENT_RUNS)
        return page(
            "overview.html",
            viewer=v,
            layers=[(name, layers[name]) for name in order],
            fresh=fresh,
            runs=runs,
            timeline=timeline_chart(runs, lh.store.now()),
            jobs=jobs,
        )

    @app.get("/datasets/{dataset_id}", include_in_schema=False)
    def dataset(request: Request, dataset_id: str) -> Response:
        try:
            v = viewer(request)
            lh = v.lakehouse
            lh.dataset(dataset_id)
            # the page's reads are independent scans (delta-rs lets go of the GIL): at once
            with ThreadPoolExecutor(max_workers=PAGE_READS) as pool:
                trends_f = pool.submit(insights.rule_trends, lh, dataset_id, TREND_BATCHES)
                versions_f = pool.submit(lh.reader.versions, dataset_id)
                statuses_f = pool.submit(lh.status)
                trust_f = pool.submit(lh.reader.trust_all)
                profiles_f = pool.submit(history.profile_history, lh, dataset_id, TREND_BATCHES)
                trusts_f = pool.submit(history.trust_history, lh, dataset_id, TREND_BATCHES)
                changes_f = pool.submit(insights.schema_changes, lh, dataset_id)
                quarantine_f = pool.submit(quarantine_view.quarantine, lh, dataset_id)
                trends, versions = trends_f.result(), versions_f.result()
            (status,) = [s for s in statuses_f.result() if s.dataset_id == dataset_id]
            return page(
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
            )
        except LakeTxError as exc:
            return failure(request, exc)

    @app.get("/datasets/{dataset_id}/decisions/{run_id}", include_in_schema=False)
    def decision(request: Request, dataset_id: str, run_id: str) -> Response:
        try:
            v = viewer(request)
            lh = v.lakehouse
            lh.dataset(dataset_id)
            record = lh.explain(dataset_id, run_id)
            return page(
                "decision.html",
                viewer=v,
                d=record,
                evidence=record.evidence,
                diff=diff_decisions(record, insights.counterpart(lh, record)),
            )
        except LakeTxError as exc:
            return failure(request, exc)

    @app.get("/datasets/{dataset_id}/versions/{version}", include_in_schema=False)
    def rows(request: Request, dataset_id: str, version: int, offset: int = 0) -> Response:
        # the one page that starts Spark: the approved rows are read from the data table
        try:
            v = viewer(request)
            lh = v.lakehouse
            lh.dataset(dataset_id)
            approved = lh.gate.latest(dataset_id, version)
            if approved is None:
                raise NotRegisteredError(
                    f"{dataset_id} has no approved version {version}", where="data_versions"
                )
            start = max(0, offset)
            frame = lh.read(dataset_id, version)
            columns = [c for c in frame.columns if not c.startswith(ENGINE_PREFIX)]
            found = frame.select(*columns).offset(start).limit(ROWS_PAGE + 1).collect()
            return page(
                "rows.html",
                viewer=v,
                dataset_id=dataset_id,
                version=approved,
                columns=columns,
                rows=[r.asDict(recursive=True) for r in found[:ROWS_PAGE]],
                offset=start,
                previous=max(0, start - ROWS_PAGE) if start else None,
                following=start + ROWS_PAGE if len(found) > ROWS_PAGE else None,
            )
        except LakeTxError as exc:
            return failure(request, exc)

    @app.get("/runs/{run_id}", include_in_schema=False)
    def run(request: Request, run_id: str) -> Response:
        try:
            return _run(viewer(request), run_id)
        except LakeTxError as exc:
            # a passing read error must not freeze the page of a run in flight: it reloads
            return failure(request, exc, refresh=exc.transient)

    def _run(v: Viewer, run_id: str) -> Response:
        lh = v.lakehouse
        record = lh.reader.job_run(run_id) if len(run_id) == 32 else None
        if record is None:
            raise NotRegisteredError(f"no run {run_id}", where="pipeline_runs")
        attempts = lh.reader.attempts(run_id)
        decisions = lh.reader.decisions(run_ids=[a.run_id for a in attempts])
        return page(
            "run.html",
            viewer=v,
            r=record,
            steps=lh.reader.steps(run_id),
            attempts=attempts,
            decisions=decisions,
            running=str(record.status) in ("PENDING", "RUNNING"),
            refresh=str(record.status) in ("PENDING", "RUNNING"),
        )

    @app.get("/incidents", include_in_schema=False)
    def incident_list(request: Request) -> Response:
        try:
            v = viewer(request)
            found = alerts.incidents(v.lakehouse, "all", 200)
            return page("incidents.html", viewer=v, incidents=found.incidents)
        except LakeTxError as exc:
            return failure(request, exc)

    @app.get("/incidents/{incident_id}", include_in_schema=False)
    def incident_page(request: Request, incident_id: str) -> Response:
        try:
            v = viewer(request)
            return page("incident.html", viewer=v, i=alerts.incident(v.lakehouse, incident_id))
        except LakeTxError as exc:
            return failure(request, exc)

    @app.get("/lineage", include_in_schema=False)
    def lineage(request: Request, focus: str | None = None, depth: int = 2) -> Response:
        try:
            return _lineage(viewer(request), focus or None, max(1, min(depth, MAX_DEPTH)))
        except LakeTxError as exc:
            return failure(request, exc)

    def _lineage(v: Viewer, focus: str | None, depth: int) -> Response:
        lh = v.lakehouse
        graph = lineage_graph(lh.reader.registry())
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
        return page(
            "lineage.html",
            viewer=v,
            graph=placed,
            nodes=sorted(graph.nodes, key=lambda n: n.id),
            focus=focus,
            focused=focused,
            depth=depth,
            node_w=NODE_W,
            node_h=NODE_H,
        )

    @app.post("/jobs/{job_id}/runs", include_in_schema=False)
    async def trigger(request: Request, job_id: str) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        return await run_in_threadpool(_trigger, request, job_id, _field(form, "csrf"))

    def _trigger(request: Request, job_id: str, csrf: str | None) -> Response:
        try:
            same_origin(request, '"Run now" form')
            v = viewer(request, Scope.RUNS_TRIGGER)
            if not v.session.csrf_matches(csrf):
                raise AuthError(
                    "the form is not from this session",
                    fix="reload the page and send the form again",
                )
            accepted = runs.submit(
                v.key.tenant_id,
                job_id,
                trigger_type=TriggerType.API,
                triggered_by=f"dashboard, api key {v.key.api_key_id}",
            )
        except LakeTxError as exc:
            return failure(request, exc)
        return RedirectResponse(f"/runs/{accepted.run_id}", status_code=303)


def _field(form: dict[str, list[str]], name: str) -> str | None:
    values = form.get(name)
    return values[0] if values else None
