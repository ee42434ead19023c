"""The http source's fetching against a real local HTTP server (no Spark): retries and
Retry-After, tokens that never show, basic and OAuth2 auth (a token endpoint that issues
short-lived tokens), conditional requests, paging and when it stops, the request budget, and
bodies that are not what was declared."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from lakeguard.records.reach import Destination, Reach
from lakeguard.records.sources.kinds.http import FetchedFile, HttpObjectOptions, HttpOptions, Paging
from lakeguard.rules.catalog.loader import validate_text
from lakeguard.words.errors import OutOfReach, SourceError, ValidationError
from openlaketx.sources.http_client import HttpClient
from openlaketx.sources.http_paging import PageState
from tests.support.http_server import (
    CLIENT_ID,
    CLIENT_SECRET,
    PASSWORD,
    REFRESH_TOKEN,
    TOKEN,
    TOKEN_PATH,
    USER,
    Server,
)

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


# -- auth -------------------------------------------------------------------------------
# a confined tenant whose secrets are the variables LAKETX_SECRET_T_*
SCOPED = Reach(
    tenant="t", network=(Destination.parse("127.0.0.1"),), secret_prefix="LAKETX_SECRET_T_"
)
SECRETS = {
    "LAKETX_SECRET_T_PASSWORD": PASSWORD,
    "LAKETX_SECRET_T_USER": USER,
    "LAKETX_SECRET_T_CLIENT": CLIENT_SECRET,
    "LAKETX_SECRET_T_REFRESH": REFRESH_TOKEN,
}
NEVER_SHOWN = (PASSWORD, CLIENT_SECRET, REFRESH_TOKEN, TOKEN)


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


def authed(
    server: Server, auth: dict[str, object], reach: Reach = SCOPED, **options: object
) -> HttpClient:
    """A client of system `shop` whose `auth` is as given (its refs in `SECRETS`)."""
    settings = HttpOptions.model_validate(
        {"base_url": server.url, "backoff_seconds": 0.01, "auth": auth, **options}
    )
    return HttpClient(
        settings,
        None,
        where="source_objects[o]",
        credential_ref=None,
        reach=reach,
        system_where="source_systems[shop]",
    )


def oauth2(server: Server, **more: object) -> dict[str, object]:
    return {
        "type": "oauth2_client_credentials",
        "token_url": f"{server.url}{TOKEN_PATH}",
        "client_id": CLIENT_ID,
        "client_secret_ref": "env:LAKETX_SECRET_T_CLIENT",
        **more,
    }


def _shown(info: pytest.ExceptionInfo[Exception]) -> str:
    """Everything an error would show (its message, where, fix and details)."""
    error = info.value
    assert isinstance(error, SourceError | OutOfReach)
    return json.dumps(error.to_dict())


RECORDS = HttpObjectOptions(
    records="data", paging=Paging(style="cursor", param="cursor", cursor_path="next")
)


@pytest.mark.parametrize("user", ["value", "ref"])
def test_basic_auth_sends_the_user_and_the_password_it_names(
    server: Server, tmp_path: Path, secrets: None, user: str
) -> None:
    server.routes.put_file("/cells.csv", CSV)
    server.routes.token_in = "basic"
    named = {"user": USER} if user == "value" else {"user_ref": "LAKETX_SECRET_T_USER"}
    auth = {"type": "basic", "password_ref": "env:LAKETX_SECRET_T_PASSWORD", **named}
    with authed(server, auth) as http:
        assert http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    assert server.routes.seen("/cells.csv")[-1].status == 200
    server.routes.basic = (USER, "another-password")  # the server no longer takes it
    with authed(server, auth) as http, pytest.raises(SourceError) as info:
        http.fetch_file("/cells.csv", HttpObjectOptions(), "csv", tmp_path, None)
    said = _shown(info)
    assert "refused the request (401)" in said and not info.value.transient
    assert "auth.password_ref env:LAKETX_SECRET_T_PASSWORD" in said
    assert all(secret not in said for secret in NEVER_SHOWN)
    pair = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert pair not in said


def test_a_secret_outside_the_tenants_scope_is_never_resolved_nor_sent(
    server: Server, secrets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTHER_PASSWORD", PASSWORD)
    auth = {"type": "basic", "user": USER, "password_ref": "OTHER_PASSWORD"}
    with pytest.raises(OutOfReach) as info:
        authed(server, auth)
    assert info.value.where == "source_systems[shop].options.auth.password_ref"
    assert "outside the tenant's secrets" in str(info.value) and PASSWORD not in _shown(info)
    assert server.routes.log == []


@pytest.mark.parametrize("client_auth", ["basic", "body"])
def test_an_oauth2_access_token_is_asked_for_once_and_sent_with_every_page(
    server: Server, secrets: None, client_auth: str
) -> None:
    routes = server.routes
    routes.token_in = "oauth"
    routes.records["/orders"] = [{"id": i, "updated": i} for i in range(5)]
    routes.fail[TOKEN_PATH] = [(503, {})]  # a busy token endpoint is asked again
    auth = oauth2(server, client_auth=client_auth, scope="orders:read", audience="shop-api")
    with authed(server, auth, headers={"X-Shop-Tenant": "t"}) as http:
        pages = list(http.pages("/orders", RECORDS, {}))
    assert [r["id"] for page in pages for r in page] == [0, 1, 2, 3, 4]
    assert [(s.path, s.status) for s in routes.log] == [
        (TOKEN_PATH, 503),
        (TOKEN_PATH, 200),
        *[("/orders", 200)] * 3,
    ]
    assert routes.grants == ["client_credentials"]  # one token for the whole read
    asked = routes.log[1]
    assert asked.query["scope"] == "orders:read" and asked.query["audience"] == "shop-api"
    if client_auth == "basic":
        assert asked.headers["authorization"].startswith("Basic ")
        assert "client_secret" not in asked.query
    else:
        assert asked.query["client_id"] == CLIENT_ID
        assert asked.query["client_secret"] == CLIENT_SECRET
        assert "authorization" not in asked.headers
    assert {s.headers["authorization"] for s in routes.log[2:]} == {
        f"Bearer {next(iter(routes.issued))}"
    }
    # the API's own headers go to the API only
    assert [s.headers.get("x-shop-tenant") for s in routes.log] == [None, None, "t", "t", "t"]


def test_an_access_token_is_renewed_before_it_expires(server: Server, secrets: None) -> None:
    """A clock the test moves: the token is replaced before the request that would carry it
    after its expiry minus the margin, so the server never refuses one."""
    routes = server.routes
    routes.token_in = "oauth"
    routes.token_life = 100.0
    routes.records["/orders"] = [{"id": i, "updated": i} for i in range(6)]
    now = [1000.0]
    settings = HttpOptions.model_validate({"base_url": server.url, "auth": oauth2(server)})
    http = HttpClient(
        settings,
        None,
        where="source_objects[o]",
        credential_ref=None,
        reach=SCOPED,
        system_where="source_systems[shop]",
        clock=lambda: now[0],
    )
    with http:
        pages = http.pages("/orders", RECORDS, {})
        next(pages)
        now[0] += 69.0  # 31 s left: kept
        next(pages)
        now[0] += 2.0  # 29 s left: less than the 30 s margin, replaced first
        next(pages)
    assert routes.grants == ["client_credentials", "client_credentials"]
    assert [(s.path, s.status) for s in routes.log] == [
        (TOKEN_PATH, 200),
        ("/orders", 200),
        ("/orders", 200),
        (TOKEN_PATH, 200),
        ("/orders", 200),
    ]
    first, second = routes.issued
    sent = [s.headers["authorization"] for s in routes.seen("/orders")]
    assert sent == [f"Bearer {first}", f"Bearer {first}", f"Bearer {second}"]


def test_a_short_lived_token_is_refreshed_as_the_server_sees_it(
    server: Server, secrets: None
) -> None:
    """Real time: tokens that live 1 s (renewed after 0.5 s), pages spaced by the request
    budget over more than a second."""
    routes = server.routes
    routes.token_in = "oauth"  # an expired token is refused (401)
    routes.token_life = 1.0
    routes.records["/orders"] = [{"id": i, "updated": i} for i in range(8)]
    with authed(server, oauth2(server), requests_per_second=4) as http:
        pages = list(http.pages("/orders", RECORDS, {}))
    assert sum(len(p) for p in pages) == 8
    assert len(routes.grants) >= 2  # refreshed while the read went on
    assert len(set(routes.issued)) == len(routes.grants)
    assert routes.seen("/orders")[-1].status == 200


def test_a_refused_access_token_is_renewed_once_then_the_request_is_sent_again(
    server: Server, secrets: None
) -> None:
    routes = server.routes
    routes.token_in = "oauth"
    routes.records["/orders"] = [{"id": i, "updated": i} for i in range(4)]
    with authed(server, oauth2(server)) as http:
        pages = http.pages("/orders", RECORDS, {})
        assert len(next(pages)) == 2
        routes.issued.clear()  # the server forgets its token (revoked, or expired early)
        assert len(next(pages)) == 2
    assert [(s.path, s.status) for s in routes.log] == [
        (TOKEN_PATH, 200),
        ("/orders", 200),
        ("/orders", 401),
        (TOKEN_PATH, 200),
        ("/orders", 200),
    ]
    routes.log.clear()
    routes.token_in = "header"  # now no access token will do: renewed once, then refused
    with authed(server, oauth2(server)) as http, pytest.raises(SourceError) as info:
        list(http.pages("/orders", RECORDS, {}))
    assert [(s.path, s.status) for s in routes.log] == [
        (TOKEN_PATH, 200),
        ("/orders", 401),
        (TOKEN_PATH, 200),
        ("/orders", 401),
    ]
    said = _shown(info)
    assert "refused the request (401): the access token from" in said
    assert "auth.client_secret_ref env:LAKETX_SECRET_T_CLIENT" in said
    assert all(secret not in said for secret in (*NEVER_SHOWN, *routes.issued))


@pytest.mark.parametrize("flow", ["oauth2_client_credentials", "oauth2_refresh_token"])
def test_a_token_endpoint_that_refuses_is_terminal_and_names_the_system_and_the_ref(
    server: Server, secrets: None, flow: str
) -> None:
    routes = server.routes
    routes.token_in = "oauth"
    routes.records["/orders"] = [{"id": 1, "updated": 1}]
    routes.clients[CLIENT_ID] = "a-secret-the-server-holds"
    routes.refresh_tokens.clear()
    if flow == "oauth2_client_credentials":
        auth, ref = oauth2(server), "auth.client_secret_ref env:LAKETX_SECRET_T_CLIENT"
    else:
        auth = {
            "type": flow,
            "token_url": f"{server.url}{TOKEN_PATH}",
            "refresh_token_ref": "LAKETX_SECRET_T_REFRESH",
        }
        ref = "auth.refresh_token_ref LAKETX_SECRET_T_REFRESH"
    with authed(server, auth) as http, pytest.raises(SourceError) as info:
        list(http.pages("/orders", RECORDS, {}))
    said = _shown(info)
    assert not info.value.transient
    assert info.value.where == "source_systems[shop].options.auth"
    assert str(info.value).startswith("source_systems[shop]: the token endpoint")
    assert "refused to issue an access token" in said and ref in said
    assert ("invalid_client" if "credentials" in flow else "invalid_grant") in said
    assert all(secret not in said for secret in NEVER_SHOWN)
    assert [s.path for s in routes.log] == [TOKEN_PATH]  # asked once, and the API never


def test_a_rotated_refresh_token_is_kept_for_the_next_refresh(
    server: Server, secrets: None
) -> None:
    routes = server.routes
    routes.token_in = "oauth"
    routes.rotate = True  # each refresh token works once
    routes.records["/orders"] = [{"id": i, "updated": i} for i in range(6)]
    auth = {
        "type": "oauth2_refresh_token",
        "token_url": f"{server.url}{TOKEN_PATH}",
        "refresh_token_ref": "LAKETX_SECRET_T_REFRESH",
        "client_id": CLIENT_ID,
    }
    with authed(server, auth) as http:
        pages = http.pages("/orders", RECORDS, {})
        for _ in range(3):
            next(pages)
            routes.issued.clear()
    assert routes.grants == ["refresh_token"] * 3  # the second and third with rotated ones
    refreshes = [s.query for s in routes.seen(TOKEN_PATH)]
    assert refreshes[0]["refresh_token"] == REFRESH_TOKEN
    assert all(r["refresh_token"].startswith("rotated-") for r in refreshes[1:])
    assert all(r["client_id"] == CLIENT_ID for r in refreshes)  # a public client


def test_the_token_endpoint_is_a_destination_the_reach_must_allow(
    server: Server, secrets: None
) -> None:
    other = Server()  # the token endpoint on a port the tenant was not given
    try:
        port = server.url.rsplit(":", 1)[1]
        only_api = Reach(
            tenant="t",
            network=(Destination.parse(f"127.0.0.1:{port}"),),
            secret_prefix="LAKETX_SECRET_T_",
        )
        auth = oauth2(server, token_url=f"{other.url}{TOKEN_PATH}")
        with pytest.raises(OutOfReach) as info:
            authed(server, auth, reach=only_api)
        assert info.value.where == "source_systems[shop].options.auth.token_url"
        assert "is not a destination tenant t may reach" in str(info.value)
        assert CLIENT_SECRET not in _shown(info)
        assert other.routes.log == [] and server.routes.log == []
    finally:
        other.stop()


# -- paging -----------------------------------------------------------------------------
def test_next_url_and_link_paging_follow_relative_urls(server: Server) -> None:
    routes = server.routes
    routes.token_in = "query"  # the token goes with every followed URL, never shown
    rows = [{"id": i, "updated": 100 + i} for i in range(7)]
    routes.records["/api/orders"] = rows
    styles = {
        "next_url": Paging(
            style="next_url", next_url_path="links.next", size_param="limit", size=2
        ),
        "link": Paging(style="link", size_param="limit", size=2),
    }
    with client(server, token_in="query") as http:
        for style, paging in styles.items():
            routes.log.clear()
            options = HttpObjectOptions(records="data", paging=paging)
            pages = list(http.pages("/api/orders", options, {"updated_since": "100"}))
            assert [r for p in pages for r in p] == rows[1:], style
            asked = [s.query for s in routes.log]
            assert asked == [
                {"limit": "2", "updated_since": "100", "token": TOKEN},
                {"after": "2", "limit": "2", "updated_since": "100", "token": TOKEN},
                {"after": "4", "limit": "2", "updated_since": "100", "token": TOKEN},
            ], style  # three pages, three requests: no empty one after the last


def test_a_next_url_on_another_host_is_refused(server: Server) -> None:
    other = Server()
    try:
        server.routes.token_in = "none"
        server.routes.records["/api/orders"] = [{"id": i, "updated": i} for i in range(3)]
        paging = Paging(style="next_url", next_url_path="links.next", size_param="limit", size=2)
        options = HttpObjectOptions(records="data", paging=paging)
        server.routes.next_base = server.url  # absolute, on the system's own host: followed
        with client(server) as http:
            assert sum(len(p) for p in http.pages("/api/orders", options, {})) == 3
        server.routes.next_base = other.url  # the same address, another port
        with client(server) as http, pytest.raises(SourceError) as info:
            list(http.pages("/api/orders", options, {}))
        assert f"names its next page on {other.url}" in str(info.value)
        assert TOKEN not in _shown(info)
        assert other.routes.log == []  # nothing was sent there, the token least of all
    finally:
        other.stop()


@pytest.mark.parametrize(
    ("paging", "rows", "requests"),
    [
        # full pages with nothing else to go by: the empty page after them is unavoidable
        ({"style": "page", "param": "page", "size_param": "size", "size": 3, "start": 1}, 6, 3),
        # has_more / total say there is no more: no extra request
        (
            {
                "style": "page",
                "param": "page",
                "size_param": "size",
                "size": 3,
                "start": 1,
                "has_more_path": "meta.has_more",
            },
            6,
            2,
        ),
        (
            {
                "style": "offset",
                "param": "offset",
                "size_param": "limit",
                "size": 3,
                "total_path": "meta.total",
            },
            6,
            2,
        ),
        # a short page is the last one
        ({"style": "offset", "param": "offset", "size_param": "limit", "size": 3}, 7, 3),
        # no size sent: the server's page size (2) is learned from the first page
        ({"style": "page", "param": "page", "start": 1}, 5, 3),
        ({"style": "page", "param": "page", "start": 1, "total_path": "meta.total"}, 4, 2),
        (
            {
                "style": "cursor",
                "param": "cursor",
                "cursor_path": "next",
                "has_more_path": "meta.has_more",
            },
            4,
            2,
        ),
    ],
    ids=[
        "page-full",
        "page-has-more",
        "offset-total",
        "offset-short",
        "page-unsized",
        "page-unsized-total",
        "cursor-has-more",
    ],
)
def test_pages_stop_without_an_extra_request_when_the_answer_says_so(
    server: Server, paging: dict[str, object], rows: int, requests: int
) -> None:
    records = [{"id": i, "updated": i} for i in range(rows)]
    server.routes.records["/orders"] = records
    options = HttpObjectOptions(records="data", paging=Paging.model_validate(paging))
    with client(server) as http:
        pages = list(http.pages("/orders", options, {}))
    assert [r for p in pages for r in p] == records
    assert len(server.routes.seen("/orders")) == requests


def test_has_more_and_total_go_on_past_a_short_page() -> None:
    """A server that caps the page below `size`: a short page is not the last when the page
    says more follow."""
    paging = Paging(
        style="offset", param="offset", size_param="limit", size=100, has_more_path="more"
    )
    state = PageState(paging)
    assert state.advance({"more": True}, [{}] * 50)
    assert state.params() == {"offset": "50", "limit": "100"}
    assert not state.advance({"more": "false"}, [{}] * 50)
    counted = PageState(paging.model_copy(update={"has_more_path": None, "total_path": "n"}))
    assert counted.advance({"n": 120}, [{}] * 50) and counted.advance({"n": 120}, [{}] * 50)
    assert not counted.advance({"n": 120}, [{}] * 20)
    unsized = PageState(Paging(style="page", param="p"))
    assert unsized.advance({}, [{}] * 4) and unsized.advance({}, [{}] * 4)
    assert not unsized.advance({}, [{}] * 3)  # shorter than the server's 4


# -- request budget ---------------------------------------------------------------------
def test_requests_per_second_spaces_every_request_retries_included(server: Server) -> None:
    rate = 5.0  # 1 s for the six requests: a 0.1 s margin for the first one's connect
    server.routes.token_in = "none"
    server.routes.records["/orders"] = [{"id": i, "updated": i} for i in range(8)]
    server.routes.fail["/orders"] = [(503, {}), (503, {})]  # retried at once (0.01 s backoff)
    with client(server, requests_per_second=rate) as http:
        assert sum(len(p) for p in http.pages("/orders", RECORDS, {})) == 8
    seen = server.routes.seen("/orders")
    assert [s.status for s in seen] == [503, 503, 200, 200, 200, 200]
    # arrival times only: never faster than the rate (a lower bound cannot flake)
    assert seen[-1].at - seen[0].at >= (len(seen) - 1) / rate * 0.9


# -- validate and schema ----------------------------------------------------------------
def test_auth_paging_and_budget_options_are_typed_with_clear_errors() -> None:
    doc = """
