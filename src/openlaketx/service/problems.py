"""Every error over HTTP as RFC 9457 `application/problem+json`, with the what / where / fix
the engine's errors carry, and never a token, a hash or an internal trace."""

from __future__ import annotations

import logging
from typing import TypedDict

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from lakeguard.words.errors import (
    AuthError,
    ForbiddenError,
    LakeTxError,
    NotRegisteredError,
    ValidationError,
    WriteConflict,
)
from openlaketx.service.headers import SECURITY_HEADERS
from openlaketx.service.refusals import (
    BadRequest,
    IdempotencyKeyReused,
    PayloadTooLarge,
    ServiceStopping,
    TooManyRequests,
    UnsupportedMediaType,
)

MEDIA_TYPE = "application/problem+json"
_log = logging.getLogger(__name__)


class ProblemMembers(TypedDict, total=False):
    """What a problem document adds to RFC 9457's members: an engine error's where, fix and
    whether a retry may succeed; each field of an invalid request or document."""

    where: str | None
    fix: str | None
    transient: bool
    errors: list[dict[str, str]]  # each {"path", "message"}


class Problem(ProblemMembers):
    """An RFC 9457 problem document, with the members this server adds."""

    type: str
    title: str
    status: int
    detail: str
    instance: str


def status_of(exc: LakeTxError) -> int:
    """The HTTP status an error of the engine answers with."""
    for kind, status in (
        (AuthError, 401),
        (ForbiddenError, 403),
        (NotRegisteredError, 404),
        (WriteConflict, 409),
        (PayloadTooLarge, 413),
        (UnsupportedMediaType, 415),
        (ValidationError, 422),
        (IdempotencyKeyReused, 422),
        (TooManyRequests, 429),
        (ServiceStopping, 503),
        (BadRequest, 400),
    ):
        if isinstance(exc, kind):
            return status
    return 400


TITLES = {
    400: "Bad request",
    401: "Not logged in, or not this form",
    403: "Not allowed",
    404: "Not found",
    405: "Not done that way",
    409: "In use: try again",
    413: "Too large",
    415: "Not a format this server reads",
    422: "Not valid",
    429: "Too many requests",
    500: "Something went wrong",
    503: "Not available now",
}


def human_title(status: int) -> str:
    """What a person reads as the title of an error page of this status (never a class
    name: the API's problem documents keep theirs)."""
    return TITLES.get(status, "Something went wrong" if status >= 500 else "Refused")


def problem(
    status: int,
    title: str,
    detail: str,
    *,
    instance: str,
    extra: ProblemMembers | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = Problem(
        type=f"https://openlaketx.dev/problems/{title.lower().replace(' ', '-')}",
        title=title,
        status=status,
        detail=detail,
        instance=instance,
    )
    body.update(extra or {})
    # also here: a 500 is answered outside the middleware that adds them to every answer
    secure = {name.decode(): value.decode() for name, value in SECURITY_HEADERS}
    return JSONResponse(
        body, status_code=status, media_type=MEDIA_TYPE, headers={**secure, **(headers or {})}
    )


def install(app: FastAPI) -> None:
    """Answer every error with a problem document."""

    @app.exception_handler(LakeTxError)
    async def _laketx(request: Request, exc: LakeTxError) -> JSONResponse:
        status = status_of(exc)
        headers = {}
        if status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        if isinstance(exc, TooManyRequests):
            headers["Retry-After"] = str(exc.retry_after)
        if status == 503:
            headers["Retry-After"] = "30"
        extra = ProblemMembers(where=exc.where, fix=exc.fix, transient=exc.transient)
        if isinstance(exc, ValidationError):
            extra["errors"] = exc.errors
        return problem(
            status, exc.kind, exc.what, instance=request.url.path, extra=extra, headers=headers
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"path": ".".join(str(p) for p in e.get("loc", ())), "message": str(e.get("msg"))}
            for e in exc.errors()
        ]
        return problem(
            422,
            "Invalid request",
            "the request does not fit the API",
            instance=request.url.path,
            extra={"errors": errors},
        )

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "HTTP error")
        return problem(
            exc.status_code,
            title,
            str(exc.detail),
            instance=request.url.path,
            headers=dict(exc.headers or {}),
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        _log.error("unexpected error on %s: %s", request.url.path, type(exc).__name__)
        return problem(
            500,
            "Internal error",
            "the service failed to answer this request (its log has the cause)",
            instance=request.url.path,
        )
