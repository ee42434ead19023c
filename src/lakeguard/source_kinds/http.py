"""An HTTP server: files fetched by URL, or records from a paged JSON API.

Two shapes of source object, told apart by `records`:
- a **file** (no `records`): the locator is a path under the base URL whose body is a csv,
  json or parquet file, gzip-compressed or not, like OpenCellID's daily export. Read `append`
  (each new content once) or `full` (a snapshot whenever it changes). ETag and Last-Modified
  are sent back, so an unchanged file is not downloaded again; a server without them is
  compared by a sha256 of the content.
- **records** (`records` names the list in each JSON page): every page, by cursor, offset or
  page number, read `full` (a snapshot) or `incremental` (above the last watermark, which is
  sent as `watermark_param`).
Progress: a fetched file's URL with its ETag, Last-Modified and content hash; for records, the
highest watermark read. The token is the system's `credential_ref`, sent as a header or a query
parameter; it is never stored, logged or part of a progress key.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from pydantic import Field, model_validator

from lakeguard.catalog.problems import Problem
from lakeguard.progress import ProgressMark
from lakeguard.reach import Reach
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


class HttpOptions(SystemOptions):
    """How to reach the server and present the token (`credential_ref` holds the token)."""

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

    def destination(self) -> tuple[str, int] | None:
        """The host and port `base_url` connects to (None: not an http(s) URL)."""
        url = urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            return None
        try:
            port = url.port
        except ValueError:
            return None
        return url.hostname, port or (443 if url.scheme == "https" else 80)

    @property
    def header_name(self) -> str:
        return self.token_name or "Authorization"

    @property
    def query_name(self) -> str:
        return self.token_name or "token"

    @property
    def prefix(self) -> str:
        if self.token_prefix is not None:
            return self.token_prefix
        return (
            "Bearer " if self.token_in == "header" and self.header_name == "Authorization" else ""
        )


class Paging(ObjectOptions):
    """How the pages of a records source follow one another."""

    style: Literal["cursor", "offset", "page"] = Field(
        description="cursor: each page names the next; offset: skip N records; page: number"
    )
    param: str = Field(description="The query parameter that selects a page")
    cursor_path: str | None = Field(
        default=None, description="cursor: where the next cursor is in a page (dotted path)"
    )
    size_param: str | None = Field(
        default=None, description="offset/page: the query parameter of the page size"
    )
    size: int = Field(default=100, ge=1, le=100_000, description="offset/page: records a page")
    start: int = Field(default=0, ge=0, description="page: the first page's number (offset: 0)")
    max_pages: int = Field(default=10_000, ge=1, description="A read stops with an error beyond")

    @model_validator(mode="after")
    def _style(self) -> Paging:
        if self.style == "cursor" and not self.cursor_path:
            raise ValueError("cursor paging needs cursor_path (where a page names the next)")
        if self.style == "offset" and not self.size_param:
            raise ValueError("offset paging needs size_param (the page size's parameter)")
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
    marks: ClassVar[tuple[type[ProgressMark], ...]] = (FetchedFile,)
    watermarks: ClassVar[bool] = True

    def check_system(
        self, options: HttpOptions, credential_ref: str | None, loc: tuple[Any, ...]
    ) -> list[Problem]:
        problems = []
        url = urlsplit(options.base_url)
        if url.scheme not in ("http", "https") or not url.netloc:
            problems.append(
                Problem((*loc, "options", "base_url"), "must be an http:// or https:// URL")
            )
        if url.username or url.password or url.query:
            problems.append(
                Problem(
                    (*loc, "options", "base_url"),
                    "must carry no user, password or query; the token is credential_ref",
                )
            )
        for name in options.headers:
            if any(word in name.lower() for word in _SECRET_WORDS):
                problems.append(
                    Problem(
                        (*loc, "options", "headers", name),
                        f"header {name!r} would store a secret; use credential_ref",
                    )
                )
        return problems

    def system_reach(
        self, options: HttpOptions, reach: Reach, loc: tuple[Any, ...]
    ) -> list[Problem]:
        found = options.destination()
        if found is None:
            return []  # check_system says what is wrong with the URL
        why = reach.name_refusal(*found)
        if why is None:
            return []
        return [Problem((*loc, "options", "base_url"), f"{why}; {reach.network_fix()}")]

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
            for name in ("paging", "watermark_param"):
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
        if facts.load_type != SourceLoad.INCREMENTAL and options.watermark_param is not None:
            problems.append(Problem((*loc, "watermark_param"), "is for incremental sources"))
        return problems