version: 1
source_systems:
  - id: a
    kind: http
    options:
      base_url: "https://api.example.com"
      auth: {type: oauth2_client_credentials, client_id: c, client_secret_ref: env:S}
  - id: b
    kind: http
    options:
      base_url: "https://api.example.com"
      auth: {type: kerberos}
      requests_per_second: 0
  - id: c
    kind: http
    options:
      base_url: "https://api.example.com"
      auth: {type: basic, user: u, user_ref: U, password_ref: PW}
  - id: d
    kind: http
    options:
      base_url: "https://api.example.com"
      auth: {type: basic, user: u, password_ref: "$(cat /etc/pw)"}
source_objects:
  - id: o1
    system: a
    locator: /orders
    dataset: b1
    format: json
    records: data
    paging: {style: link, cursor_path: next}
    columns: [{name: updated, type: bigint}]
  - id: o2
    system: a
    locator: /orders
    dataset: b2
    format: json
    records: data
    paging: {style: page, param: page, has_more_path: more, total_path: total}
    columns: [{name: updated, type: bigint}]
  - id: o3
    system: a
    locator: /orders
    dataset: b3
    format: json
    records: data
    paging: {style: next_url, param: after}
    columns: [{name: updated, type: bigint}]
datasets: [{id: b1, layer: bronze}, {id: b2, layer: bronze}, {id: b3, layer: bronze}]
"""
    errors = _errors(doc)

    def said(path: str, text: str) -> str:
        return errors[f"{path} (line {_line(doc, text)})"]

    assert said("source_systems[0].options.auth.token_url", "oauth2_client") == "Field required"
    assert said("source_systems[1].options.auth", "kerberos").startswith("unknown auth type")
    rate = said("source_systems[1].options.requests_per_second", "requests_per_second")
    assert "requests_per_second must be above 0" in rate
    assert "names its user once" in said("source_systems[2].options.auth", "user_ref")
    assert "String should match pattern" in said(
        "source_systems[3].options.auth.password_ref", "/etc/pw"
    )
    assert "cursor_path is for cursor paging, not link" in said(
        "source_objects[0].paging", "style: link"
    )
    assert "has_more_path and total_path both" in said("source_objects[1].paging", "has_more")
    assert "next_url paging follows the URL each page names" in said(
        "source_objects[2].paging", "style: next_url"
    )


def test_auth_is_checked_against_the_rest_of_the_system() -> None:
    doc = """
