"""What the requests of an `http` system carry to authenticate (no Spark): a bearer token, a
basic user and password, or an OAuth2 access token kept fresh.

Every secret is resolved from its reference through the tenant's reach
(`openlaketx.sources.credentials.resolve`) when the client opens, and lives only in memory:
`Credentials.secrets()` lists every one (access tokens and rotated refresh tokens included) so
that nothing shown carries them. An OAuth2 access token is asked for before the first
request, again shortly before it expires (`expires_in`), and once more when the server answers
401; the token endpoint is reached by the caller (`ask`), through the tenant's reach.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds.http import (
    BasicAuth,
    BearerAuth,
    ClientCredentialsAuth,
    HttpOptions,
    RefreshTokenAuth,
)
from lakeguard.words.errors import SourceError
from openlaketx.sources.credentials import resolve

# A token is replaced this long before it expires (at most half its life): a request sent with
# the old one must still arrive while it is valid.
EARLY_SECONDS = 30.0

# asks the token endpoint: (form fields, headers) -> the JSON document it answered
Ask = Callable[[dict[str, str], dict[str, str]], Any]


@dataclass(frozen=True)
class Refusal:
    """What a 401/403 says of the credentials (names references, never secrets)."""

    said: str
    fix: str
    ref: str
    named: str  # the field and its reference: "auth.password_ref env:API_PASSWORD"


class Credentials:
    """Static credentials: what every request carries, the same each time."""

    renewable = False

    def __init__(
        self,
        *,
        headers: dict[str, str] | None = None,
        query: dict[str, str] | None = None,
        secrets: tuple[str, ...] = (),
        refusal: Refusal,
    ) -> None:
        self._headers = headers or {}
        self._query = query or {}
        self._secrets = tuple(s for s in secrets if s)
        self.refusal = refusal

    def headers(self) -> dict[str, str]:
        return dict(self._headers)

    def query(self) -> dict[str, str]:
        return dict(self._query)

    def renew(self) -> None:
        """Replace the access token: static credentials have none, so nothing changes (the
        client renews only `renewable` ones)."""
        return None

    def secrets(self) -> tuple[str, ...]:
        """Every secret value a text shown must not carry (and the forms they travel in)."""
        return _with_forms(self._secrets)

    @property
    def primary(self) -> str | None:
        """The long-lived secret, for the read's later errors to mask."""
        return self._secrets[0] if self._secrets else None


def _with_forms(values: tuple[str, ...]) -> tuple[str, ...]:
    # a server may echo a secret as a form body carried it (url-encoded)
    return tuple(dict.fromkeys(v for s in values for v in (s, quote_plus(s)) if v))


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


