"""The HTTP API under /api/v1 (FastAPI): runs, datasets, decisions, approved rows, verify,
signed webhooks and the tenant's keys (the definitions routes: `catalog_routes.py`), behind
the body cap, the trusted-proxy setting, the security headers, the failure brake and each
key's request budget.

Every route goes through the `Lakehouse` facade of the caller's tenant: the tenant comes from
the API key (or, for a webhook, from the signed request), so another tenant's job, run or
dataset is simply not there (404, never 403). Arbitrary SQL is never accepted.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name
# dependencies local to `create_app`.

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Query, Request, Response, Security
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from lakeguard.actors.keys import ApiKey, Scope
from lakeguard.records.runs.records import JobRunRecord
from lakeguard.words.errors import AuthError, NotRegisteredError
from lakeguard.words.shapes import JsonObject
from lakeguard.words.vocabulary import IN_FLIGHT, TriggerType
from openlaketx.lakehouse import Lakehouse
from openlaketx.service import problems
from openlaketx.service.alert_routes import install_alert_routes
from openlaketx.service.auth import Authenticator, FailureBrake, client_address
from openlaketx.service.catalog_routes import install_catalog_routes
from openlaketx.service.dashboard.pages import install_dashboard
from openlaketx.service.headers import SecurityHeaders
from openlaketx.service.hooks import HookVerifier, Refused
from openlaketx.service.insight_routes import install_insight_routes
from openlaketx.service.limits import BodyLimit
from openlaketx.service.rates import RateLimiter
from openlaketx.service.runs import RunService
from openlaketx.service.warmup import SparkWarmup
from openlaketx.settings import ServiceSettings

_log = logging.getLogger(__name__)
PREFIX = "/api/v1"
ID = r"^[a-z][a-z0-9_]{0,62}$"
RUN_ID = r"^[0-9a-f]{32}$"
MAX_ROWS = 1000
MAX_RUNS = 100
MAX_WAIT_SECONDS = 60  # a long poll holds one of the server's worker threads
ENGINE_PREFIX = "_laketx_"  # the engine's lineage and digest columns
# Declares the webhook's scheme in the OpenAPI document; the route checks the signature itself.
SIGNED = APIKeyHeader(
    name="X-LakeTx-Signature",
    auto_error=False,
    scheme_name="webhookSignature",
    description="sha256=<HMAC-SHA256 of `<timestamp>.<delivery id>.<body>`> with "
    "X-LakeTx-Timestamp and X-LakeTx-Delivery (docs/service.md)",
)


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunRequest(Model):
    wait: float = Field(
        default=0.0,
        ge=0.0,
        le=3600.0,
        description="Seconds the run may wait for another run holding one of its datasets "
        "(0: answer 409 at once)",
    )


class RunAccepted(Model):
    run_id: str
    job_id: str
    new: bool = Field(description="False: the Idempotency-Key named an earlier request")


class RunSummary(Model):
    run_id: str
    job_id: str
    status: str = Field(description="PENDING, RUNNING, COMPLETED, BLOCKED or FAILED")
    trigger_type: str
    triggered_by: str | None
    start_time: datetime
    end_time: datetime | None
    duration_ms: int | None
    error: str | None
    current_step: str | None = Field(description="A run in flight: the dataset it is on")
    retry_of: str | None = Field(description="A retry: the run it retries")
    scheduled_for: datetime | None = Field(description="A schedule's run: its tick (UTC)")


class RunPage(Model):
    runs: list[RunSummary]
    limit: int
    offset: int
    next_offset: int | None


class RunDetail(RunSummary):
    attempts: list[JsonObject]
    steps: list[JsonObject]
    decisions: list[JsonObject]


class RowsPage(Model):
    dataset_id: str
    version: int
    rows: list[JsonObject]
    limit: int
    offset: int


def _summary(record: Any) -> RunSummary:
    return RunSummary(
        run_id=record.pipeline_logging_id,
        job_id=record.pipeline_id,
        status=str(record.status),
        trigger_type=str(record.trigger_type),
        triggered_by=record.triggered_by,
        start_time=record.start_time,
        end_time=record.end_time,
        duration_ms=record.duration_ms,
        error=record.error_message,
        current_step=record.current_step,
        retry_of=record.retry_of,
        scheduled_for=record.scheduled_for,
    )


def _ended(record: JobRunRecord | None) -> bool:
    return record is None or record.status not in IN_FLIGHT


def fingerprint(method: str, path: str, body: BaseModel | None) -> str:
    """What an Idempotency-Key is bound to: the method, the path and the body (as JSON with
    sorted keys, the fields sent)."""
    sent = body.model_dump(mode="json", exclude_unset=True) if body is not None else {}
    text = f"{method}\n{path}\n{json.dumps(sent, sort_keys=True, separators=(',', ':'))}"
    return hashlib.sha256(text.encode()).hexdigest()


def _plain(value: Any) -> Any:
    """Rows and records as JSON-ready values (dates as ISO text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def create_app(
    runs: RunService,
    settings: ServiceSettings | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
    spark: SparkWarmup | None = None,
) -> FastAPI:
    """The API app over a home's tenants (their lakehouses open in `runs.tenants`). `clock`
    times the brakes and budgets; `wall_clock` is what a webhook's timestamp is compared with
    (tests pass their own); `spark` is the warm-up `/health` reports on."""
    warmup = spark or SparkWarmup()
    settings = settings or ServiceSettings()
    tenants = runs.tenants
    brake = FailureBrake(settings.failed_auth_limit, settings.failed_auth_window_seconds, clock)
    rates = RateLimiter(settings.limits_of, clock)
    auth = Authenticator(tenants.keys, brake, rates)
    hooks = HookVerifier(tenants, settings.webhook_tolerance_seconds, wall_clock)
    app = FastAPI(
        title="OpenLakeTx + LakeGuard",
        version="1",
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,  # the interactive pages load scripts from a CDN: not served
        redoc_url=None,
    )

    def body_limit(path: str) -> int:
        if path.startswith(f"{PREFIX}/definitions/"):
            return settings.definitions_body_limit
        return settings.body_limit

    app.add_middleware(BodyLimit, limit=body_limit)
    if settings.trusted_proxies:  # otherwise X-Forwarded-For is nobody's word
        trusted = [str(n) for n in settings.trusted_proxies]
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=trusted)
    app.add_middleware(SecurityHeaders)
    problems.install(app)
    app.state.runs = runs
    app.state.brake = brake
    app.state.rates = rates
    app.state.settings = settings

    def lakehouse(key: ApiKey) -> Lakehouse:
        return tenants.get(key.tenant_id)

    reading = Depends(auth.require(Scope.RUNS_READ))
    triggering = Depends(auth.require(Scope.RUNS_TRIGGER))
    administering = Depends(auth.require(Scope.KEYS_ADMIN))
    job_path = Path(pattern=ID, max_length=63)
    dataset_path = Path(pattern=ID, max_length=63)
    run_path = Path(pattern=RUN_ID)

    @app.get(f"{PREFIX}/health")
    def health() -> JsonObject:
        # No key is needed here, so nothing that counts any tenant's work (runs in flight
        # would tell one tenant about another's): liveness, readiness while draining, and
        # whether a run would still pay for starting Spark.
        return {"status": "ok", "accepting": runs.accepting, "spark": warmup.state.value}

    @app.post(f"{PREFIX}/jobs/{{job_id}}/runs", status_code=202, response_model=RunAccepted)
    def trigger(
        request: Request,
        response: Response,
        job_id: Annotated[str, job_path],
        key: Annotated[ApiKey, triggering],
        body: RunRequest | None = None,
        idempotency_key: Annotated[
            str | None, Header(alias="Idempotency-Key", max_length=200, pattern=r"^[\x21-\x7e]+$")
        ] = None,
    ) -> RunAccepted:
        accepted = runs.submit(
            key.tenant_id,
            job_id,
            trigger_type=TriggerType.API,
            triggered_by=f"api key {key.api_key_id}",
            request_key=f"idem:{idempotency_key}" if idempotency_key else None,
            fingerprint=fingerprint(request.method, request.url.path, body),
            wait=body.wait if body else 0.0,
        )
        response.headers["Location"] = f"{PREFIX}/runs/{accepted.run_id}"
        return RunAccepted(run_id=accepted.run_id, job_id=accepted.job_id, new=accepted.new)

    @app.get(f"{PREFIX}/runs", response_model=RunPage)
    def list_runs(
        key: Annotated[ApiKey, reading],
        limit: Annotated[int, Query(ge=1, le=MAX_RUNS)] = 20,
        offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    ) -> RunPage:
        found = lakehouse(key).reader.runs.job_runs(limit + 1, offset)
        return RunPage(
            runs=[_summary(r) for r in found[:limit]],
            limit=limit,
            offset=offset,
            next_offset=offset + limit if len(found) > limit else None,
        )

    @app.get(f"{PREFIX}/runs/{{run_id}}", response_model=RunDetail)
    def get_run(
        run_id: Annotated[str, run_path],
        key: Annotated[ApiKey, reading],
        wait: Annotated[
            float,
            Query(
                ge=0,
                le=MAX_WAIT_SECONDS,
                description="Seconds to hold the answer until the run ends (a long poll)",
            ),
        ] = 0.0,
    ) -> RunDetail:
        lh = lakehouse(key)
        record = lh.reader.runs.job_run(run_id)
        if record is None:
            raise NotRegisteredError(f"no run {run_id}", where="pipeline_runs")
        if wait > 0 and record.status in IN_FLIGHT:
            runs.wait_for(run_id, wait, ended=lambda: _ended(lh.reader.runs.job_run(run_id)))
            record = lh.reader.runs.job_run(run_id) or record
        attempts = lh.reader.runs.attempts(run_id)
        decisions = lh.reader.decisions.decisions(run_ids=[a.run_id for a in attempts])
        return RunDetail(
            **_summary(record).model_dump(),
            attempts=[_plain(a.as_row()) for a in attempts],
            steps=[_plain(s.as_row()) for s in lh.reader.runs.steps(run_id)],
            decisions=[_plain(d.to_json()) for d in decisions],
        )

    @app.get(f"{PREFIX}/datasets")
    def list_datasets(key: Annotated[ApiKey, reading]) -> list[JsonObject]:
        return [_plain(asdict(s)) for s in lakehouse(key).status()]

    @app.get(f"{PREFIX}/datasets/{{dataset_id}}")
    def get_dataset(
        dataset_id: Annotated[str, dataset_path], key: Annotated[ApiKey, reading]
    ) -> JsonObject:
        lh = lakehouse(key)
        lh.dataset(dataset_id)  # 404 when it is not this tenant's
        (status,) = [s for s in lh.status() if s.dataset_id == dataset_id]
        latest = lh.reader.decisions.latest_decision(dataset_id)
        return _plain(
            {
                **asdict(status),
                "versions": [asdict(v) for v in lh.reader.versions.versions(dataset_id)],
                "trust": asdict(lh.reader.status.trust([dataset_id])[dataset_id]),
                "latest_decision": None if latest is None else latest.to_json(),
            }
        )

    @app.get(f"{PREFIX}/datasets/{{dataset_id}}/decisions/{{run_id}}")
    def get_decision(
        dataset_id: Annotated[str, dataset_path],
        run_id: Annotated[str, run_path],
        key: Annotated[ApiKey, reading],
    ) -> JsonObject:
        decision = lakehouse(key).explain(dataset_id, run_id)
        return _plain(decision.to_json())

    @app.get(f"{PREFIX}/datasets/{{dataset_id}}/rows", response_model=RowsPage)
    def get_rows(
        dataset_id: Annotated[str, dataset_path],
        key: Annotated[ApiKey, reading],
        version: Annotated[int | None, Query(ge=1)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_ROWS)] = 100,
        offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
        engine_columns: Annotated[
            bool, Query(description="Also the engine's _laketx_* lineage columns")
        ] = False,
    ) -> RowsPage:
        lh = lakehouse(key)
        approved = lh.gate.latest(dataset_id, version) if lh.dataset(dataset_id) else None
        frame = lh.read(dataset_id, version)
        assert approved is not None
        if not engine_columns:
            frame = frame.select(*[c for c in frame.columns if not c.startswith(ENGINE_PREFIX)])
        rows = [r.asDict(recursive=True) for r in frame.offset(offset).limit(limit).collect()]
        return RowsPage(
            dataset_id=dataset_id,
            version=approved.version,
            rows=_plain(rows),
            limit=limit,
            offset=offset,
        )

    @app.post(f"{PREFIX}/verify")
    def verify(key: Annotated[ApiKey, reading]) -> JsonObject:
        violations = lakehouse(key).verify()
        return {"holds": not violations, "violations": [_plain(asdict(v)) for v in violations]}

    @app.post(f"{PREFIX}/hooks/{{job_id}}", status_code=202, response_model=RunAccepted)
    async def webhook(
        request: Request,
        response: Response,
        job_id: Annotated[str, job_path],
        _declared: Annotated[str | None, Security(SIGNED)] = None,
    ) -> RunAccepted:
        body = await request.body()
        address, target = client_address(request), hooks.target(request.headers, job_id)
        brake.check(address, target)
        try:
            delivery = await run_in_threadpool(hooks.verify, request.headers, job_id, body)
        except Refused as refused:
            # one answer for every refusal: the caller learns nothing of tenants, jobs or
            # secrets; the operator reads why here
            _log.warning("webhook for %s from %s refused: %s", target, address, refused.detail)
            brake.failed(address, target)
            raise AuthError(
                "the webhook delivery is not authenticated",
                fix="sign `<timestamp>.<delivery id>.<body>` with HMAC-SHA256 and the job's "
                "secret; send X-LakeTx-Timestamp, X-LakeTx-Delivery (letters, digits, `_:-`, "
                "no `.`) and X-LakeTx-Signature: sha256=<hex> (docs/service.md)",
            ) from None
        accepted = await run_in_threadpool(
            runs.submit,
            delivery.tenant,
            delivery.job_id,
            trigger_type=TriggerType.WEBHOOK,
            triggered_by=f"webhook {delivery.delivery_id}",
            request_key=f"hook:{delivery.job_id}:{delivery.delivery_id}",
        )
        response.headers["Location"] = f"{PREFIX}/runs/{accepted.run_id}"
        return RunAccepted(run_id=accepted.run_id, job_id=accepted.job_id, new=accepted.new)

    @app.get(f"{PREFIX}/keys")
    def list_keys(key: Annotated[ApiKey, administering]) -> list[JsonObject]:
        return [_plain(asdict(k)) for k in tenants.keys.list(key.tenant_id)]

    @app.post(f"{PREFIX}/keys/{{key_id}}/revoke")
    def revoke_key(
        key_id: Annotated[str, Path(pattern=r"^[0-9a-f]{12}$")],
        key: Annotated[ApiKey, administering],
    ) -> JsonObject:
        return _plain(asdict(tenants.keys.revoke(key_id, key.tenant_id)))

    install_catalog_routes(app, PREFIX, tenants, auth)
    install_insight_routes(app, PREFIX, tenants, auth)
    install_alert_routes(app, PREFIX, tenants, auth)
    install_dashboard(app, runs, brake, rates)
    return app
