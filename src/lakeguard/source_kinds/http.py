"""An HTTP server: files fetched by URL, or records from a paged JSON API.

Two shapes of source object, told apart by `records`:
- a **file** (no `records`): the locator is a path under the base URL whose body is a csv,
  json or parquet file, gzip-compressed or not, like OpenCellID's daily export. Read `append`
  (each new content once) or `full` (a snapshot whenever it changes). ETag and Last-Modified
  are sent back, so an unchanged file is not downloaded again; a server without them is
  compared by a sha256 of the content.
- **records** (`records` names the list in each JSON page): every page, by cursor, offset,
  page number, or the next URL a page names (in its body or its Link header), until the pages
  say they stop (`has_more_path`, `total_path`), read `full` (a snapshot) or `incremental`
  (above the last watermark, which is sent as `watermark_param`).
Progress: a fetched file's URL with its ETag, Last-Modified and content hash; for records, the
highest watermark read. The token is the system's `credential_ref`, sent as a header or a query
parameter (`auth` may say otherwise: basic, or an OAuth2 access token fetched from a token
endpoint); no secret is ever stored, logged or part of a progress key: options name where each
one is (a `*_ref`), never the secret.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, ClassVar, Literal, Union
from urllib.parse import urlsplit

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from lakeguard.catalog.problems import Problem
from lakeguard.progress import REJECTED_SUFFIX, ProgressMark
from lakeguard.reach import Reach
from lakeguard.schema.types import TEMPORAL_TYPES
from lakeguard.schema.watermark_format import format_problem
from lakeguard.source_kinds.base import (
    ON_BAD_FILE,
    ObjectFacts,
    ObjectOptions,
    OnBadFile,
    SourceKind,
    SystemOptions,
)
from lakeguard.vocabulary import SourceKindName, SourceLoad

_SECRET_WORDS = ("authorization", "token", "secret", "password", "api-key", "apikey", "api_key")
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


def _url_problems(value: str, loc: tuple[Any, ...], what: str) -> list[Problem]:
    url = urlsplit(value)
    if url.scheme not in ("http", "https") or not url.netloc:
        return [Problem(loc, "must be an http:// or https:// URL")]
    if url.username or url.password or url.query:
        return [Problem(loc, f"must carry no user, password or query; {what}")]
    return []


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


class HttpObjectOptions(ObjectOptions):
    params: dict[str, str] = Field(
        default_factory=dict, description="http: query parameters of every request"
    )
    compression: Literal["auto", "gzip", "none"] = Field(
        default="auto",
        description="http files: gzip-compressed body (auto: by the gzip magic bytes)",
    )
    records: str | None = Field(
        default=None,
        description="http: a paged JSON API; where each page's list of records is (a dotted "
        "path, '.' for a page that is the list)",
    )
    paging: Paging | None = Field(default=None, description="http records: how pages follow")
    watermark_param: str | None = Field(
        default=None,
        description="http records, incremental: the query parameter the last watermark is "
        "sent in (rows above it are kept)",
    )
    watermark_format: str | None = Field(
        default=None,
        description="http records, incremental, a date or timestamp watermark: how it is "
        "written in watermark_param: date, epoch (seconds), epoch_ms or a strftime pattern "
        "(default: as stored, '2013-03-15 15:00:00.000000'). A format coarser than the column "
        "reads from the start of its day (second, ...) again; rows already held are dropped",
    )
    watermark_start: str | None = Field(
        default=None,
        description="http records, incremental: the value sent in watermark_param on the first "
        "read, as the API takes it (quoted in YAML: '2013-01-01'; default: no parameter, every "
        "record)",
    )
    on_bad_file: OnBadFile = Field(default="reject", description=f"http files: {ON_BAD_FILE}")


class FetchedFile(ProgressMark):
    """A file fetched over HTTP, as a promoted batch read it (the URL without the token)."""

    KIND: ClassVar[str] = "HTTP_FILE"
    url: str
    etag: str | None = None
    last_modified: str | None = None
    content_hash: str
    size: int

    def key(self) -> str:
        return self.url

    def same_as(self, other: FetchedFile) -> bool:
        """Whether `other` is this content (an http file is told by its content hash)."""
        return self.content_hash == other.content_hash


class RejectedFetch(ProgressMark):
    """What a batch blocked as wholly malformed read from an http source: a file's ETag,
    Last-Modified and content hash, or the hash of the records' pages. It counts although the
    run was blocked, for as long as the source object is declared alike (`declared`) and
    nothing was approved since (`after`: the approved file's content hash, the watermark;
    empty before any), so that an unchanged source is nothing new."""

    KIND: ClassVar[str] = "HTTP" + REJECTED_SUFFIX
    url: str  # without the token, nor a watermark parameter
    content_hash: str
    declared: str
    after: str = ""
    run_id: str = ""
    etag: str | None = None
    last_modified: str | None = None
    size: int | None = None

    def key(self) -> str:
        return self.url

    def as_fetched(self) -> FetchedFile:
        """As a fetched file: what a conditional request sends back."""
        return FetchedFile(
            url=self.url,
            etag=self.etag,
            last_modified=self.last_modified,
            content_hash=self.content_hash,
            size=self.size or 0,
        )

    def holds(self, declared: str, after: str) -> bool:
        """Whether it still describes the source: declared alike, nothing approved since."""
        return self.declared == declared and self.after == after


class HttpKind(SourceKind[HttpOptions, HttpObjectOptions]):
    name: ClassVar[SourceKindName] = SourceKindName.HTTP
    formats: ClassVar[tuple[str, ...]] = ("csv", "json", "parquet")
    loads: ClassVar[tuple[SourceLoad, ...]] = (
        SourceLoad.APPEND,
        SourceLoad.FULL,
        SourceLoad.INCREMENTAL,
    )
    system_options = HttpOptions
    object_options = HttpObjectOptions
    credential: ClassVar[str | None] = "the API token"
    marks: ClassVar[tuple[type[ProgressMark], ...]] = (FetchedFile, RejectedFetch)
    watermarks: ClassVar[bool] = True

    def check_system(
        self, options: HttpOptions, credential_ref: str | None, loc: tuple[Any, ...]
    ) -> list[Problem]:
        problems = _url_problems(
            options.base_url, (*loc, "options", "base_url"), "the token is credential_ref"
        )
        for name in options.headers:
            if any(word in name.lower() for word in _SECRET_WORDS):
                problems.append(
                    Problem(
                        (*loc, "options", "headers", name),
                        f"header {name!r} would store a secret; use credential_ref",
                    )
                )
        return problems + _auth_problems(options, credential_ref, loc)

    def system_reach(
        self, options: HttpOptions, reach: Reach, loc: tuple[Any, ...]
    ) -> list[Problem]:
        problems = []
        urls = {"base_url": options.base_url}
        oauth2 = options.oauth2
        if oauth2 is not None:
            urls["auth.token_url"] = oauth2.token_url
        for field, url in urls.items():
            found = destination_of(url)
            why = reach.name_refusal(*found) if found is not None else None
            if why is not None:  # (not a URL: check_system says what is wrong with it)
                where = (*loc, "options", *field.split("."))
                problems.append(Problem(where, f"{why}; {reach.network_fix()}"))
        for field, ref in options.secret_refs().items():
            # a file's symlinks resolved, as the engine resolves it
            real = os.path.realpath(reach.secret_file(ref)) if ref.startswith("file:") else None
            why = reach.secret_refusal(ref, resolved=real)
            if why is not None:
                where = (*loc, "options", "auth", field)
                problems.append(Problem(where, f"{why}; {reach.secret_fix()}"))
        return problems

    def check_object(
        self, options: HttpObjectOptions, facts: ObjectFacts, loc: tuple[Any, ...]
    ) -> list[Problem]:
        problems = []
        for name in options.params:
            if any(word in name.lower() for word in _SECRET_WORDS):
                problems.append(
                    Problem(
                        (*loc, "params", name),
                        f"parameter {name!r} would store a secret; use credential_ref",
                    )
                )
        if "://" in facts.locator:
            problems.append(
                Problem((*loc, "locator"), "a path under the system's base_url, not a URL")
            )
        if options.records is None:
            for name in ("paging", "watermark_param", "watermark_format", "watermark_start"):
                if getattr(options, name) is not None:
                    problems.append(Problem((*loc, name), "is for records sources (set records)"))
            if facts.load_type == SourceLoad.INCREMENTAL:
                problems.append(
                    Problem(
                        (*loc, "load_type"),
                        "an http file is read append (each new content once) or full; "
                        "incremental is for records sources",
                    )
                )
            return problems
        if facts.format != "json":
            problems.append(Problem((*loc, "format"), "a records source is json"))
        if facts.load_type == SourceLoad.APPEND:
            problems.append(
                Problem(
                    (*loc, "load_type"),
                    "a records source is read full (every page) or incremental (above a watermark)",
                )
            )
        if facts.load_type == SourceLoad.INCREMENTAL and options.watermark_param is None:
            problems.append(
                Problem(
                    (*loc, "watermark_param"),
                    "an incremental records source sends its watermark in a query parameter",
                )
            )
        for name in ("watermark_param", "watermark_format", "watermark_start"):
            if facts.load_type != SourceLoad.INCREMENTAL and getattr(options, name) is not None:
                problems.append(Problem((*loc, name), "is for incremental sources"))
        return problems + _format_problems(options, facts, loc)


def _auth_problems(
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
        problems += _url_problems(
            oauth2.token_url, (*at, "token_url"), "the client's secrets are *_ref fields"
        )
        if oauth2.client_secret_ref is not None and oauth2.client_id is None:
            problems.append(Problem((*at, "client_id"), "a client secret goes with its client_id"))
    return problems


def _format_problems(
    options: HttpObjectOptions, facts: ObjectFacts, loc: tuple[Any, ...]
) -> list[Problem]:
    """A watermark format that is none, or that formats what is no date or timestamp."""
    fmt = options.watermark_format
    if fmt is None or facts.load_type != SourceLoad.INCREMENTAL:
        return []
    why = format_problem(fmt)
    if why is not None:
        return [Problem((*loc, "watermark_format"), why)]
    kind = facts.columns.get(facts.watermark_column or "", "")
    if kind and kind.lower() not in TEMPORAL_TYPES:
        return [
            Problem(
                (*loc, "watermark_format"),
                f"formats a date or timestamp watermark; {facts.watermark_column} is {kind} "
                "(it is sent as it is)",
            )
        ]
    return []
