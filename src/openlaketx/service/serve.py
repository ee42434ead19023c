"""`laketx serve`: the API on uvicorn, the scheduler and the alert dispatcher beside it, one
warm Spark session
(started at start-up, in the background).

SIGTERM (or Ctrl-C) drains: the server stops accepting connections, the scheduler stops, runs
in flight finish (up to `drain_timeout`), runs accepted but not started are recorded FAILED,
and every lease is given back as its run ends.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from lakeguard.actors.catalog.watch import FolderWatcher
from lakeguard.words.errors import describe
from lakeguard.words.schedule import CatchUp
from openlaketx.config import LakehouseConfig
from openlaketx.service.app import create_app
from openlaketx.service.dispatcher import Dispatcher
from openlaketx.service.runs import RunService
from openlaketx.service.scheduler import Scheduler
from openlaketx.service.tenants import Tenants
from openlaketx.service.warmup import SparkWarmup
from openlaketx.settings import ServiceSettings


def serve(
    config: LakehouseConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    workers: int = 2,
    scheduler_every: float = 5.0,
    notify_every: float = 5.0,
    catch_up: CatchUp = CatchUp.LATEST,
    drain_timeout: float = 300.0,
    watch: Path | None = None,
    watch_deactivate_missing: bool = False,
    settings: ServiceSettings | None = None,
    warm_spark: bool = True,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve until a signal asks to stop; returns once drained. With `watch`, the YAML
    documents of that folder are kept applied to the served tenant (`laketx watch`). With
    `warm_spark`, Spark starts now, beside the server, instead of in the first run."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = settings or ServiceSettings()
    tenants = Tenants(config, settings)
    runs = RunService(
        tenants,
        workers=workers,
        concurrent_runs=lambda tenant: settings.limits_of(tenant).concurrent_runs,
    )
    warmup = SparkWarmup()
    if warm_spark:
        warmup.start(config, then=tenants.warm)
    app = create_app(runs, settings, spark=warmup)
    scheduler = Scheduler(runs, catch_up=catch_up)
    if scheduler_every > 0:
        threading.Thread(
            target=scheduler.loop, args=(scheduler_every,), name="laketx-scheduler", daemon=True
        ).start()
    dispatcher = Dispatcher(tenants, settings)
    if notify_every > 0:  # alerts, delivered beside the runs, never inside one
        threading.Thread(
            target=dispatcher.loop, args=(notify_every,), name="laketx-notify", daemon=True
        ).start()
    stopping = threading.Event()
    if watch is not None:
        watcher = tenants.get(config.tenant).watcher(
            watch, deactivate_missing=watch_deactivate_missing
        )
        threading.Thread(
            target=_watch_loop,
            args=(watcher, max(scheduler_every, 1.0), stopping),
            name="laketx-watch",
            daemon=True,
        ).start()
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it every keep-alive response waits ~40 ms for a delayed ACK
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    server = uvicorn.Server(server_config(app))
    # listening before "listening on" is said: a client that connects as soon as it reads the
    # line waits in the backlog until uvicorn accepts, instead of being refused
    sock.listen(server.config.backlog)
    # uvicorn re-raises the stopping signal once it has shut down, which would end the process
    # before the drain: this process handles SIGTERM and SIGINT itself
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]

    def stop(signum: int, frame: object) -> None:
        server.should_exit = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    announce(
        f"laketx serve: listening on http://{host}:{bound}/api/v1, dashboard at "
        f"http://{host}:{bound}/ (home {config.home})"
    )
    try:
        server.run(sockets=[sock])
    finally:
        announce("laketx serve: draining (no new runs; runs in flight finish)")
        scheduler.stop()
        dispatcher.stop()
        stopping.set()
        runs.drain(drain_timeout)
        announce("laketx serve: stopped")


def server_config(app: FastAPI) -> uvicorn.Config:
    """How uvicorn serves the app: no access log (a request line could carry what a client
    should never have sent), no `Server` banner, and no X-Forwarded-For believed by uvicorn
    itself (the app believes it from its configured trusted proxies only)."""
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        proxy_headers=False,
    )


def _watch_loop(watcher: FolderWatcher, every: float, stopping: threading.Event) -> None:
    """A watcher pass every `every` seconds until the server stops (a failed pass is logged;
    the next one tries again)."""
    log = logging.getLogger("laketx.watch")
    while not stopping.wait(every):
        try:
            for result in watcher.sync():
                log.info(
                    "watch: %s %s (%d changes)", result.outcome, result.file, len(result.changes)
                )
        except Exception as exc:
            log.error("watch pass failed: %s", describe(exc))
