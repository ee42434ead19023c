"""A real HTTP server on 127.0.0.1 that the http source tests start: files, a paged JSON API,
a token, failures on demand, and a log of every request it answered.

It runs in a thread of the test process (a child process started by a test reaches it over
loopback like any client). Routes are plain data the test changes between runs:
- `files[path] = (bytes, content_type)`: served with an ETag and a Last-Modified, answering
  304 to a request that sends them back unchanged;
- `records[path] = list of dicts`: a paged API: `?cursor=` (cursor paging, `next` in each
  page), `?offset=&limit=`, `?page=&size=` or `?after=&limit=` (the next page's URL in
  `links.next`, relative unless `next_base` is set, and in a `Link: rel="next"` header),
  filtered by `?updated_since=` on `updated`; every page says `meta.total` and
  `meta.has_more`;
- `raw[path] = (status, bytes, content_type, headers)`: answered as is (an HTML error page,
  a truncated gzip, a JSON error body);
- `fail[path] = [(status, headers), ...]`: answered first, one per request (429, 503);
- `POST /oauth/token`: an OAuth2 token endpoint (client credentials, by basic header or form
  body, and refresh tokens, rotated when `rotate`), issuing access tokens that expire after
  `token_life` seconds; `grants` counts what it issued. With `token_in = "oauth"` the API
  takes only an unexpired token it issued; `"basic"`: the user and password of `basic`.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

TOKEN = "s3cr3t-token-value"
TOKEN_PATH = "/oauth/token"
CLIENT_ID = "laketx-client"
CLIENT_SECRET = "cl1ent-s3cret-value"
REFRESH_TOKEN = "refr3sh-t0ken-value"
USER, PASSWORD = "ingest", "pa55w0rd-value"


@dataclass
class Seen:
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float
    status: int = 0


@dataclass
class Routes:
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    raw: dict[str, tuple[int, bytes, str, dict[str, str]]] = field(default_factory=dict)
    fail: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    modified: dict[str, float] = field(default_factory=dict)
    dates: dict[str, tuple[str, str]] = field(default_factory=dict)
    strings: set[str] = field(default_factory=set)
    validators: bool = True  # send ETag / Last-Modified
    token_in: str = "header"  # header, query, either, basic, oauth, or none
    page_size: int = 2  # records per cursor page (and page without a size)
    next_base: str = ""  # the next page's URL: relative, or on this scheme://host:port
    log: list[Seen] = field(default_factory=list)
    # the token endpoint
    basic: tuple[str, str] = (USER, PASSWORD)
    clients: dict[str, str] = field(default_factory=lambda: {CLIENT_ID: CLIENT_SECRET})
    refresh_tokens: set[str] = field(default_factory=lambda: {REFRESH_TOKEN})
    rotate: bool = False  # a refresh answers a new refresh token and forgets the old one
    token_life: float = 60.0
    issued: dict[str, float] = field(default_factory=dict)  # access token -> expiry
    grants: list[str] = field(default_factory=list)  # grant types of the tokens issued

    def put_file(self, path: str, body: bytes, content_type: str = "text/csv") -> None:
        self.files[path] = (body, content_type)
        self.modified[path] = time.time()

    def seen(self, path: str) -> list[Seen]:
        return [s for s in self.log if s.path == path]


class _Handler(BaseHTTPRequestHandler):
    routes: Routes
    _seen: Seen

    def log_message(self, *_: Any) -> None:  # quiet: the test reads `routes.log`
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self._seen = Seen(
            url.path, query, {k.lower(): v for k, v in self.headers.items()}, time.time()
        )
        self.routes.log.append(self._seen)
        self._answer(url.path, query)

    def _status(self, status: int) -> None:
        self._seen.status = status  # logged before the client can read the answer
        self.send_response(status)

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str]) -> int:
        self._status(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        return status

    def do_POST(self) -> None:
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = {k: v[-1] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        self._seen = Seen(
            url.path, form, {k.lower(): v for k, v in self.headers.items()}, time.time()
        )
        self.routes.log.append(self._seen)
        queued = self.routes.fail.get(url.path)
        if queued:
            status, headers = queued.pop(0)
            self._send(status, b'{"error": "try later"}', "application/json", headers)
        elif url.path == TOKEN_PATH:
            self._token(form)
        else:
            self._send(404, b"not found", "text/plain", {})

    def _token(self, form: dict[str, str]) -> int:
        routes = self.routes
        client_id, secret = form.get("client_id"), form.get("client_secret")
        said = self.headers.get("Authorization", "")
        if said.startswith("Basic "):
            user, _, password = base64.b64decode(said[6:]).decode().partition(":")
            client_id, secret = unquote_plus(user), unquote_plus(password)
        answer: dict[str, Any] = {}
        grant = form.get("grant_type")
        if grant == "client_credentials":
            if client_id not in routes.clients or routes.clients[client_id] != secret:
                return self._refuse(401, "invalid_client", "client authentication failed")
        elif grant == "refresh_token":
            if form.get("refresh_token") not in routes.refresh_tokens:
                return self._refuse(400, "invalid_grant", "unknown refresh token")
            if routes.rotate:
                routes.refresh_tokens.discard(form["refresh_token"])
                answer["refresh_token"] = f"rotated-{next(_SERIAL)}"
                routes.refresh_tokens.add(answer["refresh_token"])
        else:
            return self._refuse(400, "unsupported_grant_type", str(grant))
        token = f"access-{next(_SERIAL)}"
        routes.issued[token] = time.time() + routes.token_life
        routes.grants.append(grant)
        answer |= {"access_token": token, "token_type": "Bearer", "expires_in": routes.token_life}
        return self._send(200, json.dumps(answer).encode(), "application/json", {})

    def _refuse(self, status: int, error: str, description: str) -> int:
        body = json.dumps({"error": error, "error_description": description}).encode()
        return self._send(status, body, "application/json", {})

    def _authorised(self, query: dict[str, str]) -> bool:
        if self.routes.token_in == "header":
            return self.headers.get("Authorization") == f"Bearer {TOKEN}"
        if self.routes.token_in == "query":
            return query.get("token") == TOKEN
        if self.routes.token_in == "either":
            header = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            return header or query.get("token") == TOKEN
        if self.routes.token_in == "basic":
            pair = base64.b64encode(":".join(self.routes.basic).encode()).decode()
            return self.headers.get("Authorization") == f"Basic {pair}"
        if self.routes.token_in == "oauth":
            said = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return self.routes.issued.get(said, 0.0) > time.time()
        return True

    def _answer(self, path: str, query: dict[str, str]) -> int:
        routes = self.routes
        queued = routes.fail.get(path)
        if queued:
            status, headers = queued.pop(0)
            return self._send(status, b'{"error": "try later"}', "application/json", headers)
        if not self._authorised(query):
            return self._send(401, b'{"error": "bad token"}', "application/json", {})
        if path in routes.raw:
            status, body, content_type, headers = routes.raw[path]
            return self._send(status, body, content_type, headers)
        if path in routes.files:
            return self._file(path)
        if path in routes.records:
            rows = routes.records[path]
            if path in routes.dates:
                param, name = routes.dates[path]
                since = query.get(param)
                rows = [r for r in rows if since is None or str(r[name])[:10] >= since]
            if path in routes.strings:
                rows = [{k: _text(v) for k, v in r.items()} for r in rows]
            return self._page(path, rows, query)
        return self._send(404, b"not found", "text/plain", {})

    def _file(self, path: str) -> int:
        body, content_type = self.routes.files[path]
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = formatdate(self.routes.modified[path], usegmt=True)
        headers = {"ETag": etag, "Last-Modified": modified} if self.routes.validators else {}
        if self.routes.validators and self.headers.get("If-None-Match") == etag:
            self._status(304)
            self.end_headers()
            return 304
        return self._send(200, body, content_type, headers)

    def _page(self, path: str, rows: list[dict[str, Any]], query: dict[str, str]) -> int:
        since = query.get("updated_since")
        kept = [r for r in rows if since is None or r["updated"] > int(since)]
        size = self.routes.page_size
        headers = {}
        if "offset" in query:
            start, size = int(query["offset"]), int(query.get("limit", size))
            page: dict[str, Any] = {"data": kept[start : start + size]}
        elif "page" in query:
            size = int(query.get("size", size))
            start = (int(query["page"]) - 1) * size
            page = {"data": kept[start : start + size]}
        elif "after" in query or "limit" in query:
            start, size = int(query.get("after", "0")), int(query.get("limit", size))
            page = {"data": kept[start : start + size], "links": {}}
            if start + size < len(kept):
                more = f"after={start + size}&limit={size}"
                if since is not None:
                    more += f"&updated_since={since}"
                base = self.routes.next_base
                # relative to the page's URL unless next_base says where
                nxt = f"{base}{path}?{more}" if base else f"{path.rsplit('/', 1)[-1]}?{more}"
                page["links"]["next"] = nxt
                headers["Link"] = f'<{nxt}>; rel="next", <{path}?after=0>; rel="first"'
        else:
            start = int(query.get("cursor", "0"))
            nxt_cursor = start + size
            page = {
                "data": kept[start:nxt_cursor],
                "next": str(nxt_cursor) if nxt_cursor < len(kept) else None,
            }
        page["meta"] = {"total": len(kept), "has_more": start + size < len(kept)}
        return self._send(200, json.dumps(page).encode(), "application/json", headers)


_SERIAL = itertools.count(1)


def _text(value: Any) -> Any:
    """A number or boolean as the string a careless API sends (`2013` -> `"2013"`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


class Server:
    """The server, its base URL and its routes."""

    def __init__(self) -> None:
        self.routes = Routes()
        handler = type("Handler", (_Handler,), {"routes": self.routes})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        # `shutdown` waits for the loop's next poll: at the default 0.5 s, that was half a
        # second of every test's teardown
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
