"""The service's app (FastAPI): the API under /api/v1 (its routers: `openlaketx.service.api`)
and the dashboard, behind the body cap, the trusted-proxy setting, the security headers, the
failure brake and each key's request budget.

Every route goes through the `Lakehouse` facade of the caller's tenant: the tenant comes from
the API key (or, for a webhook, from the signed request), so another tenant's job, run or
dataset is simply not there (404, never 403). Arbitrary SQL is never accepted.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi import FastAPI
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from openlaketx.service import problems
from openlaketx.service.api import (
    datasets,
    definitions,
    incidents,
    keys,
    views,
    webhooks,
)
from openlaketx.service.api import (
    runs as run_routes,
)
from openlaketx.service.api.context import PREFIX, Api
from openlaketx.service.auth import Authenticator, FailureBrake
from openlaketx.service.dashboard.pages import install_dashboard
from openlaketx.service.headers import SecurityHeaders
from openlaketx.service.hooks import HookVerifier
from openlaketx.service.limits import BodyLimit
from openlaketx.service.rates import RateLimiter
from openlaketx.service.runs import RunService
from openlaketx.service.warmup import SparkWarmup
from openlaketx.settings import ServiceSettings

ROUTERS = (run_routes, datasets, definitions, views, incidents, keys, webhooks)


def create_app(
    runs: RunService,
    settings: ServiceSettings | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
    wall_clock: Callable[[], float] = time.time,
    spark: SparkWarmup | None = None,
) -> FastAPI:
    """The app over a home's tenants (their lakehouses open in `runs.tenants`). `clock` times
    the brakes and budgets; `wall_clock` is what a webhook's timestamp is compared with (tests
    pass their own); `spark` is the warm-up `/health` reports on."""
    settings = settings or ServiceSettings()
    brake = FailureBrake(settings.failed_auth_limit, settings.failed_auth_window_seconds, clock)
    rates = RateLimiter(settings.limits_of, clock)
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
    app.state.api = Api(
        runs=runs,
        settings=settings,
        auth=Authenticator(runs.tenants.keys, brake, rates),
        hooks=HookVerifier(runs.tenants, settings.webhook_tolerance_seconds, wall_clock),
        brake=brake,
        rates=rates,
        warmup=spark or SparkWarmup(),
    )
    app.state.brake = brake
    app.state.rates = rates
    for group in ROUTERS:
        app.include_router(group.router)
    install_dashboard(app, runs, brake, rates)
    return app
