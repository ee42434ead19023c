"""The service's Spark session, started at start-up in the background so that the first run
does not pay for the JVM (docs/service.md). `/health` says how far it got.

Starting the JVM is not all a first run pays: the first staging write, footer read, rule
count, delta-rs publish, small merge and metadata commits each load code (Python modules, JVM
classes, DataFusion) the first time. So the warm-up also runs a tiny governed job, twice (an
append, then a merge), on a throwaway lakehouse in a temporary folder, with the service's own
session; nothing of it is kept.
"""

from __future__ import annotations

import logging
import tempfile
import threading
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

from lakeguard.words.errors import describe
from openlaketx.config import DEFAULT_TENANT, LakehouseConfig
from openlaketx.lakehouse import Lakehouse
from openlaketx.spark import get_or_create_session, warm_up

WARM_UP_PROJECT = """
version: 1
source_systems: [{id: warm, options: {root: landing}}]
source_objects:
  - {id: warm_csv, system: warm, locator: "*.csv", options: {header: "true"},
     dataset: bronze_warm, columns: [{name: id, type: bigint}, {name: amount, type: double}]}
datasets:
  - {id: bronze_warm, layer: bronze}
  - {id: silver_warm, layer: silver, parents: [bronze_warm], load_type: merge,
     business_keys: [id]}
rules:
  - {id: warm_amount, dataset: bronze_warm, type: RANGE, column: amount, min: 0, severity: FAIL}
  - {id: warm_unique, dataset: silver_warm, type: UNIQUE, columns: [id], severity: FAIL}
jobs:
  - id: warm_job
    tasks: [{id: b, dataset: bronze_warm}, {id: s, dataset: silver_warm, depends_on: [b]}]
"""


def governed_warm_up(config: LakehouseConfig, folder: Path) -> None:
    """Run a tiny two-dataset job twice (append, then merge) on a throwaway lakehouse in
    `folder`, through this process's Spark session (its metadata local, whatever `config`
    says)."""
    landing = folder / "landing"
    landing.mkdir(parents=True)
    (folder / "warm.yaml").write_text(WARM_UP_PROJECT, encoding="utf-8")
    local = config.model_copy(
        update={
            "home": folder / "home",
            "metadata_home": None,
            "warehouse_home": None,
            "tenant": DEFAULT_TENANT,
        }
    )
    lh = Lakehouse.open(local)
    lh.apply(folder / "warm.yaml")
    for n, rows in enumerate(("1,1.5\n2,2.5\n", "2,3.5\n3,4.5\n")):
        (landing / f"d{n}.csv").write_text("id,amount\n" + rows, encoding="utf-8")
        result = lh.run("warm_job", triggered_by="warm-up")
        if result.status != "COMPLETED":
            raise RuntimeError(f"the governed warm-up ended {result.status}: {result.error}")


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

    def start(self, config: LakehouseConfig, *, then: Callable[[], object] | None = None) -> None:
        """Start the session and warm it, in a thread; `then` runs on it once Spark is warm,
        before `/health` says ready (the service warms its tenants' lakehouses)."""
        self.state = SparkState.STARTING
        threading.Thread(
            target=self._run, args=(config, then), name="laketx-spark-warmup", daemon=True
        ).start()

    def wait(self, timeout: float | None = None) -> SparkState:
        """The state once the warm-up has ended (or `timeout` passed)."""
        self._done.wait(timeout)
        return self.state

    def _run(self, config: LakehouseConfig, then: Callable[[], object] | None) -> None:
        log = logging.getLogger("laketx.serve")
        try:
            spark = get_or_create_session(config)
            with tempfile.TemporaryDirectory(prefix="laketx-warm-up-") as folder:
                warm_up(spark, Path(folder))
                governed_warm_up(config, Path(folder) / "governed")
            if then is not None:
                try:
                    then()
                except Exception as exc:  # Spark is warm: a run opens what this could not
                    log.warning("warming the lakehouses failed: %s", describe(exc))
            self.state = SparkState.READY
            log.info("Spark is warm")
        except Exception as exc:  # the service still serves; a run starts Spark itself
            self.state = SparkState.FAILED
            log.error("Spark warm-up failed: %s", describe(exc))
        finally:
            self._done.set()
