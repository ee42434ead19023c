"""A real HTTP server on 127.0.0.1 that the http source tests start: files, a paged JSON API,
a token, failures on demand, and a log of every request it answered.

It runs in a thread of the test process (a child process started by a test reaches it over
loopback like any client). Routes are plain data the test changes between runs:
- `files[path] = (bytes, content_type)`: served with an ETag and a Last-Modified, answering
  304 to a request that sends them back unchanged;
- `records[path] = list of dicts`: a paged API: `?cursor=` (cursor paging, `next` in each
  page), `?offset=&limit=` or `?page=&size=`, filtered by `?updated_since=` on `updated`;
- `raw[path] = (status, bytes, content_type, headers)`: answered as is (an HTML error page,
  a truncated gzip, a JSON error body);
- `fail[path] = [(status, headers), ...]`: answered first, one per request (429, 503).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "s3cr3t-token-value"


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
    token_in: str = "header"  # where the token must be: header, query, either, or none
    page_size: int = 2  # records per cursor page
    log: list[Seen] = field(default_factory=list)

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

    def _authorised(self, query: dict[str, str]) -> bool:
        if self.routes.token_in == "header":
            return self.headers.get("Authorization") == f"Bearer {TOKEN}"
        if self.routes.token_in == "query":
            return query.get("token") == TOKEN
        if self.routes.token_in == "either":
            header = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            return header or query.get("token") == TOKEN
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
            return self._page(rows, query)
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

    def _page(self, rows: list[dict[str, Any]], query: dict[str, str]) -> int:
        since = query.get("updated_since")
        kept = [r for r in rows if since is None or r["updated"] > int(since)]
        size = self.routes.page_size
        if "offset" in query:
            start, size = int(query["offset"]), int(query.get("limit", size))
            page: dict[str, Any] = {"data": kept[start : start + size]}
        elif "page" in query:
            size = int(query.get("size", size))
            start = (int(query["page"]) - 1) * size
            page = {"data": kept[start : start + size]}
        else:
            start = int(query.get("cursor", "0"))
            nxt = start + size
            page = {"data": kept[start:nxt], "next": str(nxt) if nxt < len(kept) else None}
        return self._send(200, json.dumps(page).encode(), "application/json", {})


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
