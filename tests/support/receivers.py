"""Real receivers the alert tests start on 127.0.0.1: an HTTP server that checks Standard
Webhooks signatures and answers as scripted, and an SMTP server (aiosmtpd), with STARTTLS on
a self-signed certificate made for the test by the `openssl` command.

The HTTP receiver runs in a thread of the test process (a child dispatcher reaches it over
loopback like any client). It records every request it read, what it answered, and which
`webhook-id`s it accepted (answered 2xx): a receiver deduplicating by id, as the spec asks,
sees each delivery once however often it comes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.support.ports import free_ports

SECRET_KEY = b"a test signing key of 32 bytes!!"
SECRET = "whsec_" + base64.b64encode(SECRET_KEY).decode()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int = 0
    signed: bool = False  # the signature checked out against SECRET

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def id(self) -> str:
        return self.headers.get("webhook-id", "")


@dataclass
class Receiver:
    """What the server answers (`script[path]`: statuses with headers, one per request, then
    200), and what it saw."""

    port: int = 0
    script: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    hold: threading.Event | None = None  # while set to an unset event, requests wait on it
    held: threading.Event = field(default_factory=threading.Event)  # a request is waiting
    abandon: bool = False  # a held request is dropped unanswered when released
    log: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def accepted(self, path: str | None = None) -> list[Received]:
        return [r for r in self.log if 200 <= r.status < 300 and (path is None or r.path == path)]

    def accepted_ids(self, path: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for r in self.accepted(path):
            counts[r.id] = counts.get(r.id, 0) + 1
        return counts


def verify(headers: dict[str, str], body: bytes, key: bytes = SECRET_KEY) -> bool:
    """The Standard Webhooks check: v1 HMAC-SHA256 over id.timestamp.body, a fresh timestamp."""
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not msg_id or not stamp.isdigit() or abs(time.time() - int(stamp)) > 300:
        return False
    expected = base64.b64encode(
        hmac.new(key, f"{msg_id}.{stamp}.".encode() + body, hashlib.sha256).digest()
    ).decode()
    for part in headers.get("webhook-signature", "").split():
        version, _, signature = part.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def log_message(self, *_: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        seen = Received(self.path, headers, body, signed=verify(headers, body))
        r = self.receiver
        with r.lock:
            r.log.append(seen)
            queued = r.script.get(self.path)
            status, extra = queued.pop(0) if queued else (200, {})
        if r.hold is not None and not r.hold.is_set():
            r.held.set()
            r.hold.wait(30)
            if r.abandon:  # its sender died waiting: it never reads an answer
                self.close_connection = True
                return
        seen.status = status  # said before the client can read the answer
        answer = b'{"ok": true}' if status < 300 else b'{"error": "try later"}'
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(answer)


@contextmanager
def http_receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    handler = type("Handler", (_Handler,), {"receiver": receiver})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        if receiver.hold is not None:
            receiver.hold.set()
        server.shutdown()
        server.server_close()


# -- SMTP ---------------------------------------------------------------------------------
@dataclass
class Mailbox:
    port: int = 0
    messages: list[Any] = field(default_factory=list)  # email.message.EmailMessage
    logins: list[str] = field(default_factory=list)
    tls: list[bool] = field(default_factory=list)  # whether each mail came over TLS


def self_signed(folder: Path, host: str = "localhost") -> tuple[Path, Path]:
    """A certificate for `host` and its key, made now by the `openssl` command."""
    if shutil.which("openssl") is None:
        raise RuntimeError("the openssl command is needed to make a test certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            f"/CN={host}",
            "-addext",
            f"subjectAltName=DNS:{host}",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@contextmanager
def smtp_server(
    *, starttls: tuple[Path, Path] | None = None, password: str | None = None
) -> Iterator[Mailbox]:
    """An aiosmtpd server on localhost; with `starttls` (cert, key) it offers STARTTLS and
    requires it before AUTH; with `password` it takes AUTH PLAIN/LOGIN with it."""
    from email import message_from_bytes, policy

    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult, LoginPassword

    box = Mailbox()

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            box.messages.append(message_from_bytes(envelope.content, policy=policy.default))
            box.tls.append(session.ssl is not None)
            return "250 OK"

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        if isinstance(data, LoginPassword) and data.password.decode() == password:
            box.logins.append(data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)

    context = None
    if starttls is not None:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(starttls[0]), str(starttls[1]))
    (port,) = free_ports(1)
    controller = Controller(
        Handler(),
        hostname="localhost",
        port=port,
        tls_context=context,
        require_starttls=context is not None,
        authenticator=authenticate if password else None,
        auth_require_tls=context is not None,
        auth_exclude_mechanism=["CRAM-MD5"] if password else None,
    )
    controller.start()
    box.port = port
    try:
        yield box
    finally:
        controller.stop()
