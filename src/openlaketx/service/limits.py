"""A cap on request bodies (ASGI middleware): a body over the limit gets 413 before a route
sees any of it, whether it says its length or streams it in chunks.

The body is read here, up to the limit, and handed to the app whole: a route's own body
parsing never meets a body cut short (FastAPI would call that a malformed body, 400).

An oversized body is read on and discarded (up to `DRAIN_LIMIT`) before the 413 is sent: a
server that closes a connection with unread bytes in it makes the kernel reset it, and a client
still sending can lose the answer it was already sent. Past `DRAIN_LIMIT`, the answer is sent
at once and the connection closed.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openlaketx.service.problems import MEDIA_TYPE, Problem

DRAIN_LIMIT = 32 * 1024 * 1024


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int | Callable[[str], int]) -> None:
        self.app = app
        self.limit_of = limit if callable(limit) else (lambda _path, n=limit: n)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_of(scope.get("path", ""))
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            if declared.isdigit() and int(declared) <= DRAIN_LIMIT:
                await _drain(receive, 0)
            await _too_large(scope, send, limit)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left: nobody to answer
            body += message.get("body", b"")
            if len(body) > limit:
                if message.get("more_body", False):
                    await _drain(receive, len(body))
                await _too_large(scope, send, limit)
                return
            more = bool(message.get("more_body", False))
        whole: Message | None = {"type": "http.request", "body": bytes(body), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()  # after the body: only a disconnect comes

        await self.app(scope, replay, send)


async def _drain(receive: Receive, read: int) -> None:
    """Read and discard the rest of a body, up to `DRAIN_LIMIT` bytes in all."""
    while read <= DRAIN_LIMIT:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        read += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _too_large(scope: Scope, send: Send, limit: int) -> None:
    body = Problem(
        type="https://openlaketx.dev/problems/payloadtoolarge",
        title="PayloadTooLarge",
        status=413,
        detail=f"the request body is over {limit} bytes",
        instance=scope.get("path", ""),
        fix="send a smaller body",
    )
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", MEDIA_TYPE.encode()),
                (b"content-length", str(len(data)).encode()),
                (b"connection", b"close"),  # the rest of the body is not read
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
