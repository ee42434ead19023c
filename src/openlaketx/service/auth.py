"""Who is asking: an API key in `Authorization: Bearer`, its tenant and scopes, and a brake on
clients that keep failing to authenticate."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from fastapi import Request

from lakeguard.errors import AuthError, ForbiddenError
from lakeguard.keys import ApiKey, KeyStore, Scope
from openlaketx.service.problems import BadRequest, TooManyFailures

# Query parameters a client might put a key in: refused, so keys never land in access logs.
KEY_PARAMETERS = frozenset({"access_token", "api_key", "apikey", "key", "token"})


class FailureBrake:
    """At most `limit` failed authentications per client in `window` seconds; more get 429."""

    def __init__(
        self, limit: int = 10, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit, self.window, self._clock = limit, window, clock
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, client: str) -> deque[float]:
        now = self._clock()
        found = self._failures.setdefault(client, deque())
        while found and found[0] <= now - self.window:
            found.popleft()
        return found

    def check(self, client: str) -> None:
        with self._lock:
            recent = self._recent(client)
            if len(recent) >= self.limit:
                wait = int(recent[0] + self.window - self._clock()) + 1
                raise TooManyFailures(max(1, wait))

    def failed(self, client: str) -> None:
        with self._lock:
            self._recent(client).append(self._clock())

    def clear(self) -> None:
        with self._lock:
            self._failures.clear()


class Authenticator:
    """Resolves a request's API key; the token is never logged, stored or echoed."""

    def __init__(self, keys: KeyStore, brake: FailureBrake) -> None:
        self.keys = keys
        self.brake = brake

    def __call__(self, request: Request) -> ApiKey:
        client = request.client.host if request.client else "unknown"
        if KEY_PARAMETERS & {k.lower() for k in request.query_params}:
            raise BadRequest(
                "API keys are not accepted in the query string",
                fix="send the key as `Authorization: Bearer <key>` (and rotate the one sent)",
            )
        self.brake.check(client)
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        try:
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthError("no API key", fix="send a key as `Authorization: Bearer <key>`")
            return self.keys.authenticate(token.strip())
        except AuthError:
            self.brake.failed(client)
            raise

    def require(self, scope: Scope) -> Callable[[Request], ApiKey]:
        """A FastAPI dependency: the request's key, which must carry `scope`."""

        def dependency(request: Request) -> ApiKey:
            key = self(request)
            if scope not in key.scopes:
                raise ForbiddenError(
                    f"this key may not {scope.value.replace(':', ' ')}",
                    fix=f"use a key with the {scope.value} scope",
                )
            return key

        return dependency