version: 1
source_systems:
  - id: a
    kind: http
    options:
      base_url: "https://api.example.com"
      token_in: query
      auth: {type: basic, user: u, password_ref: env:PW}
    credential_ref: env:TOKEN
  - id: b
    kind: http
    options:
      base_url: "https://api.example.com"
      auth:
        type: oauth2_refresh_token
        token_url: "https://auth.example.com/token?key=abc"
        refresh_token_ref: file:/run/secrets/refresh
        client_secret_ref: env:CLIENT_SECRET
  - id: c
    kind: http
    options:
      base_url: "https://api.example.com"
      token_name: X-Key
      auth: {token_ref: env:API_TOKEN, token_name: X-Api-Key}
    credential_ref: env:API_TOKEN
"""
    errors = _errors(doc)

    def said(path: str, text: str) -> str:
        return errors[f"{path} (line {_line(doc, text)})"]

    assert said("source_systems[0].credential_ref", "env:TOKEN") == (
        "with auth type basic the secrets are named in auth (user_ref, password_ref); "
        "credential_ref is a bearer token's"
    )
    assert said("source_systems[0].options.token_in", "token_in") == "is for bearer auth, not basic"
    token_url = said("source_systems[1].options.auth.token_url", "token_url")
    assert token_url.startswith("must carry no user, password or query")
    assert said("source_systems[1].options.auth.client_id", "oauth2_refresh_token") == (
        "a client secret goes with its client_id"
    )
    assert "named twice" in said("source_systems[2].options.auth.token_ref", "env:API_TOKEN,")
    assert "write it once, in auth" in said("source_systems[2].options.token_name", "X-Key")


def test_a_bearer_auth_is_todays_token_and_an_old_document_reads_the_same() -> None:
    old = HttpOptions(base_url="https://x", token_in="query", token_name="key")
    new = HttpOptions.model_validate(
        {"base_url": "https://x", "auth": {"token_in": "query", "token_name": "key"}}
    )
    for options in (old, new):
        assert (options.sends_token_in, options.query_name, options.prefix) == ("query", "key", "")
    assert HttpOptions(base_url="https://x").prefix == "Bearer "
    # what an existing document stores is unchanged (no new key, so no new hash)
    assert set(old.model_dump(mode="json", exclude_none=True)) == {
        "base_url",
        "token_in",
        "token_name",
        "headers",
        "timeout_seconds",
        "max_retries",
        "backoff_seconds",
        "max_wait_seconds",
    }


def test_the_schema_describes_auth_paging_and_the_budget() -> None:
    from lakeguard.rules.catalog.models import MetadataDocument

    defs = MetadataDocument.model_json_schema()["$defs"]
    http = defs["HttpOptions"]["properties"]
    assert "oauth2_client_credentials" in http["auth"]["description"]
    assert "retries and token requests included" in http["requests_per_second"]["description"]
    kinds = {
        name: defs[name]["properties"]["type"]
        for name in ("BearerAuth", "BasicAuth", "ClientCredentialsAuth", "RefreshTokenAuth")
    }
    assert [k.get("const", k.get("default")) for k in kinds.values()] == [
        "bearer",
        "basic",
        "oauth2_client_credentials",
        "oauth2_refresh_token",
    ]
    for name in ("token_url", "client_secret_ref", "client_auth", "scope", "audience"):
        assert defs["ClientCredentialsAuth"]["properties"][name]["description"], name
    assert defs["RefreshTokenAuth"]["properties"]["refresh_token_ref"]["description"]
    paging = defs["Paging"]["properties"]
    assert set(paging["style"]["enum"]) == {"cursor", "offset", "page", "next_url", "link"}
    for name in ("next_url_path", "has_more_path", "total_path"):
        assert paging[name]["description"], name
