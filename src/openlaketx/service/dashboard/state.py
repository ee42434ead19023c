"""What every page of the dashboard shares, given to its routes by dependency (`Shared`): the
service's tenants and runs, the sessions and login forms, the failure brake and the request
budget, and the templates, with the answers every page builds from them (a page, the login
page, an error page) and the checks every page makes (who is looking, from which origin)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from lakeguard.actors.keys import ApiKey, Scope
from lakeguard.records.judged import share_text
from lakeguard.words.errors import ForbiddenError, LakeTxError
from openlaketx import outcomes
from openlaketx.lakehouse import Lakehouse
from openlaketx.service import insights
from openlaketx.service.auth import FailureBrake
from openlaketx.service.dashboard.sessions import (
    COOKIE,
    LOGIN_COOKIE,
    LoginForms,
    Session,
    Sessions,
    cross_origin,
)
from openlaketx.service.headers import SECURITY_HEADERS
from openlaketx.service.problems import human_title, status_of
from openlaketx.service.rates import RateLimiter
from openlaketx.service.runs import RunService
from openlaketx.service.tenants import Tenants

_log = logging.getLogger(__name__)
HERE = resources.files("openlaketx.service.dashboard")
# Pages load nothing from elsewhere and run no inline script (the SVG uses attributes only).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


class LoginNeeded(Exception):
    """No live session (or its key is no longer usable): the login page answers."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who looks at a page: the session, its key and the key's tenant's lakehouse."""

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
    env.globals["word_of"] = outcomes.word_of
    env.globals["look_of"] = outcomes.look_of
    env.globals["step_outcome"] = outcomes.step_outcome
    env.globals["attempt_outcome"] = outcomes.attempt_outcome
    env.globals["rule_look"] = lambda word: outcomes.RULE_LOOKS.get(str(word).upper(), "r-none")
    env.globals["share_text"] = share_text
    return env


@dataclass
class Dashboard:
    """The dashboard's state in one `laketx serve` (on `app.state.dashboard`)."""

    runs: RunService
    brake: FailureBrake
    rates: RateLimiter
    sessions: Sessions = field(default_factory=Sessions)
    login_forms: LoginForms = field(default_factory=LoginForms)
    env: Environment = field(default_factory=_environment)

    @property
    def tenants(self) -> Tenants:
        return self.runs.tenants

    def page(self, name: str, code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(**context)
        return HTMLResponse(html, status_code=code, headers={"Content-Security-Policy": CSP})

    def login_page(
        self, request: Request, code: int = 200, error: str | None = None
    ) -> HTMLResponse:
        """The login page with a fresh form token, its cookie set beside it."""
        form = self.login_forms.issue()
        answer = self.page("login.html", code, error=error, csrf=form.field, viewer=None)
        answer.set_cookie(
            LOGIN_COOKIE,
            form.cookie,
            max_age=int(self.login_forms.lifetime),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/login",
        )
        return answer

    def failure(self, exc: LakeTxError, *, refresh: bool = False) -> HTMLResponse:
        """The error page of a refusal, with its status."""
        return self.error_page(status_of(exc), exc.what, exc.fix, refresh=refresh)

    def error_page(
        self,
        code: int,
        what: str,
        fix: str | None = None,
        *,
        refresh: bool = False,
        headers: dict[str, str] | None = None,
    ) -> HTMLResponse:
        """An error as a page of the dashboard: a title a person reads (never a class name),
        what went wrong and what to do."""
        answer = self.page(
            "error.html",
            code,
            title=human_title(code),
            what=what,
            fix=fix,
            viewer=None,
            refresh=refresh,
            status=code,
        )
        # also here: a 500 is answered outside the middleware that adds them to every answer
        for raw, said in SECURITY_HEADERS:
            answer.headers.setdefault(raw.decode(), said.decode())
        for name, value in (headers or {}).items():
            answer.headers[name] = value
        return answer

    def viewer(self, request: Request, scope: Scope = Scope.RUNS_READ) -> Viewer:
        """Who sends `request`: a live session whose key is usable and has `scope` (the
        request is counted against the key's budget)."""
        session = self.sessions.get(request.cookies.get(COOKIE))
        if session is None:
            raise LoginNeeded
        now = datetime.now(UTC)
        key = next(
            (
                k
                for k in self.tenants.keys.list(session.tenant_id)
                if k.api_key_id == session.api_key_id and k.usable(now)
            ),
            None,
        )
        if key is None:  # revoked or expired since the login
            self.sessions.end(session.session_id)
            raise LoginNeeded
        self.rates.take(key)
        if Scope.RUNS_READ not in key.scopes or scope not in key.scopes:
            raise ForbiddenError(
                f"this key may not {scope.value.replace(':', ' ')}",
                fix=f"log in with a key that has the {scope.value} scope",
            )
        return Viewer(session, key, self.tenants.get(key.tenant_id))


def wants_page(request: Request) -> bool:
    """Whether an error should answer as a dashboard page: a browser (it accepts text/html)
    asking outside the API, whose clients always get problem+json."""
    if request.url.path.startswith("/api/"):
        return False
    return "text/html" in request.headers.get("accept", "").lower()


def same_origin(request: Request, form: str) -> None:
    """Raise ForbiddenError when a state-changing form comes from another origin."""
    why = cross_origin(request.headers, request.url.scheme)
    if why is not None:
        _log.warning("dashboard: %s from another origin refused: %s", form, why)
        raise ForbiddenError(
            f"the {form} was sent from another site, so nothing was done",
            fix=f"use the {form} on this server's own pages",
        )


def field_of(form: dict[str, list[str]], name: str) -> str | None:
    """The first value of a form's field, or None."""
    values = form.get(name)
    return values[0] if values else None


def dashboard(request: Request) -> Dashboard:
    """The dashboard's state of the app serving `request`."""
    found: Dashboard = request.app.state.dashboard
    return found


Shared = Annotated[Dashboard, Depends(dashboard)]
