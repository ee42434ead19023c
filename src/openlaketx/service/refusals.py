"""The service's own refusals, each with the HTTP status `problems.py` answers it with."""

from __future__ import annotations

from lakeguard.words.errors import ExitCode, LakeTxError


class ServiceStopping(LakeTxError):
    """The service is draining: it accepts no new run (HTTP 503)."""

    transient = True
    exit_code = ExitCode.UNAVAILABLE


class BadRequest(LakeTxError):
    """A request the API refuses as it is (HTTP 400)."""


class PayloadTooLarge(LakeTxError):
    """A request body over the limit (HTTP 413)."""


class UnsupportedMediaType(LakeTxError):
    """A body of a type the route does not read (HTTP 415)."""


class IdempotencyKeyReused(LakeTxError):
    """An Idempotency-Key sent before with another request (HTTP 422)."""


class TooManyRequests(LakeTxError):
    """A budget is spent: wait `retry_after` seconds (HTTP 429 with Retry-After)."""

    transient = True

    def __init__(self, what: str, *, retry_after: int, fix: str | None = None) -> None:
        super().__init__(what, fix=fix or f"wait {retry_after} s, then send it again")
        self.retry_after = retry_after


class TooManyFailures(TooManyRequests):
    """Too many failed authentications from one client (HTTP 429)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "too many failed authentications from this client",
            retry_after=retry_after,
            fix=f"wait {retry_after} s, then send a valid credential",
        )


class TooManyRuns(TooManyRequests):
    """The tenant has as many runs accepted or in flight as it may (HTTP 429)."""
