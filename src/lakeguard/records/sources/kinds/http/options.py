"""An `http` system's options and its records' paging (pure): how to reach the server, present
its credentials (`auth`) and pace requests, and how pages follow one another and stop."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from lakeguard.records.sources.kinds.base import ObjectOptions, SystemOptions
from lakeguard.records.sources.kinds.http.auth import (
    Auth,
    BearerAuth,
    ClientCredentialsAuth,
    OAuth2Auth,
    RefreshTokenAuth,
    destination_of,
    url_problems,
)
from lakeguard.words.problems import Problem


class HttpOptions(SystemOptions):
    """How to reach the server and present its credentials (`auth`; by default a token that
    `credential_ref` holds), and how fast it may be asked."""

    base_url: str = Field(description="http(s)://host[:port][/path]: locators are under it")
    token_in: Literal["header", "query"] = Field(
        default="header", description="Where the token goes: a request header or a query parameter"
    )
    token_name: str | None = Field(
        default=None,
        description="The header (default Authorization) or query parameter (default token)",
    )
    token_prefix: str | None = Field(
        default=None, description="Text before the token (default 'Bearer ' in Authorization)"
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Other request headers (never a secret)"
    )
    timeout_seconds: float = Field(default=30.0, gt=0, le=3600)
    max_retries: int = Field(
        default=5, ge=0, le=20, description="Retries of a 429, a 5xx or a lost connection"
    )
    backoff_seconds: float = Field(
        default=1.0, ge=0, le=60, description="First wait between retries; doubles each time"
    )
    max_wait_seconds: float = Field(
        default=300.0,
        ge=0,
        description="Longest Retry-After honoured; a server asking for more fails the read "
        "(transient: the run can be retried later)",
    )
    auth: Auth | None = Field(
        default=None,
        description="How requests are authenticated, by type: bearer (the default: a token in "
        "a header or a query parameter), basic (user and password), oauth2_client_credentials "
        "or oauth2_refresh_token (an access token from token_url, refreshed before it "
        "expires). Every secret is a *_ref, never the secret itself.",
    )
    requests_per_second: float | None = Field(
        default=None,
        description="At most this many requests a second to the system (retries and token "
        "requests included), spaced evenly; none: as fast as answers come",
    )

    @field_validator("requests_per_second")
    @classmethod
    def _positive_rate(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError("requests_per_second must be above 0 (leave it out for no limit)")
        return value

    def destination(self) -> tuple[str, int] | None:
        """The host and port `base_url` connects to (None: not an http(s) URL)."""
        return destination_of(self.base_url)

    @property
    def oauth2(self) -> OAuth2Auth | None:
        auth = self.auth
        return auth if isinstance(auth, ClientCredentialsAuth | RefreshTokenAuth) else None

    @property
    def bearer(self) -> BearerAuth | None:
        """The bearer auth in effect (None: another type): `auth`'s, with what the system's
        own token_in/token_name/token_prefix say where auth leaves them out."""
        auth = self.auth if self.auth is not None else BearerAuth()
        if not isinstance(auth, BearerAuth):
            return None
        return auth.model_copy(
            update={
                "token_in": auth.token_in or self.token_in,
                "token_name": auth.token_name or self.token_name,
                "token_prefix": auth.token_prefix
                if auth.token_prefix is not None
                else self.token_prefix,
            }
        )

    @property
    def sends_token_in(self) -> Literal["header", "query"]:
        bearer = self.bearer
        return (bearer.token_in if bearer is not None else None) or "header"

    @property
    def header_name(self) -> str:
        bearer = self.bearer
        return (bearer.token_name if bearer else None) or "Authorization"

    @property
    def query_name(self) -> str:
        bearer = self.bearer
        return (bearer.token_name if bearer else None) or "token"

    @property
    def prefix(self) -> str:
        bearer = self.bearer
        if bearer is not None and bearer.token_prefix is not None:
            return bearer.token_prefix
        in_header = self.sends_token_in == "header"
        return "Bearer " if in_header and self.header_name == "Authorization" else ""

    def secret_refs(self) -> dict[str, str]:
        """Each secret reference of `auth` by its field (credential_ref is the system's)."""
        if self.auth is None:
            return {}
        return {
            name: value
            for name in (
                "token_ref",
                "user_ref",
                "password_ref",
                "client_secret_ref",
                "refresh_token_ref",
            )
            if isinstance(value := getattr(self.auth, name, None), str)
        }


class Paging(ObjectOptions):
    """How the pages of a records source follow one another, and when they stop."""

    style: Literal["cursor", "offset", "page", "next_url", "link"] = Field(
        description="cursor: each page names the next cursor; offset: skip N records; page: "
        "the page's number; next_url: each page holds the next page's URL (next_url_path); "
        'link: the next page\'s URL is the Link: <...>; rel="next" header (RFC 8288)'
    )
    param: str | None = Field(
        default=None,
        description="cursor/offset/page: the query parameter that selects a page",
    )
    cursor_path: str | None = Field(
        default=None, description="cursor: where the next cursor is in a page (dotted path)"
    )
    next_url_path: str | None = Field(
        default=None,
        description="next_url: where the next page's URL is in a page (dotted path); a "
        "relative URL is taken from the page's own",
    )
    size_param: str | None = Field(
        default=None,
        description="offset/page (next_url/link: the first request): the query parameter of "
        "the page size",
    )
    size: int = Field(default=100, ge=1, le=100_000, description="offset/page: records a page")
    start: int = Field(default=0, ge=0, description="page: the first page's number (offset: 0)")
    has_more_path: str | None = Field(
        default=None,
        description="Where a page says whether more follow (dotted path): false stops, true "
        "goes on even after a short page",
    )
    total_path: str | None = Field(
        default=None,
        description="Where a page says how many records there are in all (dotted path): the "
        "read stops once it has that many",
    )
    max_pages: int = Field(default=10_000, ge=1, description="A read stops with an error beyond")

    @model_validator(mode="after")
    def _style(self) -> Paging:
        style = self.style
        if style in ("cursor", "offset", "page") and not self.param:
            raise ValueError(f"{style} paging needs param (the query parameter of a page)")
        if style in ("next_url", "link") and self.param:
            raise ValueError(
                f"{style} paging follows the URL each page names; param is for cursor, offset "
                "and page paging"
            )
        if style == "cursor" and not self.cursor_path:
            raise ValueError("cursor paging needs cursor_path (where a page names the next)")
        if style != "cursor" and self.cursor_path:
            raise ValueError(f"cursor_path is for cursor paging, not {style}")
        if style == "next_url" and not self.next_url_path:
            raise ValueError("next_url paging needs next_url_path (where a page names the next)")
        if style != "next_url" and self.next_url_path:
            raise ValueError(f"next_url_path is for next_url paging, not {style}")
        if style == "offset" and not self.size_param:
            raise ValueError("offset paging needs size_param (the page size's parameter)")
        if self.has_more_path and self.total_path:
            raise ValueError(
                "has_more_path and total_path both say when the pages stop; set one of them"
            )
        return self


def auth_problems(
    options: HttpOptions, credential_ref: str | None, loc: tuple[Any, ...]
) -> list[Problem]:
    """`auth` against what else the system says: each secret named once, bearer options only
    for a bearer token, a token endpoint that is a plain URL."""
    auth, at = options.auth, (*loc, "options", "auth")
    problems: list[Problem] = []
    legacy = {
        "token_in": options.token_in if options.token_in != "header" else None,
        "token_name": options.token_name,
        "token_prefix": options.token_prefix,
    }
    if auth is None:
        return problems
    if not isinstance(auth, BearerAuth):
        if credential_ref is not None:
            refs = ", ".join(n for n in type(auth).model_fields if n.endswith("_ref"))
            problems.append(
                Problem(
                    (*loc, "credential_ref"),
                    f"with auth type {auth.type} the secrets are named in auth ({refs}); "
                    "credential_ref is a bearer token's",
                )
            )
        for name, value in legacy.items():
            if value is not None:
                problems.append(
                    Problem((*loc, "options", name), f"is for bearer auth, not {auth.type}")
                )
    else:
        if auth.token_ref is not None and credential_ref is not None:
            problems.append(
                Problem(
                    (*at, "token_ref"),
                    "the token is named twice (token_ref and credential_ref); keep one",
                )
            )
        for name, value in legacy.items():
            own = getattr(auth, name)
            if value is not None and own is not None and own != value:
                problems.append(
                    Problem(
                        (*loc, "options", name),
                        f"says otherwise than auth.{name}; write it once, in auth",
                    )
                )
    oauth2 = options.oauth2
    if oauth2 is not None:
        problems += url_problems(
            oauth2.token_url, (*at, "token_url"), "the client's secrets are *_ref fields"
        )
        if oauth2.client_secret_ref is not None and oauth2.client_id is None:
            problems.append(Problem((*at, "client_id"), "a client secret goes with its client_id"))
    return problems
