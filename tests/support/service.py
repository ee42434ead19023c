"""A real `laketx serve` app on uvicorn, on 127.0.0.1 and an ephemeral port, for the tests.

It runs in a thread of the test process so that it shares the suite's one SparkSession; the
client is a real HTTP client (httpx) talking to the socket.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lakeguard.actors.keys import Scope
from openlaketx.config import LakehouseConfig
from openlaketx.service.app import create_app
from openlaketx.service.runs import RunService
from openlaketx.service.serve import server_config
from openlaketx.service.tenants import Tenants
from openlaketx.settings import ServiceSettings
from tests.support.environment import TEST_CONF

ALL = (Scope.RUNS_TRIGGER, Scope.RUNS_READ, Scope.KEYS_ADMIN, Scope.DEFINITIONS_WRITE)


class ManualClock:
    """A clock the tests move by hand: the brakes' and budgets' monotonic time, and the wall
    clock a webhook's timestamp is compared with."""

    def __init__(self) -> None:
        self.offset = 0.0

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def wall(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Served:
    url: str
    home: Path
    tenants: Tenants
    runs: RunService
    brake: Any  # the app's FailureBrake: every test client is 127.0.0.1
    rates: Any  # the app's RateLimiter
    clock: ManualClock

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def key(self, tenant: str = "default", scopes: tuple[Scope, ...] = ALL) -> str:
        _, token = self.tenants.keys.create(tenant, scopes, description="test")
        return token

    def wait_for(self, token: str, run_id: str, timeout: float = 600) -> dict[str, Any]:
        """Long-poll a run until it ends; its detail."""
        deadline = time.monotonic() + timeout
        with self.client(token) as client:
            while (left := deadline - time.monotonic()) > 0:
                wait = {"wait": min(30.0, left)}
                detail = client.get(f"/api/v1/runs/{run_id}", params=wait).json()
                if detail.get("status") in ("COMPLETED", "BLOCKED", "FAILED"):
                    return dict(detail)
        raise AssertionError(f"run {run_id} did not end in {timeout} s")


@contextlib.contextmanager
def serving(
    home: Path, *, workers: int = 2, settings: ServiceSettings | None = None
) -> Iterator[Served]:
    import uvicorn

    settings = settings or ServiceSettings(body_limit=4096)
    config = LakehouseConfig.from_env(home=home, master="local[2]", spark_conf=TEST_CONF)
    tenants = Tenants(config, settings)
    runs = RunService(
        tenants,
        workers=workers,
        concurrent_runs=lambda tenant: settings.limits_of(tenant).concurrent_runs,
    )
    clock = ManualClock()
    app = create_app(runs, settings, clock=clock.monotonic, wall_clock=clock.wall)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(server_config(app))  # as `laketx serve` configures it
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield Served(
            f"http://127.0.0.1:{port}",
            home,
            tenants,
            runs,
            app.state.brake,
            app.state.rates,
            clock,
        )
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        runs.drain(600)
