"""Who is asking: an API key in `Authorization: Bearer`, its tenant and scopes, a brake on
clients that keep failing to authenticate, and each key's request budget.

The client's address is the peer's: `X-Forwarded-For` is believed only from a configured
trusted proxy (uvicorn's ProxyHeadersMiddleware, installed by `create_app` then), so a client
cannot choose the address its failures are counted under.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Hashable

from fastapi import Request
from fastapi.security import HTTPBearer

from lakeguard.actors.keys import ApiKey, KeyStore, Scope, key_id_of
from lakeguard.words.errors import AuthError, ForbiddenError
from openlaketx.service.rates import RateLimiter
from openlaketx.service.refusals import BadRequest, TooManyFailures

# Query parameters a client might put a credential in: refused, so none lands in access logs.
# Names are compared folded (lower case, `-` as `_`): `?Authorization=`, `?API-Key=` too.
KEY_PARAMETERS = frozenset(
    {
        "access_token",
        "api_key",
        "apikey",
        "authorization",
        "bearer",
        "key",
        "password",
        "secret",
        "token",
    }
)
# Declares the scheme in the OpenAPI document; the header is read below, whatever it holds.
BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="An API key (`laketx keys create`): `Authorization: Bearer ltx_...`",
)


class FailureBrake:
    """Failed authentications, counted per client address and per credential presented from
    it (an API key id, a webhook target); `limit` of either in `window` seconds brakes.

    A braked credential gets 429 from that address. A braked address gets 429 for anything
    but a credential that vouches for itself (an API key id that exists): one client failing
    behind a shared address does not lock out the other keys used from it, and inventing key
    ids does not dodge the brake. In memory, per process: a restart forgets the failures.
    """

    def __init__(
        self, limit: int = 10, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._failures: dict[Hashable, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, bucket: Hashable) -> deque[float]:
        now = self._clock()
        found = self._failures.setdefault(bucket, deque())
        while found and found[0] <= now - self.window:
            found.popleft()
        return found

    def _wait(self, recent: deque[float]) -> int:
        return max(1, int(recent[0] + self.window - self._clock()) + 1)

    def check(
        self, address: str, credential: str | None, vouched: Callable[[], bool] = lambda: False
    ) -> None:
        """Raise TooManyFailures when this address or this credential from it is braked."""
        with self._lock:
            if credential is not None:
                recent = self._recent(("credential", address, credential))
                if len(recent) >= self.limit:
                    raise TooManyFailures(self._wait(recent))
            recent = self._recent(("address", address))
            if len(recent) < self.limit:
                return
            wait = self._wait(recent)
        if credential is None or not vouched():
            raise TooManyFailures(wait)

    def failed(self, address: str, credential: str | None) -> None:
        with self._lock:
            now = self._clock()
            self._recent(("address", address)).append(now)
            if credential is not None:
                self._recent(("credential", address, credential)).append(now)
            if len(self._failures) > 10_000:  # forget buckets whose failures have expired
                for bucket in [b for b in self._failures if not self._recent(b)]:
                    del self._failures[bucket]

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()


def credential_parameter(name: str) -> bool:
    """Whether a query parameter's name looks like a credential's, whatever its case."""
    return name.strip().casefold().replace("-", "_") in KEY_PARAMETERS


def client_address(request: Request) -> str:
    """The client's address: the peer's, or the one a trusted proxy forwarded."""
    return request.client.host if request.client else "unknown"


class Authenticator:
    """Resolves a request's API key; the token is never logged, stored or echoed."""

    def __init__(self, keys: KeyStore, brake: FailureBrake, rates: RateLimiter) -> None:
        self.keys = keys
        self.brake = brake
        self.rates = rates

    def __call__(self, request: Request) -> ApiKey:
        address = client_address(request)
        if any(credential_parameter(name) for name in request.query_params):
            raise BadRequest(
                "API keys are not accepted in the query string",
                fix="send the key as `Authorization: Bearer <key>` (and rotate the one sent)",
            )
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        token = token.strip() if scheme.lower() == "bearer" else ""
        key_id = key_id_of(token)
        self.brake.check(address, key_id, lambda: key_id is not None and self.keys.exists(key_id))
        try:
            if not token:
                raise AuthError("no API key", fix="send a key as `Authorization: Bearer <key>`")
            key = self.keys.authenticate(token)
        except AuthError:
            self.brake.failed(address, key_id)
            raise
        self.rates.take(key)
        return key

    def key_with(self, request: Request, scope: Scope) -> ApiKey:
        """The request's key, which must carry `scope`."""
        key = self(request)
        if scope not in key.scopes:
            raise ForbiddenError(
                f"this key may not {scope.value.replace(':', ' ')}",
                fix=f"use a key with the {scope.value} scope",
            )
        return key
