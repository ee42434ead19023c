"""How an `http` system authenticates (pure): the `auth` option's typed models, one per type
(bearer, basic, OAuth2 client credentials, OAuth2 refresh token), every secret by reference,
and the checks of `auth` against the rest of the system's options."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union
from urllib.parse import urlsplit

from pydantic import Discriminator, Field, Tag, model_validator

from lakeguard.records.sources.kinds.base import SystemOptions
from lakeguard.words.problems import Problem

# where a secret is, like credential_ref: NAME, env:NAME or file:path
_REF = r"^(env:)?[A-Za-z_][A-Za-z0-9_]*$|^file:.+$"
_REF_SAID = "an environment variable (NAME or env:NAME) or a file (file:/path); never the secret"


def _ref(what: str, default: str = "") -> Any:
    return Field(default=None, pattern=_REF, description=f"Where {what} is: {_REF_SAID}{default}")


class BearerAuth(SystemOptions):
    """A token sent in a header or a query parameter (the default): `token_ref`, or else the
    system's `credential_ref`, holds it."""

    type: Literal["bearer"] = "bearer"
    token_ref: str | None = _ref("the token", " (default: the system's credential_ref)")
    token_in: Literal["header", "query"] | None = Field(
        default=None,
        description="Where the token goes: a request header (default) or a query "
        "parameter (the system's token_in, when it says so, is the same)",
    )
    token_name: str | None = Field(
        default=None,
        description="The header (default Authorization) or query parameter (default token)",
    )
    token_prefix: str | None = Field(
        default=None, description="Text before the token (default 'Bearer ' in Authorization)"
    )


class BasicAuth(SystemOptions):
    """HTTP basic authentication (RFC 7617): a user, by value or by reference, and a password
    by reference."""

    type: Literal["basic"]
    user: str | None = Field(default=None, description="The user name (or user_ref)")
    user_ref: str | None = _ref("the user name")
    password_ref: str = Field(pattern=_REF, description=f"Where the password is: {_REF_SAID}")

    @model_validator(mode="after")
    def _one_user(self) -> BasicAuth:
        if (self.user is None) == (self.user_ref is None):
            raise ValueError("basic auth names its user once: user (the name) or user_ref")
        return self


class _OAuth2(SystemOptions):
    """What both OAuth2 flows share: the token endpoint and how the client is presented."""

    token_url: str = Field(
        description="The token endpoint (http(s)://host[:port]/path, no user, password or "
        "query): reached like base_url, through the tenant's reach, never redirected"
    )
    client_id: str | None = Field(default=None, description="The client's id (not a secret)")
    client_secret_ref: str | None = _ref("the client secret")
    scope: str | None = Field(default=None, description="Scopes asked for, space-separated")
    audience: str | None = Field(default=None, description="The audience asked for, if any")
    client_auth: Literal["basic", "body"] = Field(
        default="basic",
        description="How the client id and secret go to the token endpoint: an Authorization: "
        "Basic header (RFC 6749's default) or client_id/client_secret in the form body",
    )


class ClientCredentialsAuth(_OAuth2):
    """OAuth2's client-credentials flow: an access token for the client itself, fetched before
    the first request, again before it expires (`expires_in`) and once on a 401."""

    type: Literal["oauth2_client_credentials"]
    client_id: str = Field(description="The client's id (not a secret)")
    client_secret_ref: str = Field(
        pattern=_REF, description=f"Where the client secret is: {_REF_SAID}"
    )


class RefreshTokenAuth(_OAuth2):
    """OAuth2's refresh-token flow: access tokens fetched with a long-lived refresh token,
    like the client-credentials flow's (a public client names no client secret)."""

    type: Literal["oauth2_refresh_token"]
    refresh_token_ref: str = Field(
        pattern=_REF, description=f"Where the refresh token is: {_REF_SAID}"
    )


OAuth2Auth = ClientCredentialsAuth | RefreshTokenAuth
# union tags without digits or lower case: the loader leaves such tags out of a field's path
_AUTH_TAGS = {
    "bearer": "BEARER",
    "basic": "BASIC",
    "oauth2_client_credentials": "OAUTH_CLIENT",
    "oauth2_refresh_token": "OAUTH_REFRESH",
}


def _auth_tag(value: Any) -> str | None:
    kind = value.get("type", "bearer") if isinstance(value, dict) else getattr(value, "type", None)
    return _AUTH_TAGS.get(str(kind))


Auth = Annotated[
    Union[  # noqa: UP007 - a tagged union of models, as the source systems' is
        Annotated[BearerAuth, Tag("BEARER")],
        Annotated[BasicAuth, Tag("BASIC")],
        Annotated[ClientCredentialsAuth, Tag("OAUTH_CLIENT")],
        Annotated[RefreshTokenAuth, Tag("OAUTH_REFRESH")],
    ],
    Discriminator(
        _auth_tag,
        custom_error_type="unknown_auth_type",
        custom_error_message="unknown auth type; auth types are " + ", ".join(_AUTH_TAGS),
    ),
]


def destination_of(url: str) -> tuple[str, int] | None:
    """The host and port an http(s) URL connects to (None: not an http(s) URL)."""
    found = urlsplit(url)
    if found.scheme not in ("http", "https") or not found.hostname:
        return None
    try:
        port = found.port
    except ValueError:
        return None
    return found.hostname, port or (443 if found.scheme == "https" else 80)


def url_problems(value: str, loc: tuple[Any, ...], what: str) -> list[Problem]:
    url = urlsplit(value)
    if url.scheme not in ("http", "https") or not url.netloc:
        return [Problem(loc, "must be an http:// or https:// URL")]
    if url.username or url.password or url.query:
        return [Problem(loc, f"must carry no user, password or query; {what}")]
    return []
