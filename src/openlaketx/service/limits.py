"""A cap on request bodies (ASGI middleware): a body over the limit gets 413 before a route
reads it, whether it says its length or streams it."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openlaketx.service.problems import MEDIA_TYPE


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(scope, send, self.limit)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except _TooLarge:
            if not started:
                await _too_large(scope, send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(scope: Scope, send: Send, limit: int) -> None:
    body: dict[str, Any] = {
        "type": "https://openlaketx.dev/problems/payloadtoolarge",
        "title": "PayloadTooLarge",
        "status": 413,
        "detail": f"the request body is over {limit} bytes",
        "instance": scope.get("path", ""),
        "fix": "send a smaller body",
    }
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", MEDIA_TYPE.encode()),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
