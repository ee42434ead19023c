"""The service's Spark session, started at start-up in the background so that the first run
does not pay for the JVM (docs/service.md). `/health` says how far it got."""

from __future__ import annotations

import logging
import tempfile
import threading
from enum import StrEnum
from pathlib import Path

from lakeguard.errors import describe
from openlaketx.config import LakehouseConfig
from openlaketx.spark import get_or_create_session, warm_up


class SparkState(StrEnum):
    """Where the process's Spark session stands, as `/health` reports it."""

    ON_DEMAND = "on_demand"  # not warmed: the first run starts it
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"  # the warm-up failed: the first run tries again, and says why


class SparkWarmup:
    """Starts the process's one SparkSession in a thread and runs a few rows through it."""

    def __init__(self) -> None:
        self.state = SparkState.ON_DEMAND
        self._done = threading.Event()

    def start(self, config: LakehouseConfig) -> None:
        self.state = SparkState.STARTING
        threading.Thread(
            target=self._run, args=(config,), name="laketx-spark-warmup", daemon=True
        ).start()

    def wait(self, timeout: float | None = None) -> SparkState:
        """The state once the warm-up has ended (or `timeout` passed)."""
        self._done.wait(timeout)
        return self.state

    def _run(self, config: LakehouseConfig) -> None:
        log = logging.getLogger("laketx.serve")
        try:
            spark = get_or_create_session(config)
            with tempfile.TemporaryDirectory(prefix="laketx-warm-up-") as folder:
                warm_up(spark, Path(folder))
            self.state = SparkState.READY
            log.info("Spark is warm")
        except Exception as exc:  # the service still serves; a run starts Spark itself
            self.state = SparkState.FAILED
            log.error("Spark warm-up failed: %s", describe(exc))
        finally:
            self._done.set()
