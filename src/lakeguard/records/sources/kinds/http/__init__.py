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
from typing import Any, ClassVar, Literal

from pydantic import Field

from lakeguard.records.reach import Reach
from lakeguard.records.schema.types import TEMPORAL_TYPES
from lakeguard.records.schema.watermark_format import format_problem
from lakeguard.records.sources.kinds.base import (
    ON_BAD_FILE,
    ObjectFacts,
    ObjectOptions,
    OnBadFile,
    SourceKind,
)
from lakeguard.records.sources.kinds.http.auth import (
    BasicAuth,
    BearerAuth,
    ClientCredentialsAuth,
    RefreshTokenAuth,
    destination_of,
    url_problems,
)
from lakeguard.records.sources.kinds.http.options import HttpOptions, Paging, auth_problems
from lakeguard.records.sources.progress import REJECTED_SUFFIX, ProgressMark
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import SourceKindName, SourceLoad

__all__ = [
    "BasicAuth",
    "BearerAuth",
    "ClientCredentialsAuth",
    "FetchedFile",
    "HttpKind",
    "HttpObjectOptions",
    "HttpOptions",
    "Paging",
    "RefreshTokenAuth",
    "RejectedFetch",
    "destination_of",
]

_SECRET_WORDS = ("authorization", "token", "secret", "password", "api-key", "apikey", "api_key")


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
        problems = url_problems(
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
        return problems + auth_problems(options, credential_ref, loc)

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
