"""`laketx serve` is listening when it says so: a client that connects the moment it reads
"listening on" is queued until the server accepts, never refused (a test that did so failed
once in CI with "connection refused")."""

from __future__ import annotations

import re
import signal
import socket
from pathlib import Path

import pytest

from openlaketx.config import LakehouseConfig
from openlaketx.service.serve import serve

pytestmark = [pytest.mark.server]


class _Said(Exception):
    """Stops `serve` right after its announcement, before uvicorn runs."""


def test_the_port_is_listening_when_serve_announces_it(tmp_path: Path) -> None:
    connected: list[int] = []

    def announce(line: str) -> None:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/api/v1", line)
        assert found, line
        port = int(found.group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=5):  # refused if not
            connected.append(port)
        raise _Said

    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with pytest.raises(_Said):
            serve(
                LakehouseConfig.from_env(home=tmp_path / "home"),
                port=0,
                scheduler_every=0,
                warm_spark=False,
                announce=announce,
            )
    finally:
        for sig, handler in handlers.items():  # serve installs its own for the drain
            signal.signal(sig, handler)
    assert len(connected) == 1
