"""The http source's fetching against a real local HTTP server (no Spark): retries and
Retry-After, tokens that never show, conditional requests, paging, and bodies that are not
what was declared."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeguard.catalog.loader import validate_text
from lakeguard.errors import SourceError, ValidationError
from lakeguard.reach import Destination, Reach
from lakeguard.source_kinds.http import FetchedFile, HttpObjectOptions, HttpOptions, Paging
from openlaketx.sources.http_client import HttpClient
from tests.http_server import TOKEN, Server

pytestmark = pytest.mark.server

CSV = b"radio,cell,lat,updated\nGSM,1,10.5,100\nLTE,2,20.5,100\n"
# a confined tenant allowed the test server's address: every request goes through the checks
LOOPBACK = Reach(tenant="t", network=(Destination.parse("127.0.0.1"),))


@pytest.fixture
def server() -> Iterator[Server]:
    found = Server()
    yield found
    found.stop()


def client(server: Server, **options: object) -> HttpClient:
    settings = HttpOptions.model_validate(
        {"base_url": server.url, "backoff_seconds": 0.01, **options}
    )
    return HttpClient(
        settings, TOKEN, where="source_objects[t]", credential_ref="env:TOK", reach=LOOPBACK
    )


def test_retries_wait_what_retry_after_asks_then_succeed(server: Server, tmp_path: Path) -> None:
    server.routes.put_file("/cells.csv", CSV)
    server.routes.fail["/cells.csv"] = [(429, {"Retry-After": "1"}), (503, {})]
    with client(server) as http:
        got = http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    assert got is not None and got.path.read_bytes() == CSV
    seen = server.routes.seen("/cells.csv")
    assert [s.status for s in seen] == [429, 503, 200]
    assert seen[1].at - seen[0].at >= 1.0  # it waited what Retry-After asked


def test_a_server_that_keeps_failing_is_a_transient_error(server: Server, tmp_path: Path) -> None:
    server.routes.fail["/cells.csv"] = [(503, {})] * 3
    with client(server, max_retries=2) as http, pytest.raises(SourceError) as info:
        http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    assert info.value.transient and "answered 503 (after 2 retries)" in str(info.value)
    assert len(server.routes.seen("/cells.csv")) == 3


def test_a_retry_after_beyond_the_limit_is_not_waited_for(server: Server, tmp_path: Path) -> None:
    server.routes.fail["/cells.csv"] = [(429, {"Retry-After": "3600"})]
    with client(server, max_wait_seconds=5) as http, pytest.raises(SourceError) as info:
        http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    assert info.value.transient and "asks to wait 3600 s" in str(info.value)


@pytest.mark.parametrize("token_in", ["header", "query"])
def test_a_refused_token_is_terminal_and_never_shown(
    server: Server, tmp_path: Path, token_in: str
) -> None:
    server.routes.put_file("/cells.csv", CSV)
    server.routes.token_in = token_in
    wrong = HttpClient(
        HttpOptions(base_url=server.url, token_in=token_in),  # type: ignore[arg-type]
        "not-the-token",
        where="source_objects[t]",
        credential_ref="env:TOK",
        reach=LOOPBACK,
    )
    with wrong, pytest.raises(SourceError) as info:
        wrong.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    assert not info.value.transient and "credential_ref env:TOK" in str(info.value)
    assert "not-the-token" not in str(info.value.to_dict())
    with client(server, token_in=token_in) as http:
        assert http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
        assert TOKEN not in http.display("/cells.csv", {"a": "b"})
    last = server.routes.seen("/cells.csv")[-1]
    assert (last.query.get("token") == TOKEN) == (token_in == "query")


def test_an_unchanged_file_is_not_fetched_twice(server: Server, tmp_path: Path) -> None:
    server.routes.put_file("/cells.csv.gz", gzip.compress(CSV), "application/gzip")
    options = HttpObjectOptions()
    with client(server) as http:
        first = http.fetch_file("/cells.csv.gz", options, "csv", tmp_path, None)
        assert first is not None and first.path.read_bytes() == CSV  # gunzipped by its magic
        assert first.mark.etag and first.mark.size == len(CSV)
        assert http.fetch_file("/cells.csv.gz", options, "csv", tmp_path, first.mark) is None
        assert server.routes.seen("/cells.csv.gz")[-1].status == 304
        server.routes.validators = False  # a server without ETag: compared by content hash
        bare = FetchedFile(url=first.mark.url, content_hash=first.mark.content_hash, size=1)
        assert http.fetch_file("/cells.csv.gz", options, "csv", tmp_path, bare) is None
        server.routes.put_file("/cells.csv.gz", gzip.compress(CSV + b"UMTS,3,1.0,200\n"))
        changed = http.fetch_file("/cells.csv.gz", options, "csv", tmp_path, bare)
    assert changed is not None and changed.mark.content_hash != first.mark.content_hash


@pytest.mark.parametrize(
    ("body", "content_type", "fmt", "said"),
    [
        (b"<!DOCTYPE html><html><body>Log in</body></html>", "text/html", "csv", "HTML page"),
        (gzip.compress(CSV * 50)[:-20], "application/gzip", "csv", "truncated gzip"),
        (b'{"error": "quota exceeded"}', "application/json", "csv", "JSON body, not csv"),
        (b"PAR1 not really parquet", "application/octet-stream", "parquet", "not a complete"),
    ],
    ids=["html", "truncated-gzip", "json-error", "parquet-no-footer"],
)
def test_a_body_that_is_not_what_was_declared_loads_nothing(
    server: Server, tmp_path: Path, body: bytes, content_type: str, fmt: str, said: str
) -> None:
    server.routes.raw["/export"] = (200, body, content_type, {})
    with client(server) as http, pytest.raises(SourceError) as info:
        http.fetch_file("/export", HttpObjectOptions(), fmt, tmp_path, None)
    assert said in str(info.value) and "nothing was loaded" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing left to read


def test_pages_follow_cursor_offset_and_page_number(server: Server) -> None:
    rows = [{"id": i, "updated": 100 + i} for i in range(7)]
    server.routes.records["/orders"] = rows
    styles = {
        "cursor": Paging(style="cursor", param="cursor", cursor_path="next"),
        "offset": Paging(style="offset", param="offset", size_param="limit", size=3),
        "page": Paging(style="page", param="page", size_param="size", size=3, start=1),
    }
    with client(server) as http:
        for style, paging in styles.items():
            options = HttpObjectOptions(records="data", paging=paging)
            pages = list(http.pages("/orders", options, {}))
            assert [r for p in pages for r in p] == rows, style
        newer = list(
            http.pages(
                "/orders",
                HttpObjectOptions(records="data", paging=styles["cursor"]),
                {"updated_since": "104"},
            )
        )
    assert [r["id"] for p in newer for r in p] == [5, 6]


def test_a_page_that_is_not_records_is_a_clear_error(server: Server) -> None:
    server.routes.raw["/orders"] = (200, b'{"error": "quota exceeded"}', "application/json", {})
    server.routes.raw["/html"] = (200, b"<html>maintenance</html>", "text/html", {})
    server.routes.raw["/junk"] = (200, b"{not json", "application/json", {})
    options = HttpObjectOptions(records="data")
    with client(server) as http:
        for path, said in [
            ("/orders", 'no list of records at \'data\'; it says: {"error": "quota exceeded"}'),
            ("/html", "is an HTML page, not JSON"),
            ("/junk", "is not JSON"),
        ]:
            with pytest.raises(SourceError, match=None) as info:
                list(http.pages(path, options, {}))
            assert said in str(info.value), path


def _line(doc: str, text: str) -> int:
    """The 1-based line that holds `text` (the whole line, when `text` is indented)."""
    lines = doc.splitlines()
    if text.startswith(" "):
        return lines.index(text) + 1
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def _errors(doc: str) -> dict[str, str]:
    with pytest.raises(ValidationError) as info:
        validate_text(doc, "doc.yaml")
    return {e["path"]: e["message"] for e in info.value.errors}


def test_http_options_are_typed_by_kind_with_path_and_line() -> None:
    doc = """
