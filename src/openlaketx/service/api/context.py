"""What every API route shares, given to it by dependency: the service's state (`Api`, on
`app.state.api`), the caller's key with the scope a route needs, the caller's lakehouse, and
the path parameters' patterns."""

# No `from __future__ import annotations`: FastAPI reads the dependencies' annotations.

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials
from pydantic import BaseModel, ConfigDict

from lakeguard.actors.keys import ApiKey, Scope
from openlaketx.lakehouse import Lakehouse
from openlaketx.service.auth import BEARER, Authenticator, FailureBrake
from openlaketx.service.hooks import HookVerifier
from openlaketx.service.rates import RateLimiter
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants
from openlaketx.service.warmup import SparkWarmup
from openlaketx.settings import ServiceSettings

PREFIX = "/api/v1"
ID = r"^[a-z][a-z0-9_]{0,62}$"
RUN_ID = r"^[0-9a-f]{32}$"


@dataclass(frozen=True)
class Api:
    """The API's state in one `laketx serve`: the runs and tenants it serves, who may ask,
    and the settings and Spark warm-up its answers report on."""

    runs: RunService
    settings: ServiceSettings
    auth: Authenticator
    hooks: HookVerifier
    brake: FailureBrake
    rates: RateLimiter
    warmup: SparkWarmup

    @property
    def tenants(self) -> Tenants:
        return self.runs.tenants


def api_of(request: Request) -> Api:
    """The state of the app that took `request`."""
    api: Api = request.app.state.api
    return api


def _key_with(scope: Scope) -> Any:
    def dependency(
        request: Request,
        _declared: HTTPAuthorizationCredentials | None = Security(BEARER),
    ) -> ApiKey:
        return api_of(request).auth.key_with(request, scope)

    return Depends(dependency)


State = Annotated[Api, Depends(api_of)]
Reading = Annotated[ApiKey, _key_with(Scope.RUNS_READ)]
Triggering = Annotated[ApiKey, _key_with(Scope.RUNS_TRIGGER)]
Administering = Annotated[ApiKey, _key_with(Scope.KEYS_ADMIN)]
Defining = Annotated[ApiKey, _key_with(Scope.DEFINITIONS_WRITE)]


def _reader(request: Request, key: Reading) -> Lakehouse:
    return api_of(request).tenants.get(key.tenant_id)


# The caller's tenant's lakehouse, for a key that may read: another tenant's job, run or
# dataset is simply not in it (404, never 403).
Readable = Annotated[Lakehouse, Depends(_reader)]

JobId = Annotated[str, Path(pattern=ID, max_length=63)]
DatasetId = Annotated[str, Path(pattern=ID, max_length=63)]
RunId = Annotated[str, Path(pattern=RUN_ID)]


class Model(BaseModel):
    """An API body: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


def plain(value: Any) -> Any:
    """Rows and records as JSON-ready values (dates as ISO text)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
