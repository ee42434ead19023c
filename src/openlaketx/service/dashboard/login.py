"""The dashboard's login and logout: an API key traded for a session cookie, behind a form
token of the login's own and the failure brake; both forms refused from another origin."""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from lakeguard.actors.keys import key_id_of
from lakeguard.words.errors import AuthError, ForbiddenError
from openlaketx.service.auth import client_address
from openlaketx.service.dashboard.sessions import COOKIE, LOGIN_COOKIE
from openlaketx.service.dashboard.state import Shared, field_of, same_origin
from openlaketx.service.refusals import TooManyRequests

router = APIRouter(include_in_schema=False)


@router.get("/login")
def login_form(request: Request, d: Shared) -> Response:
    return d.login_page(request)


@router.post("/login")
async def login(request: Request, d: Shared) -> Response:
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    try:
        same_origin(request, "login form")
        if not d.login_forms.matches(request.cookies.get(LOGIN_COOKIE), field_of(form, "csrf")):
            raise ForbiddenError(
                "the login form has expired or is not this server's: nobody was logged in",
                fix="log in again with the form below",
            )
    except ForbiddenError as refused:
        # a login CSRF attempt, or a form left open too long: no key is looked at
        return d.login_page(request, 403, f"{refused.what}; {refused.fix}.")
    token = (field_of(form, "key") or "").strip()
    address, key_id = client_address(request), key_id_of(token)
    try:
        await run_in_threadpool(
            d.brake.check,
            address,
            key_id,
            lambda: key_id is not None and d.tenants.keys.exists(key_id),
        )
    except TooManyRequests as braked:
        answer = d.login_page(request, 429, f"{braked.what}; {braked.fix}")
        answer.headers["Retry-After"] = str(braked.retry_after)
        return answer
    try:
        key = await run_in_threadpool(d.tenants.keys.authenticate, token)
    except AuthError:
        d.brake.failed(address, key_id)
        return d.login_page(request, 401, "That key is not valid.")
    session = d.sessions.start(key.tenant_id, key.api_key_id)
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


@router.post("/logout")
async def logout(request: Request, d: Shared) -> Response:
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    session = d.sessions.get(request.cookies.get(COOKIE))
    try:
        same_origin(request, "logout form")
        # Without the session's token nothing changes: deleting the cookie alone would
        # leave a live session behind it, and ending the session would let any page log
        # its visitors out.
        if session is not None and not session.csrf_matches(field_of(form, "csrf")):
            raise ForbiddenError(
                "this logout form is not from this session, so you are still logged in",
                fix="reload the page and log out again",
            )
    except ForbiddenError as refused:
        return d.failure(refused)
    if session is not None:
        d.sessions.end(session.session_id)
    # no live session behind the cookie (expired, ended, unknown): nothing to keep
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response