version: 1
source_systems:
  - id: api
    kind: http
    options: {base_url: "https://api.example.com", retries: 3}
source_objects:
  - id: a
    system: api
    locator: /orders
    dataset: b
    format: json
    records: data
    paging: {style: cursor, param: cursor}
    columns: [{name: updated, type: bigint}]
datasets: [{id: b, layer: bronze}]
"""
    errors = _errors(doc)
    extra = errors[f"source_systems[0].options.retries (line {_line(doc, 'retries')})"]
    assert extra.startswith("Extra inputs are not permitted")
    paging = errors[f"source_objects[0].paging (line {_line(doc, 'paging')})"]
    assert "cursor paging needs cursor_path" in paging


def test_http_sources_are_checked_by_their_kind_with_path_and_line() -> None:
    doc = """
version: 1
source_systems:
  - id: api
    kind: http
    options:
      base_url: "ftp://x"
      headers: {X-Api-Key: k}
source_objects:
  - id: a
    system: api
    locator: /orders
    dataset: b
    format: json
    records: data
    load_type: incremental
    watermark_column: updated
    columns: [{name: updated, type: bigint}]
  - id: c
    system: api
    locator: /f.csv
    dataset: d
    archive: old
    columns: [{name: x}]
datasets: [{id: b, layer: bronze}, {id: d, layer: bronze}]
"""
    errors = _errors(doc)
    base = errors[f"source_systems[0].options.base_url (line {_line(doc, 'ftp://')})"]
    assert base == "must be an http:// or https:// URL"
    header = errors[f"source_systems[0].options.headers.X-Api-Key (line {_line(doc, 'X-Api')})"]
    assert "would store a secret" in header
    param = errors[f"source_objects[0].watermark_param (line {_line(doc, '  - id: a')})"]
    assert param == "an incremental records source sends its watermark in a query parameter"
    archive = errors[f"source_objects[1].archive (line {_line(doc, 'archive')})"]
    assert archive.startswith("not an option of http sources (theirs: params,")