class OAuth2Session(Credentials):
    """An OAuth2 access token (client credentials or refresh token) and when it expires."""

    renewable = True

    def __init__(
        self,
        auth: ClientCredentialsAuth | RefreshTokenAuth,
        *,
        client_secret: str | None,
        refresh_token: str | None,
        ask: Ask,
        where: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        ref = (
            auth.client_secret_ref
            if isinstance(auth, ClientCredentialsAuth)
            else auth.refresh_token_ref
        )
        # RFC 6749 2.3.1: the client's id and secret each form-encoded, then basic
        self._client_basic = (
            _basic(quote_plus(auth.client_id), quote_plus(client_secret))
            if auth.client_id is not None
            and client_secret is not None
            and auth.client_auth == "basic"
            else None
        )
        super().__init__(
            secrets=tuple(s for s in (client_secret, refresh_token, self._client_basic) if s),
            refusal=Refusal(
                said=f"the access token from {auth.token_url} (auth.{_ref_field(auth)} {ref})",
                fix="check the scope and audience the token is asked for, and that the client "
                "may read this resource",
                ref=ref,
                named=f"auth.{_ref_field(auth)} {ref}",
            ),
        )
        self.auth = auth
        self.where = where
        self._client_secret = client_secret
        self._refresh_token = refresh_token
        self._ask = ask
        self._clock = clock
        self._token: str | None = None
        self._renew_at: float | None = None
        self._issued: list[str] = []  # every token and rotated refresh token, to mask

    def headers(self) -> dict[str, str]:
        if self._token is None or (self._renew_at is not None and self._clock() >= self._renew_at):
            self.renew()
        assert self._token is not None
        return {"Authorization": f"Bearer {self._token}"}

    def renew(self) -> None:
        form, headers = self._request()
        asked_at = self._clock()  # the token's life counts from before it was asked for
        self._take(self._ask(form, headers), asked_at)

    def secrets(self) -> tuple[str, ...]:
        return _with_forms((*self._secrets, *self._issued))

    @property
    def primary(self) -> str | None:
        return self._refresh_token or self._client_secret

    def _request(self) -> tuple[dict[str, str], dict[str, str]]:
        auth = self.auth
        form: dict[str, str] = {}
        if isinstance(auth, ClientCredentialsAuth):
            form["grant_type"] = "client_credentials"
        else:
            assert self._refresh_token is not None
            form["grant_type"] = "refresh_token"
            form["refresh_token"] = self._refresh_token
        if auth.scope:
            form["scope"] = auth.scope
        if auth.audience:
            form["audience"] = auth.audience
        headers = {"Accept": "application/json"}
        if self._client_basic is not None:
            headers["Authorization"] = f"Basic {self._client_basic}"
        elif auth.client_id is not None:
            form["client_id"] = auth.client_id  # a public client names itself in the body
            if self._client_secret is not None:
                form["client_secret"] = self._client_secret
        return form, headers

    def _take(self, document: Any, asked_at: float) -> None:
        """Keep the access token the endpoint answered (and a rotated refresh token)."""
        auth = self.auth
        token = document.get("access_token") if isinstance(document, dict) else None
        if not isinstance(token, str) or not token:
            keys = sorted(document) if isinstance(document, dict) else type(document).__name__
            raise SourceError(
                f"the token endpoint {auth.token_url} answered no access_token (it has {keys})",
                where=self.where,
                fix="check token_url: it must be the OAuth2 token endpoint",
            )
        kind = document.get("token_type")
        if isinstance(kind, str) and kind.lower() != "bearer":
            raise SourceError(
                f"the token endpoint {auth.token_url} issued a {kind!r} token; only bearer "
                "tokens are sent",
                where=self.where,
                fix="ask the provider for bearer tokens",
            )
        self._issued.append(token)
        rotated = document.get("refresh_token")
        if isinstance(rotated, str) and rotated and isinstance(auth, RefreshTokenAuth):
            # the provider may invalidate the old one: this read goes on with the new one
            self._refresh_token = rotated
            self._issued.append(rotated)
        self._token = token
        life = _seconds(document.get("expires_in"))
        self._renew_at = None if life is None else asked_at + life - min(EARLY_SECONDS, life / 2)


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return float(value)
    if isinstance(value, str):
        try:
            found = float(value)
        except ValueError:
            return None
        return found if found > 0 else None
    return None


def _ref_field(auth: ClientCredentialsAuth | RefreshTokenAuth) -> str:
    if isinstance(auth, ClientCredentialsAuth):
        return "client_secret_ref"
    return "refresh_token_ref"


def credentials(
    options: HttpOptions,
    token: str | None,
    credential_ref: str | None,
    *,
    reach: Reach,
    where: str,
    ask: Ask,
    clock: Callable[[], float] = time.monotonic,
) -> Credentials:
    """The system's credentials, every secret resolved through the tenant's `reach`; `token`
    is the secret `credential_ref` named (the bearer token's default). `where`: the system."""
    auth = options.auth

    def secret(field: str) -> str | None:
        ref = getattr(auth, field, None)
        at = f"{where}.options.auth.{field}"
        return resolve(ref, where=at, reach=reach) if isinstance(ref, str) else None

    at = f"{where}.options.auth"
    if isinstance(auth, BasicAuth):
        user = auth.user if auth.user is not None else secret("user_ref")
        password = secret("password_ref")
        assert user is not None and password is not None
        pair = _basic(user, password)
        return Credentials(
            headers={"Authorization": f"Basic {pair}"},
            secrets=(password, pair, *((user,) if auth.user_ref else ())),
            refusal=Refusal(
                said=f"the user and password of auth.password_ref {auth.password_ref}",
                fix=f"check the user and the password that {auth.password_ref} holds",
                ref=auth.password_ref,
                named=f"auth.password_ref {auth.password_ref}",
            ),
        )
    if isinstance(auth, ClientCredentialsAuth | RefreshTokenAuth):
        return OAuth2Session(
            auth,
            client_secret=secret("client_secret_ref"),
            refresh_token=secret("refresh_token_ref"),
            ask=ask,
            where=at,
            clock=clock,
        )
    assert auth is None or isinstance(auth, BearerAuth)
    ref = auth.token_ref if auth is not None and auth.token_ref else credential_ref
    named = "auth.token_ref" if auth is not None and auth.token_ref else "credential_ref"
    if auth is not None and auth.token_ref:
        token = secret("token_ref")
    refusal = Refusal(
        said=f"the token of {named} {ref or '(none)'}",
        fix=f"check the token that {ref or '(none)'} holds and the system's token_in/token_name",
        ref=ref or "(none)",
        named=f"{named} {ref or '(none)'}",
    )
    if token is None:
        return Credentials(refusal=refusal)
    if options.sends_token_in == "query":
        return Credentials(query={options.query_name: token}, secrets=(token,), refusal=refusal)
    header = {options.header_name: f"{options.prefix}{token}"}
    return Credentials(headers=header, secrets=(token,), refusal=refusal)
